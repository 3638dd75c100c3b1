package pgas_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas"
)

// runJob runs fn on every rank of an in-process job and fails the test if
// the job fails. Segments are small and waits bounded so that a bug shows
// as an error, not a hang.
func runJob(t *testing.T, cfg pgas.Config, fn func(ctx context.Context, r *pgas.Rank) error) {
	t.Helper()
	if err := runJobErr(t, cfg, fn); err != nil {
		t.Fatal(err)
	}
}

func runJobErr(t *testing.T, cfg pgas.Config, fn func(ctx context.Context, r *pgas.Rank) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if cfg.SegmentBytes == 0 {
		cfg.SegmentBytes = 1 << 20
	}
	if cfg.SyncTimeout == 0 {
		cfg.SyncTimeout = 20 * time.Second
	}
	return pgas.Run(ctx, cfg, fn)
}

// checker reports mismatches seen by one rank through t (which is safe
// for concurrent use), at most a few per rank, and keeps going so that
// every rank stays in step with the barriers.
type checker struct {
	t    *testing.T
	rank int
	n    atomic.Int32
}

func newChecker(t *testing.T, rank int) *checker { return &checker{t: t, rank: rank} }

func (c *checker) errorf(format string, args ...any) {
	c.t.Helper()
	if c.n.Add(1) > 8 {
		return
	}
	c.t.Errorf("rank %d: "+format, append([]any{c.rank}, args...)...)
}

func mustPanic(c *checker, what string, f func()) {
	c.t.Helper()
	defer func() {
		if recover() == nil {
			c.errorf("%s did not panic", what)
		}
	}()
	f()
}

// Element types of different sizes and alignments.
type pair struct {
	A int32
	B float64
}

type tri = [3]int16

func mkInt64(i, salt int64) int64 { return salt*1_000_003 + i*7 + 1 }
func mkPair(i, salt int64) pair {
	return pair{A: int32(i*3 + salt), B: float64(i) + 0.5 + float64(salt)*1000}
}
func mkTri(i, salt int64) tri { return tri{int16(i), int16(salt), int16(i*5 + salt)} }

func esize[T any]() int64 { return int64(unsafe.Sizeof(*new(T))) }

// ptrOracle is the pointer-to-shared of every index in [0, n] of an array
// declared shared [blk] T[n] on p ranks starting at first, at region
// offset off: element i of a block-cyclic array sits where the dealing
// oracle puts it, and the one-past-the-end pointer where element n of the
// same layout would be.
func ptrOracle(n, blk int64, p, first int, off, esz int64) []pgas.Ptr {
	d := deal(n+1, blk, p, first)
	ps := make([]pgas.Ptr, n+1)
	for i := range ps {
		ps[i] = pgas.Ptr{Rank: d.owner[i], Phase: d.phase[i], Off: off + d.local[i]*esz}
	}
	return ps
}

// checkPtrArith checks PtrTo, Add and IndexOf of a against want (from
// ptrOracle) with random and walking offsets.
func checkPtrArith[T any](c *checker, a *pgas.Array[T], want []pgas.Ptr, rng *rand.Rand) {
	n := a.Len()
	for i := int64(0); i <= n; i++ {
		if got := a.PtrTo(i); got != want[i] {
			c.errorf("n=%d blk=%d: PtrTo(%d) = %+v; want %+v", n, a.Layout().Block, i, got, want[i])
		}
		if got := a.IndexOf(want[i]); got != i {
			c.errorf("n=%d blk=%d: IndexOf(%+v) = %d; want %d", n, a.Layout().Block, want[i], got, i)
		}
	}
	// Walk up and down one element at a time.
	p := a.PtrTo(0)
	for i := int64(1); i <= n; i++ {
		p = a.Add(p, 1)
		if p != want[i] {
			c.errorf("n=%d blk=%d: walking up, Add(.., 1) to %d = %+v; want %+v", n, a.Layout().Block, i, p, want[i])
			break
		}
	}
	for i := n - 1; i >= 0; i-- {
		p = a.Add(p, -1)
		if p != want[i] {
			c.errorf("n=%d blk=%d: walking down, Add(.., -1) to %d = %+v; want %+v", n, a.Layout().Block, i, p, want[i])
			break
		}
	}
	// Random jumps, forward and backward, to any index in [0, n].
	for range 200 {
		i := rng.Int64N(n + 1)
		j := rng.Int64N(n + 1)
		k := j - i
		if got := a.Add(a.PtrTo(i), k); got != want[j] {
			c.errorf("n=%d blk=%d: Add(PtrTo(%d), %d) = %+v; want PtrTo(%d) = %+v", n, a.Layout().Block, i, k, got, j, want[j])
		}
		if got := a.IndexOf(a.Add(want[i], k)); got != j {
			c.errorf("n=%d blk=%d: IndexOf(Add(PtrTo(%d), %d)) = %d; want %d", n, a.Layout().Block, i, k, got, j)
		}
	}
	if got := a.Add(want[n], 0); got != want[n] {
		c.errorf("Add(PtrTo(%d), 0) = %+v; want %+v", n, got, want[n])
	}
	mustPanic(c, fmt.Sprintf("PtrTo(%d) of %d elements", n+1, n), func() { a.PtrTo(n + 1) })
	mustPanic(c, "PtrTo(-1)", func() { a.PtrTo(-1) })
}

func ptrArithRun[T any](t *testing.T, p int) {
	ns := []int64{0, 1, 10, 37, 64}
	blks := []int64{pgas.Cyclic, 2, 5, 16, pgas.Star, pgas.Indefinite}
	runJob(t, pgas.Config{Ranks: p}, func(ctx context.Context, r *pgas.Rank) error {
		c := newChecker(t, r.ID())
		rng := rand.New(rand.NewPCG(uint64(p), uint64(r.ID())))
		esz := esize[T]()
		for _, n := range ns {
			for _, blk := range blks {
				a, err := pgas.AllAllocArray[T](ctx, r, n, blk)
				if err != nil {
					return err
				}
				if got := a.Layout().First; got != 0 {
					c.errorf("AllAllocArray(%d, %d).Layout().First = %d; want 0", n, blk, got)
				}
				want := ptrOracle(n, effBlock(n, blk, p), p, 0, a.Ref().Region.Off, esz)
				checkPtrArith(c, a, want, rng)
			}
		}
		// Hand-made layouts dealt from a rank other than 0.
		for _, n := range ns {
			for _, blk := range []int64{1, 3, 8} {
				first := (1 + int(n)) % p
				a, err := allocFirst[T](ctx, r, n, blk, first)
				if err != nil {
					return err
				}
				want := ptrOracle(n, blk, p, first, a.Ref().Region.Off, esz)
				checkPtrArith(c, a, want, rng)
			}
		}
		// AllocArray: shared [] T[n] with affinity to the caller.
		for _, n := range []int64{0, 1, 9, 50} {
			a, err := pgas.AllocArray[T](ctx, r, n)
			if err != nil {
				return err
			}
			l := a.Layout()
			if l.First != r.ID() || l.Block != max(n, 1) || l.N != n || l.Ranks != p {
				c.errorf("AllocArray(%d).Layout() = %+v; want {N:%d Block:%d Ranks:%d First:%d}", n, l, n, max(n, 1), p, r.ID())
			}
			if reg := a.Ref().Region; reg.Owner != r.ID() || reg.Symmetric() {
				c.errorf("AllocArray(%d) region %+v; want a local region of rank %d", n, reg, r.ID())
			}
			if got := int64(len(a.Local())); got != n {
				c.errorf("len(AllocArray(%d).Local()) = %d; want %d", n, got, n)
			}
			for i := int64(0); i < n; i++ {
				if got := a.PtrTo(i); got.Rank != r.ID() || got.Phase != i {
					c.errorf("AllocArray(%d).PtrTo(%d) = %+v; want rank %d phase %d", n, i, got, r.ID(), i)
				}
			}
			want := ptrOracle(n, max(n, 1), p, r.ID(), a.Ref().Region.Off, esz)
			checkPtrArith(c, a, want, rng)
			if err := a.Free(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestArrayPtrArith(t *testing.T) {
	for _, p := range []int{1, 2, 3, 4, 7} {
		t.Run(fmt.Sprintf("P=%d/int64", p), func(t *testing.T) { ptrArithRun[int64](t, p) })
		t.Run(fmt.Sprintf("P=%d/[3]int16", p), func(t *testing.T) { ptrArithRun[tri](t, p) })
		t.Run(fmt.Sprintf("P=%d/struct", p), func(t *testing.T) { ptrArithRun[pair](t, p) })
	}
}

// randRange returns a random [lo, hi) inside [0, n), biased towards long
// ranges that span blocks and ranks.
func randRange(rng *rand.Rand, n int64) (int64, int64) {
	if n == 0 {
		return 0, 0
	}
	lo := rng.Int64N(n + 1)
	hi := lo + rng.Int64N(n-lo+1)
	if rng.IntN(4) == 0 {
		lo, hi = 0, n
	}
	return lo, hi
}

type accessCase struct {
	n, blk  int64 // of array a
	n2, bl2 int64 // of array b, the other side of Copy
	frag    int64 // Config.FragmentBytes, 0 for the default
	first   int   // > 0: a is dealt from rank first % P (opened from a ref)
}

// allocFirst allocates shared [blk] T[n] dealt from rank first (not 0),
// which NewLayout only makes for Indefinite, by opening a hand-made
// ArrayRef over a symmetric region.
func allocFirst[T any](ctx context.Context, r *pgas.Rank, n, blk int64, first int) (*pgas.Array[T], error) {
	lay := pgas.Layout{N: n, Block: blk, Ranks: r.N(), First: first}
	reg, err := r.AllAlloc(ctx, lay.LocalCap()*esize[T]())
	if err != nil {
		return nil, err
	}
	return pgas.OpenArray[T](r, pgas.ArrayRef{Layout: lay, Region: reg})
}

// checkArray compares every element of a with want, through Get, a whole
// GetRange, two overlapping GetRangeAsync and the local partition.
func checkArray[T comparable](ctx context.Context, c *checker, name string, a *pgas.Array[T], want []T, o dealt, rng *rand.Rand) error {
	me := c.rank
	n := a.Len()
	for i := range n {
		v, err := a.Get(ctx, i)
		if err != nil {
			return err
		}
		if v != want[i] {
			c.errorf("%s: Get(%d) = %v; want %v", name, i, v, want[i])
		}
	}
	all := make([]T, n)
	if err := a.GetRange(ctx, all, 0); err != nil {
		return err
	}
	for i := range all {
		if all[i] != want[i] {
			c.errorf("%s: GetRange(all)[%d] = %v; want %v", name, i, all[i], want[i])
		}
	}
	for range 6 {
		lo, hi := randRange(rng, n)
		mid := lo + (hi-lo)/2
		x, y := make([]T, mid-lo), make([]T, hi-mid)
		h1 := a.GetRangeAsync(ctx, x, lo)
		h2 := a.GetRangeAsync(ctx, y, mid)
		if err := h2.Wait(ctx); err != nil {
			return err
		}
		if err := h1.Wait(ctx); err != nil {
			return err
		}
		for k := range x {
			if x[k] != want[lo+int64(k)] {
				c.errorf("%s: GetRangeAsync([%d,%d))[%d] = %v; want %v", name, lo, mid, k, x[k], want[lo+int64(k)])
			}
		}
		for k := range y {
			if y[k] != want[mid+int64(k)] {
				c.errorf("%s: GetRangeAsync([%d,%d))[%d] = %v; want %v", name, mid, hi, k, y[k], want[mid+int64(k)])
			}
		}
	}
	loc := a.Local()
	if int64(len(loc)) != int64(len(o.global[me])) {
		c.errorf("%s: len(Local()) = %d; want %d", name, len(loc), len(o.global[me]))
		return nil
	}
	for li, g := range o.global[me] {
		if loc[li] != want[g] {
			c.errorf("%s: Local()[%d] (element %d) = %v; want %v", name, li, g, loc[li], want[g])
		}
	}
	return nil
}

// checkOwnership checks ForAll and MyBlocks against the dealing oracle.
func checkOwnership[T any](c *checker, name string, a *pgas.Array[T], o dealt) {
	me := c.rank
	var got []int64
	for i := range a.ForAll() {
		got = append(got, i)
	}
	if fmt.Sprint(got) != fmt.Sprint(o.global[me]) {
		c.errorf("%s: ForAll() = %v; want %v", name, got, o.global[me])
	}
	// Blocks: maximal runs of my elements that start at phase 0.
	type blk struct{ start, n int64 }
	var want []blk
	for _, g := range o.global[me] {
		if o.phase[g] == 0 {
			want = append(want, blk{g, 0})
		}
		want[len(want)-1].n++
	}
	var have []blk
	loc := a.Local()
	var li int64
	for start, b := range a.MyBlocks() {
		have = append(have, blk{start, int64(len(b))})
		if len(b) > 0 && (li >= int64(len(loc)) || &b[0] != &loc[li]) {
			c.errorf("%s: MyBlocks block at %d is not Local()[%d:]", name, start, li)
		}
		li += int64(len(b))
	}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		c.errorf("%s: MyBlocks() (start, len) = %v; want %v", name, have, want)
	}
	// Stopping early must be honoured.
	for range a.MyBlocks() {
		break
	}
	for range a.ForAll() {
		break
	}
}

func accessRun[T comparable](t *testing.T, p int, tc accessCase, mk func(i, salt int64) T) {
	oa := dealFor(tc.n, tc.blk, p, 0)
	first := tc.first % p
	if first > 0 {
		oa = deal(tc.n, tc.blk, p, first)
	}
	ob := dealFor(tc.n2, tc.bl2, p, 0)
	runJob(t, pgas.Config{Ranks: p, FragmentBytes: tc.frag}, func(ctx context.Context, r *pgas.Rank) error {
		me := r.ID()
		c := newChecker(t, me)
		var a *pgas.Array[T]
		var err error
		if first > 0 {
			a, err = allocFirst[T](ctx, r, tc.n, tc.blk, first)
		} else {
			a, err = pgas.AllAllocArray[T](ctx, r, tc.n, tc.blk)
		}
		if err != nil {
			return err
		}
		b, err := pgas.AllAllocArray[T](ctx, r, tc.n2, tc.bl2)
		if err != nil {
			return err
		}
		var zero T
		wantA, wantB := make([]T, tc.n), make([]T, tc.n2)
		// Fresh arrays are zero everywhere.
		for i, v := range a.Local() {
			if v != zero {
				c.errorf("fresh a.Local()[%d] = %v; want zero", i, v)
			}
		}
		checkOwnership(c, "a", a, oa)
		checkOwnership(c, "b", b, ob)

		// Every rank writes its own elements, each in one of three ways.
		for i := range wantA {
			wantA[i] = mk(int64(i), 1)
		}
		for i := range wantB {
			wantB[i] = mk(int64(i), 2)
		}
		switch me % 3 {
		case 0: // Put to the elements the oracle says I own.
			for i := range tc.n {
				if oa.owner[i] == me {
					if err := a.Put(ctx, i, wantA[i]); err != nil {
						return err
					}
				}
			}
		case 1: // Through Local and GlobalIndex.
			for li := range a.Local() {
				a.Local()[li] = mk(a.Layout().GlobalIndex(me, int64(li)), 1)
			}
		case 2: // Through MyBlocks.
			for start, blk := range a.MyBlocks() {
				for k := range blk {
					blk[k] = mk(start+int64(k), 1)
				}
			}
		}
		for i := range tc.n2 {
			if ob.owner[i] == me {
				if err := b.Put(ctx, i, wantB[i]); err != nil {
					return err
				}
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		readRng := rand.New(rand.NewPCG(7, uint64(me)))
		if err := checkArray(ctx, c, "a after owner writes", a, wantA, oa, readRng); err != nil {
			return err
		}
		if err := checkArray(ctx, c, "b after owner writes", b, wantB, ob, readRng); err != nil {
			return err
		}
		mustPanic(c, fmt.Sprintf("Get(%d) of %d elements", tc.n, tc.n), func() { _, _ = a.Get(ctx, tc.n) })
		mustPanic(c, "Get(-1)", func() { _, _ = a.Get(ctx, -1) })
		mustPanic(c, "Put past the end", func() { _ = a.Put(ctx, tc.n, zero) })
		mustPanic(c, "GetRange past the end", func() { _ = a.GetRange(ctx, make([]T, 2), tc.n-1) })
		if err := r.Barrier(ctx); err != nil {
			return err
		}

		// One rank at a time writes a random range; all check. Every rank
		// draws the same ranges from the same seed and keeps its own copy
		// of the expected contents.
		shared := rand.New(rand.NewPCG(uint64(tc.n*131+tc.blk), uint64(p)))
		for round := range 12 {
			writer := round % p
			salt := int64(10 + round)
			op := round % 6
			var desc string
			err = nil
			switch op {
			case 0, 1: // PutRange, PutRangeAsync on a
				lo, hi := randRange(shared, tc.n)
				src := make([]T, hi-lo)
				for k := range src {
					src[k] = mk(lo+int64(k), salt)
				}
				copy(wantA[lo:hi], src)
				desc = fmt.Sprintf("rank %d PutRange(a, [%d,%d))", writer, lo, hi)
				if me == writer {
					if op == 0 {
						err = a.PutRange(ctx, lo, src)
					} else {
						h1 := a.PutRangeAsync(ctx, lo, src[:len(src)/2])
						h2 := a.PutRangeAsync(ctx, lo+int64(len(src)/2), src[len(src)/2:])
						err = h1.Wait(ctx)
						if e := h2.Wait(ctx); err == nil {
							err = e
						}
					}
				}
			case 2: // Set on b
				lo, hi := randRange(shared, tc.n2)
				v := mk(-1, salt)
				for i := lo; i < hi; i++ {
					wantB[i] = v
				}
				desc = fmt.Sprintf("rank %d Set(b, [%d,%d))", writer, lo, hi)
				if me == writer {
					err = b.Set(ctx, lo, hi-lo, v)
				}
			case 3, 4: // Copy a -> b or b -> a
				dst, src, wd, ws := b, a, wantB, wantA
				if op == 4 {
					dst, src, wd, ws = a, b, wantA, wantB
				}
				m := min(dst.Len(), src.Len())
				k := shared.Int64N(m + 1)
				ss := shared.Int64N(src.Len() - k + 1)
				ds := shared.Int64N(dst.Len() - k + 1)
				copy(wd[ds:ds+k], ws[ss:ss+k])
				desc = fmt.Sprintf("rank %d Copy(dst [%d,%d), src [%d,%d)) op %d", writer, ds, ds+k, ss, ss+k, op)
				if me == writer {
					err = pgas.Copy(ctx, dst, ds, src, ss, k)
				}
			case 5: // Copy inside a between disjoint ranges
				h := tc.n / 2
				k := shared.Int64N(h + 1)
				ss := shared.Int64N(h - k + 1)
				ds := h + shared.Int64N(tc.n-h-k+1)
				copy(wantA[ds:ds+k], wantA[ss:ss+k])
				desc = fmt.Sprintf("rank %d Copy(a [%d,%d) <- a [%d,%d))", writer, ds, ds+k, ss, ss+k)
				if me == writer {
					err = pgas.Copy(ctx, a, ds, a, ss, k)
				}
			}
			if err != nil {
				return fmt.Errorf("%s: %w", desc, err)
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			if err := checkArray(ctx, c, "a after "+desc, a, wantA, oa, readRng); err != nil {
				return err
			}
			if err := checkArray(ctx, c, "b after "+desc, b, wantB, ob, readRng); err != nil {
				return err
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
		}
		if err := a.AllFree(ctx); err != nil {
			return err
		}
		return b.AllFree(ctx)
	})
}

func TestArrayAccess(t *testing.T) {
	cases := []accessCase{
		{n: 0, blk: pgas.Cyclic, n2: 3, bl2: pgas.Star},
		{n: 1, blk: pgas.Star, n2: 1, bl2: pgas.Indefinite},
		{n: 53, blk: pgas.Cyclic, n2: 60, bl2: 7},
		{n: 53, blk: 4, n2: 41, bl2: pgas.Star, frag: 24},
		{n: 53, blk: pgas.Star, n2: 53, bl2: pgas.Cyclic},
		{n: 47, blk: pgas.Indefinite, n2: 50, bl2: 3, frag: 8},
		{n: 100, blk: 7, n2: 90, bl2: 13},
		{n: 58, blk: 3, n2: 40, bl2: pgas.Cyclic, first: 2},
		{n: 31, blk: 1, n2: 33, bl2: 4, first: 4, frag: 16},
	}
	for _, p := range []int{1, 2, 3, 5, 8} {
		for _, tc := range cases {
			name := fmt.Sprintf("P=%d/n=%d,blk=%d,first=%d/n2=%d,blk2=%d/frag=%d", p, tc.n, tc.blk, tc.first%p, tc.n2, tc.bl2, tc.frag)
			t.Run(name+"/int64", func(t *testing.T) { accessRun(t, p, tc, mkInt64) })
			if tc.n > 50 || tc.frag != 0 {
				t.Run(name+"/struct", func(t *testing.T) { accessRun(t, p, tc, mkPair) })
				t.Run(name+"/[3]int16", func(t *testing.T) { accessRun(t, p, tc, mkTri) })
			}
		}
	}
}

// TestArrayAllocArrayShared has every rank allocate an array in its own
// segment (AllocArray), publish its Ref in a shared array of ArrayRef, and
// read every other rank's array.
func TestArrayAllocArrayShared(t *testing.T) {
	for _, p := range []int{1, 3, 5} {
		t.Run(fmt.Sprintf("P=%d", p), func(t *testing.T) {
			runJob(t, pgas.Config{Ranks: p}, func(ctx context.Context, r *pgas.Rank) error {
				me := r.ID()
				c := newChecker(t, me)
				refs, err := pgas.AllAllocArray[pgas.ArrayRef](ctx, r, int64(p), pgas.Cyclic)
				if err != nil {
					return err
				}
				size := func(q int) int64 { return int64(13 + 5*q) }
				mine, err := pgas.AllocArray[pair](ctx, r, size(me))
				if err != nil {
					return err
				}
				for li := range mine.Local() {
					mine.Local()[li] = mkPair(int64(li), int64(me))
				}
				if err := refs.Put(ctx, int64(me), mine.Ref()); err != nil {
					return err
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				for q := range p {
					ref, err := refs.Get(ctx, int64(q))
					if err != nil {
						return err
					}
					a, err := pgas.OpenArray[pair](r, ref)
					if err != nil {
						return err
					}
					if a.Len() != size(q) || a.Layout().First != q {
						c.errorf("rank %d's array: Len %d, First %d; want %d, %d", q, a.Len(), a.Layout().First, size(q), q)
						continue
					}
					if q != me && len(a.Local()) != 0 {
						c.errorf("rank %d's array: len(Local()) = %d on rank %d; want 0", q, len(a.Local()), me)
					}
					for i := range a.Len() {
						v, err := a.Get(ctx, i)
						if err != nil {
							return err
						}
						if want := mkPair(i, int64(q)); v != want {
							c.errorf("rank %d's array: Get(%d) = %v; want %v", q, i, v, want)
						}
					}
					buf := make([]pair, a.Len()-3)
					if err := a.GetRange(ctx, buf, 2); err != nil {
						return err
					}
					for k, v := range buf {
						if want := mkPair(int64(k+2), int64(q)); v != want {
							c.errorf("rank %d's array: GetRange(.., 2)[%d] = %v; want %v", q, k, v, want)
						}
					}
					n := 0
					for range a.ForAll() {
						n++
					}
					if q == me && int64(n) != a.Len() || q != me && n != 0 {
						c.errorf("rank %d's array: ForAll on rank %d yields %d indices", q, me, n)
					}
				}
				// Everyone writes element me of rank (me+1)%p's array, once
				// all reads are done.
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				q := (me + 1) % p
				ref, err := refs.Get(ctx, int64(q))
				if err != nil {
					return err
				}
				a, err := pgas.OpenArray[pair](r, ref)
				if err != nil {
					return err
				}
				if err := a.Put(ctx, int64(me), pair{A: -1, B: float64(me)}); err != nil {
					return err
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				from := (me - 1 + p) % p
				if got, want := mine.Local()[from], (pair{A: -1, B: float64(from)}); got != want {
					c.errorf("Local()[%d] = %v after rank %d's put; want %v", from, got, from, want)
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				return mine.Free(ctx)
			})
		})
	}
}

// TestOpenArrayRejects checks that OpenArray refuses refs that do not fit.
func TestOpenArrayRejects(t *testing.T) {
	runJob(t, pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		c := newChecker(t, r.ID())
		a, err := pgas.AllAllocArray[int64](ctx, r, 40, 3)
		if err != nil {
			return err
		}
		ref := a.Ref()
		if _, err := pgas.OpenArray[int64](r, ref); err != nil {
			c.errorf("OpenArray(own ref) = %v", err)
		}
		bad := ref
		bad.Layout.N = 1000
		if _, err := pgas.OpenArray[int64](r, bad); err == nil {
			c.errorf("OpenArray of N=1000 over a region for 40 elements succeeded")
		}
		bad = ref
		bad.Layout.Ranks = 3
		if _, err := pgas.OpenArray[int64](r, bad); err == nil {
			c.errorf("OpenArray of a 3-rank ref in a 2-rank job succeeded")
		}
		bad = ref
		bad.Region.Off = r.Config().SegmentBytes - 8
		if _, err := pgas.OpenArray[int64](r, bad); err == nil {
			c.errorf("OpenArray of a region past the segment succeeded")
		}
		if _, err := pgas.OpenArray[string](r, ref); err == nil {
			c.errorf("OpenArray[string] succeeded")
		}
		return a.AllFree(ctx)
	})
}
