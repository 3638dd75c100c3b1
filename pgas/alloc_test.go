package pgas_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
)

// overlaps reports whether [a.Off, a.Off+a.Size) and [b.Off, b.Off+b.Size)
// share a byte.
func overlaps(a, b pgas.Region) bool {
	return a.Size > 0 && b.Size > 0 && a.Off < b.Off+b.Size && b.Off < a.Off+a.Size
}

func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

func firstNonZero(b []byte) int {
	for i, v := range b {
		if v != 0 {
			return i
		}
	}
	return -1
}

func TestAllAllocZeroedAndSymmetric(t *testing.T) {
	const p = 4
	sizes := []int64{1, 64, 100, 4096, 0, 777}
	runJob(t, pgas.Config{Ranks: p}, func(ctx context.Context, r *pgas.Rank) error {
		me := r.ID()
		c := newChecker(t, me)
		seg := r.Segment()
		// offs holds, in rank q's block, the offsets rank q got.
		k := int64(len(sizes))
		offs, err := pgas.AllAllocArray[int64](ctx, r, p*k, k)
		if err != nil {
			return err
		}
		var regs []pgas.Region
		for round := range 2 {
			regs = regs[:0]
			for _, size := range sizes {
				reg, err := r.AllAlloc(ctx, size)
				if err != nil {
					return err
				}
				if reg.Size != size || reg.Owner != -1 || !reg.Symmetric() {
					c.errorf("AllAlloc(%d) = %+v; want Size %d, Owner -1", size, reg, size)
				}
				if reg.Off < 0 || reg.Off+reg.Size > int64(len(seg)) || reg.Off%8 != 0 {
					c.errorf("AllAlloc(%d) = %+v: outside the segment or misaligned", size, reg)
					continue
				}
				if i := firstNonZero(seg[reg.Off : reg.Off+reg.Size]); i >= 0 {
					c.errorf("round %d: AllAlloc(%d) at %d: byte %d is %#x; want zero", round, size, reg.Off, i, seg[reg.Off+int64(i)])
				}
				if o := offs.Ref().Region; overlaps(o, reg) {
					c.errorf("AllAlloc(%d) = %+v overlaps %+v", size, reg, o)
				}
				for _, o := range regs {
					if overlaps(o, reg) {
						c.errorf("AllAlloc(%d) = %+v overlaps %+v", size, reg, o)
					}
				}
				regs = append(regs, reg)
			}
			for i, reg := range regs {
				offs.Local()[i] = reg.Off
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			for q := range p {
				for i := range k {
					got, err := offs.Get(ctx, int64(q)*k+i)
					if err != nil {
						return err
					}
					if got != regs[i].Off {
						c.errorf("AllAlloc(%d) #%d: rank %d got offset %d, rank %d got %d", sizes[i], i, q, got, me, regs[i].Off)
					}
				}
			}
			// Dirty my copy of every region, then free them all; the next
			// round's AllAllocs must hand out zeroed memory again.
			for _, reg := range regs {
				fill(seg[reg.Off:reg.Off+reg.Size], 0xA5)
			}
			for _, reg := range regs {
				if err := r.AllFree(ctx, reg); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func TestGlobalAllocZeroesEveryRank(t *testing.T) {
	const p, size = 3, 3000
	runJob(t, pgas.Config{Ranks: p, FragmentBytes: 1024}, func(ctx context.Context, r *pgas.Rank) error {
		me := r.ID()
		c := newChecker(t, me)
		seg := r.Segment()
		pub, err := pgas.AllAllocArray[pgas.Region](ctx, r, 1, pgas.Indefinite)
		if err != nil {
			return err
		}
		const allocator = 1
		var first pgas.Region
		for round := range 2 {
			if me == allocator {
				if round > 0 {
					if err := r.Free(ctx, first); err != nil {
						return err
					}
				}
				reg, err := r.GlobalAlloc(ctx, size)
				if err != nil {
					return err
				}
				if round == 0 {
					first = reg
				} else if reg.Off != first.Off {
					c.errorf("GlobalAlloc after Free = %+v; want the freed offset %d (first fit)", reg, first.Off)
				}
				if err := pub.Put(ctx, 0, reg); err != nil {
					return err
				}
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			reg, err := pub.Get(ctx, 0)
			if err != nil {
				return err
			}
			if reg.Size != size || !reg.Symmetric() {
				c.errorf("published GlobalAlloc region %+v; want %d symmetric bytes", reg, size)
				return nil
			}
			if overlaps(reg, pub.Ref().Region) {
				c.errorf("GlobalAlloc region %+v overlaps the AllAlloc region %+v", reg, pub.Ref().Region)
			}
			if i := firstNonZero(seg[reg.Off : reg.Off+reg.Size]); i >= 0 {
				c.errorf("round %d: GlobalAlloc region %+v byte %d is %#x on rank %d; want zero", round, reg, i, seg[reg.Off+int64(i)], me)
			}
			fill(seg[reg.Off:reg.Off+reg.Size], byte(0x10+me))
			first = reg
			if err := r.Barrier(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestGlobalAllocArrayPublished: one rank allocates a distributed array,
// publishes its Ref, every rank writes its part, and a re-allocation after
// Free is zero again everywhere.
func TestGlobalAllocArrayPublished(t *testing.T) {
	const p, n, blk = 4, 30, 4
	o := dealFor(n, blk, p, 0)
	runJob(t, pgas.Config{Ranks: p}, func(ctx context.Context, r *pgas.Rank) error {
		me := r.ID()
		c := newChecker(t, me)
		pub, err := pgas.AllAllocArray[pgas.ArrayRef](ctx, r, 1, pgas.Indefinite)
		if err != nil {
			return err
		}
		var mine *pgas.Array[int64]
		for round := range 2 {
			if me == 2 {
				if mine != nil {
					if err := mine.Free(ctx); err != nil {
						return err
					}
				}
				if mine, err = pgas.GlobalAllocArray[int64](ctx, r, n, blk); err != nil {
					return err
				}
				if err := pub.Put(ctx, 0, mine.Ref()); err != nil {
					return err
				}
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			ref, err := pub.Get(ctx, 0)
			if err != nil {
				return err
			}
			a, err := pgas.OpenArray[int64](r, ref)
			if err != nil {
				return err
			}
			if got, want := int64(len(a.Local())), int64(len(o.global[me])); got != want {
				c.errorf("len(Local()) = %d; want %d", got, want)
			}
			for li, v := range a.Local() {
				if v != 0 {
					c.errorf("round %d: Local()[%d] = %d; want 0", round, li, v)
				}
			}
			for li := range a.Local() {
				a.Local()[li] = int64(1000*me + li + 1)
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			for i := range int64(n) {
				v, err := a.Get(ctx, i)
				if err != nil {
					return err
				}
				if want := int64(1000*o.owner[i]) + o.local[i] + 1; v != want {
					c.errorf("Get(%d) = %d; want %d", i, v, want)
				}
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestAllocLocalRegions(t *testing.T) {
	const p = 3
	runJob(t, pgas.Config{Ranks: p}, func(ctx context.Context, r *pgas.Rank) error {
		me := r.ID()
		c := newChecker(t, me)
		seg := r.Segment()
		var sym []pgas.Region
		for _, size := range []int64{100, 5000, 64} {
			reg, err := r.AllAlloc(ctx, size)
			if err != nil {
				return err
			}
			sym = append(sym, reg)
		}
		var local []pgas.Region
		check := func(what string, reg pgas.Region) {
			c.t.Helper()
			if reg.Owner != me || reg.Symmetric() {
				c.errorf("%s = %+v; want Owner %d", what, reg, me)
			}
			if reg.Off < 0 || reg.Off+reg.Size > int64(len(seg)) || reg.Off%8 != 0 {
				c.errorf("%s = %+v: outside the %d-byte segment or misaligned", what, reg, len(seg))
				return
			}
			if i := firstNonZero(seg[reg.Off : reg.Off+reg.Size]); i >= 0 {
				c.errorf("%s = %+v: byte %d is %#x; want zero", what, reg, i, seg[reg.Off+int64(i)])
			}
			for _, o := range sym {
				if overlaps(o, reg) {
					c.errorf("%s = %+v overlaps symmetric %+v", what, reg, o)
				}
			}
			for _, o := range local {
				if overlaps(o, reg) {
					c.errorf("%s = %+v overlaps local %+v", what, reg, o)
				}
			}
		}
		sizes := []int64{1, 63, 64, 65, 1000, 4096, 10, int64(100 * (me + 1))}
		for _, size := range sizes {
			reg, err := r.Alloc(ctx, size)
			if err != nil {
				return err
			}
			if reg.Size < size {
				c.errorf("Alloc(%d) = %+v; want at least %d bytes", size, reg, size)
			}
			check(fmt.Sprintf("Alloc(%d)", size), reg)
			local = append(local, reg)
			fill(seg[reg.Off:reg.Off+reg.Size], 0xEE)
		}
		// Symmetric allocations made after the local heaps grew stay clear
		// of every rank's local heap.
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		for _, size := range []int64{8192, 64} {
			reg, err := r.AllAlloc(ctx, size)
			if err != nil {
				return err
			}
			for _, o := range local {
				if overlaps(o, reg) {
					c.errorf("AllAlloc(%d) = %+v after local allocations overlaps local %+v", size, reg, o)
				}
			}
			sym = append(sym, reg)
		}
		// Free then Alloc of the same size reuses the space, zeroed.
		victim := local[4]
		if err := r.Free(ctx, victim); err != nil {
			return err
		}
		local = append(local[:4], local[5:]...)
		again, err := r.Alloc(ctx, 1000)
		if err != nil {
			return err
		}
		if again.Off != victim.Off {
			c.errorf("Alloc(1000) after freeing %+v = %+v; want the freed offset", victim, again)
		}
		check("Alloc(1000) after Free", again)
		local = append(local, again)
		// Double free and freeing what was never allocated are errors.
		if err := r.Free(ctx, again); err != nil {
			return err
		}
		if err := r.Free(ctx, again); err == nil {
			c.errorf("second Free(%+v) succeeded; want an error", again)
		}
		local = local[:len(local)-1]
		if err := r.Free(ctx, pgas.Region{Off: 64 * 7, Size: 64, Owner: me}); err == nil {
			c.errorf("Free of a never-allocated local region succeeded")
		}
		// Free everything; one allocation of the total fits in the space
		// just released (the free blocks coalesce) instead of growing.
		var total int64
		low := int64(len(seg))
		for _, reg := range local {
			total += reg.Size
			low = min(low, reg.Off)
			if err := r.Free(ctx, reg); err != nil {
				return err
			}
		}
		big, err := r.Alloc(ctx, total)
		if err != nil {
			return err
		}
		if big.Off < low {
			c.errorf("Alloc(%d) after freeing everything = %+v; want it inside the released [%d, %d)", total, big, low, len(seg))
		}
		local = []pgas.Region{}
		check("Alloc(total)", big)
		return r.Free(ctx, big)
	})
}

// TestAllocFreeOrders frees local regions in increasing, decreasing and
// mixed offset order; each time the freed blocks must coalesce so that one
// allocation of their total fits where they were.
func TestAllocFreeOrders(t *testing.T) {
	orders := map[string][]int{
		"increasing": {0, 1, 2, 3, 4},
		"decreasing": {4, 3, 2, 1, 0},
		"mixed":      {1, 3, 0, 4, 2},
	}
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			runJob(t, pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
				c := newChecker(t, r.ID())
				keep, err := r.Alloc(ctx, 64) // stays live, at the top
				if err != nil {
					return err
				}
				regs := make([]pgas.Region, 5)
				for i := range regs {
					if regs[i], err = r.Alloc(ctx, int64(128*(i+1))); err != nil {
						return err
					}
				}
				// Sort by offset so that order indexes offsets.
				slices.SortFunc(regs, func(a, b pgas.Region) int { return int(a.Off - b.Off) })
				var total int64
				for _, i := range order {
					total += regs[i].Size
					if err := r.Free(ctx, regs[i]); err != nil {
						return err
					}
				}
				big, err := r.Alloc(ctx, total)
				if err != nil {
					return err
				}
				if big.Off != regs[0].Off || overlaps(big, keep) {
					c.errorf("Alloc(%d) after freeing %d regions from %d = %+v; want offset %d (coalesced), clear of %+v", total, len(regs), regs[0].Off, big, regs[0].Off, keep)
				}
				if err := r.Free(ctx, big); err != nil {
					return err
				}
				return r.Free(ctx, keep)
			})
		})
	}
}

// TestAllocGrowsOnlyAsNeeded: when the lowest free block of the local heap
// is too small, the heap grows by the difference only, which leaves the
// rest of the segment to the symmetric heap.
func TestAllocGrowsOnlyAsNeeded(t *testing.T) {
	const p = 2
	seg := minSegment(t, p)
	const heap = pgas.MinSegmentBytes
	runJob(t, pgas.Config{Ranks: p, SegmentBytes: seg}, func(ctx context.Context, r *pgas.Rank) error {
		c := newChecker(t, r.ID())
		if r.ID() == 1 {
			a, err := r.Alloc(ctx, 4096)
			if err != nil {
				return err
			}
			if err := r.Free(ctx, a); err != nil {
				return err
			}
			b, err := r.Alloc(ctx, 8192)
			if err != nil {
				return err
			}
			if b.Off+b.Size != a.Off+a.Size {
				c.errorf("Alloc(8192) after freeing %+v = %+v; want it to end where the freed block ended", a, b)
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		_, err := r.AllAlloc(ctx, 1<<20)
		checkOOM(c, "AllAlloc(1 MiB)", err, "AllAlloc", 1<<20, heap-8192)
		return nil
	})
}

// TestAllocConcurrentStress has every rank allocate and free symmetric
// (GlobalAlloc) and local (Alloc) regions at random at the same time, and
// checks that no two live regions ever overlap: each rank stamps its local
// regions and checks the stamp at Free, so a symmetric region zeroed over a
// local one shows; at the end all live regions are published and compared.
func TestAllocConcurrentStress(t *testing.T) {
	const p, ops, maxLive = 4, 80, 40
	runJob(t, pgas.Config{Ranks: p}, func(ctx context.Context, r *pgas.Rank) error {
		me := r.ID()
		c := newChecker(t, me)
		seg := r.Segment()
		pub, err := pgas.AllAllocArray[pgas.Region](ctx, r, p*2*maxLive, 2*maxLive)
		if err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(42, uint64(me)))
		var sym, loc []pgas.Region
		stamp := byte(0x40 + me)
		checkStamp := func(reg pgas.Region) {
			for i, v := range seg[reg.Off : reg.Off+reg.Size] {
				if v != stamp {
					c.errorf("local region %+v: byte %d is %#x; want stamp %#x (overwritten)", reg, i, v, stamp)
					return
				}
			}
		}
		for range ops {
			switch k := rng.IntN(4); {
			case k == 0 && len(sym) < maxLive:
				reg, err := r.GlobalAlloc(ctx, 1+rng.Int64N(3000))
				if err != nil {
					return err
				}
				sym = append(sym, reg)
			case k == 1 && len(sym) > 0:
				i := rng.IntN(len(sym))
				if err := r.Free(ctx, sym[i]); err != nil {
					return err
				}
				sym = slices.Delete(sym, i, i+1)
			case k == 2 && len(loc) < maxLive:
				reg, err := r.Alloc(ctx, 1+rng.Int64N(3000))
				if err != nil {
					return err
				}
				if i := firstNonZero(seg[reg.Off : reg.Off+reg.Size]); i >= 0 {
					c.errorf("Alloc = %+v: byte %d not zero", reg, i)
				}
				for _, o := range loc {
					if overlaps(o, reg) {
						c.errorf("Alloc = %+v overlaps live local %+v", reg, o)
					}
				}
				fill(seg[reg.Off:reg.Off+reg.Size], stamp)
				loc = append(loc, reg)
			case k == 3 && len(loc) > 0:
				i := rng.IntN(len(loc))
				checkStamp(loc[i])
				if err := r.Free(ctx, loc[i]); err != nil {
					return err
				}
				loc = slices.Delete(loc, i, i+1)
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		for _, reg := range loc {
			checkStamp(reg)
		}
		// Publish: my symmetric regions in the first half of my block.
		for i, reg := range sym {
			pub.Local()[i] = reg
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		var all []pgas.Region
		for q := range p {
			buf := make([]pgas.Region, maxLive)
			if err := pub.GetRange(ctx, buf, int64(q*2*maxLive)); err != nil {
				return err
			}
			for _, reg := range buf {
				if reg.Size > 0 {
					all = append(all, reg)
				}
			}
		}
		all = append(all, pub.Ref().Region)
		for i, a := range all {
			for _, b := range all[i+1:] {
				if overlaps(a, b) {
					c.errorf("live symmetric regions %+v and %+v overlap", a, b)
				}
			}
			for _, l := range loc {
				if overlaps(a, l) {
					c.errorf("live symmetric region %+v overlaps my local %+v", a, l)
				}
			}
		}
		return nil
	})
}

func TestFreeErrors(t *testing.T) {
	const p = 3
	runJob(t, pgas.Config{Ranks: p}, func(ctx context.Context, r *pgas.Rank) error {
		me := r.ID()
		c := newChecker(t, me)
		pub, err := pgas.AllAllocArray[pgas.Region](ctx, r, 1, pgas.Indefinite)
		if err != nil {
			return err
		}
		if me == 0 {
			reg, err := r.Alloc(ctx, 200)
			if err != nil {
				return err
			}
			if err := pub.Put(ctx, 0, reg); err != nil {
				return err
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		theirs, err := pub.Get(ctx, 0)
		if err != nil {
			return err
		}
		if me != 0 {
			err := r.Free(ctx, theirs)
			if err == nil {
				c.errorf("rank %d freed rank 0's local region %+v", me, theirs)
			} else if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("rank %d", me)) || !strings.Contains(msg, "rank 0") {
				c.errorf("Free of rank 0's region: error %q does not name rank %d and rank 0", msg, me)
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if me == 0 {
			if err := r.Free(ctx, theirs); err != nil {
				c.errorf("owner's Free(%+v) = %v", theirs, err)
			}
		}
		// Symmetric: freed by one rank; twice is an error.
		if me == 1 {
			reg, err := r.GlobalAlloc(ctx, 128)
			if err != nil {
				return err
			}
			if err := r.Free(ctx, reg); err != nil {
				c.errorf("Free(%+v) = %v", reg, err)
			}
			if err := r.Free(ctx, reg); err == nil {
				c.errorf("second Free of symmetric %+v succeeded", reg)
			}
			if err := r.Free(ctx, pgas.Region{Off: r.Config().SegmentBytes / 2, Size: 64, Owner: -1}); err == nil {
				c.errorf("Free of a never-allocated symmetric region succeeded")
			}
			loc, err := r.Alloc(ctx, 64)
			if err != nil {
				return err
			}
			if err := r.AllFree(ctx, loc); err == nil {
				c.errorf("AllFree of local %+v succeeded", loc)
			}
			if err := r.Free(ctx, loc); err != nil {
				return err
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		// AllFree twice: the second one fails on rank 0.
		reg, err := r.AllAlloc(ctx, 64)
		if err != nil {
			return err
		}
		if err := r.AllFree(ctx, reg); err != nil {
			return err
		}
		err = r.AllFree(ctx, reg)
		if me == 0 && err == nil {
			c.errorf("second AllFree(%+v) succeeded on rank 0", reg)
		}
		return nil
	})
}

// minSegment finds the smallest SegmentBytes that Validate accepts for p
// ranks, by trial.
func minSegment(t *testing.T, p int) int64 {
	t.Helper()
	for s := int64(pgas.MinSegmentBytes); s <= pgas.MinSegmentBytes+1<<20; s += 8 {
		if (pgas.Config{Ranks: p, SegmentBytes: s}).Validate() == nil {
			return s
		}
	}
	t.Fatalf("no valid SegmentBytes for %d ranks up to %d", p, pgas.MinSegmentBytes+1<<20)
	return 0
}

// checkOOM checks that err is an *OutOfMemoryError of op for asked bytes
// with left bytes free (left < 0: any), and that its message gives both.
func checkOOM(c *checker, what string, err error, op string, asked, left int64) int64 {
	c.t.Helper()
	var oom *pgas.OutOfMemoryError
	if !errors.As(err, &oom) {
		c.errorf("%s: error %v (%T); want *pgas.OutOfMemoryError", what, err, err)
		return -1
	}
	if oom.Op != op || oom.Asked != asked || oom.TooManyRegions || (left >= 0 && oom.Left != left) {
		c.errorf("%s: %+v; want Op %s, Asked %d, Left %d", what, *oom, op, asked, left)
	}
	msg := err.Error()
	if !strings.Contains(msg, fmt.Sprint(asked)) || !strings.Contains(msg, fmt.Sprintf("%d bytes left", oom.Left)) {
		c.errorf("%s: message %q does not give the %d bytes asked and %d left", what, msg, asked, oom.Left)
	}
	return oom.Left
}

func TestOutOfMemory(t *testing.T) {
	const p = 3
	seg := minSegment(t, p)
	if err := (pgas.Config{Ranks: p, SegmentBytes: seg - 8}).Validate(); err == nil {
		t.Fatalf("Validate accepts SegmentBytes %d below the minimum %d", seg-8, seg)
	}
	// At the minimum size the heaps hold exactly MinSegmentBytes: Validate
	// wants MinSegmentBytes plus the header.
	const heap = pgas.MinSegmentBytes
	const big = 1 << 20
	runJob(t, pgas.Config{Ranks: p, SegmentBytes: seg}, func(ctx context.Context, r *pgas.Rank) error {
		me := r.ID()
		c := newChecker(t, me)
		_, err := r.AllAlloc(ctx, big)
		checkOOM(c, "AllAlloc(1 MiB)", err, "AllAlloc", big, heap)
		if me == 1 {
			_, err := r.GlobalAlloc(ctx, big)
			checkOOM(c, "GlobalAlloc(1 MiB)", err, "GlobalAlloc", big, heap)
		}
		if me == 2 {
			_, err := r.Alloc(ctx, big)
			checkOOM(c, "Alloc(1 MiB)", err, "Alloc", big, heap)
			// An odd size is reported as asked.
			_, err = r.Alloc(ctx, heap+1)
			checkOOM(c, fmt.Sprintf("Alloc(%d)", heap+1), err, "Alloc", heap+1, heap)
			_, err = r.GlobalAlloc(ctx, heap+100)
			checkOOM(c, fmt.Sprintf("GlobalAlloc(%d)", heap+100), err, "GlobalAlloc", heap+100, heap)
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		// Rank 1's local heap takes 8 KiB; the symmetric heap shrinks by as
		// much on every rank.
		const loc = 8192
		if me == 1 {
			if _, err := r.Alloc(ctx, loc); err != nil {
				c.errorf("Alloc(%d) = %v", loc, err)
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		_, err = r.AllAlloc(ctx, big)
		left := checkOOM(c, "AllAlloc(1 MiB) after a local Alloc", err, "AllAlloc", big, heap-loc)
		if left <= 0 {
			return nil
		}
		// What is left can be taken, and then nothing more.
		reg, err := r.AllAlloc(ctx, left)
		if err != nil {
			c.errorf("AllAlloc(%d), the bytes reported left, = %v", left, err)
			return nil
		}
		_, err = r.AllAlloc(ctx, 64)
		checkOOM(c, "AllAlloc(64) when full", err, "AllAlloc", 64, 0)
		switch me {
		case 1:
			_, err := r.Alloc(ctx, 64)
			checkOOM(c, "Alloc(64) when full", err, "Alloc", 64, 0)
		case 0:
			// Rank 0's local heap has not grown: the 8 KiB below its end
			// that rank 1 uses locally are free on rank 0.
			l0, err := r.Alloc(ctx, loc)
			if err != nil {
				c.errorf("Alloc(%d) on rank 0 = %v", loc, err)
			}
			_, err = r.Alloc(ctx, 64)
			checkOOM(c, "Alloc(64) on rank 0 when full", err, "Alloc", 64, 0)
			if err := r.Free(ctx, l0); err != nil {
				return err
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		// Freeing makes the space available again.
		if err := r.AllFree(ctx, reg); err != nil {
			return err
		}
		reg2, err := r.AllAlloc(ctx, left)
		if err != nil {
			c.errorf("AllAlloc(%d) after AllFree = %v", left, err)
			return nil
		}
		if reg2.Off != reg.Off {
			c.errorf("AllAlloc(%d) after AllFree = %+v; want offset %d", left, reg2, reg.Off)
		}
		return r.AllFree(ctx, reg2)
	})
}

func TestTooManyRegions(t *testing.T) {
	runJob(t, pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() != 1 {
			return nil
		}
		c := newChecker(t, r.ID())
		var regs []pgas.Region
		var err error
		for range 1100 {
			var reg pgas.Region
			if reg, err = r.GlobalAlloc(ctx, 8); err != nil {
				break
			}
			regs = append(regs, reg)
		}
		var oom *pgas.OutOfMemoryError
		if !errors.As(err, &oom) || !oom.TooManyRegions {
			c.errorf("GlobalAlloc #%d = %v; want an *OutOfMemoryError with TooManyRegions", len(regs), err)
		} else if !strings.Contains(err.Error(), "1024") {
			c.errorf("error %q does not give the limit", err)
		}
		if len(regs) > 1024 || len(regs) < 1000 {
			c.errorf("%d live regions before the limit; want about 1024", len(regs))
		}
		if err := r.Free(ctx, regs[10]); err != nil {
			return err
		}
		reg, err := r.GlobalAlloc(ctx, 8)
		if err != nil {
			c.errorf("GlobalAlloc after a Free at the limit = %v", err)
		} else if reg.Off != regs[10].Off {
			c.errorf("GlobalAlloc after freeing %+v = %+v; want its offset", regs[10], reg)
		}
		regs[10] = reg
		for _, reg := range regs {
			if err := r.Free(ctx, reg); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestAllAllocCheckMismatch(t *testing.T) {
	tests := []struct {
		name   string
		sizes  []int64 // by rank
		a, b   string  // both must appear in every rank's error
		badArr bool    // mismatch through AllAllocArray lengths
	}{
		{name: "rank 2 differs", sizes: []int64{100, 100, 300, 100}, a: "100", b: "300"},
		{name: "rank 0 differs", sizes: []int64{200, 104, 104, 104}, a: "200", b: "104"},
		{name: "array lengths", sizes: []int64{10, 10, 10, 11}, a: "80", b: "88", badArr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := len(tt.sizes)
			errs := make([]error, p) // each rank writes its own slot
			runJob(t, pgas.Config{Ranks: p, SyncTimeout: 5 * time.Second}, func(ctx context.Context, r *pgas.Rank) error {
				me := r.ID()
				if tt.badArr {
					_, errs[me] = pgas.AllAllocArray[int64](ctx, r, tt.sizes[me], pgas.Indefinite)
				} else {
					_, errs[me] = r.AllAlloc(ctx, tt.sizes[me])
				}
				// The allocator still works after the mismatch.
				reg, err := r.AllAlloc(ctx, 64)
				if err != nil {
					return fmt.Errorf("AllAlloc(64) after the mismatch: %w", err)
				}
				return r.AllFree(ctx, reg)
			})
			for q, err := range errs {
				if err == nil {
					t.Errorf("rank %d: mismatched AllAlloc succeeded", q)
				} else if msg := err.Error(); !strings.Contains(msg, tt.a) || !strings.Contains(msg, tt.b) {
					t.Errorf("rank %d: error %q does not mention both %s and %s", q, msg, tt.a, tt.b)
				}
			}
		})
	}
}

type withString struct {
	A int64
	S string
}

type nested struct {
	P [2]pair
	F bool
	C complex128
}

type deepPtr struct {
	A int32
	B [2]struct{ X *int }
}

func TestCheckElem(t *testing.T) {
	type result struct {
		typ string
		err error
	}
	check := func(f func() error, typ reflect.Type) result { return result{typ.String(), f()} }
	bad := []struct {
		r    result
		more string // also expected in the message
	}{
		{check(pgas.CheckElem[*int], reflect.TypeFor[*int]()), ""},
		{check(pgas.CheckElem[string], reflect.TypeFor[string]()), ""},
		{check(pgas.CheckElem[[]int], reflect.TypeFor[[]int]()), ""},
		{check(pgas.CheckElem[map[int]int], reflect.TypeFor[map[int]int]()), ""},
		{check(pgas.CheckElem[chan int], reflect.TypeFor[chan int]()), ""},
		{check(pgas.CheckElem[func()], reflect.TypeFor[func()]()), ""},
		{check(pgas.CheckElem[any], reflect.TypeFor[any]()), ""},
		{check(pgas.CheckElem[[4]*int], reflect.TypeFor[[4]*int]()), ""},
		{check(pgas.CheckElem[withString], reflect.TypeFor[withString]()), ".S"},
		{check(pgas.CheckElem[struct{ S string }], reflect.TypeFor[struct{ S string }]()), ""},
		{check(pgas.CheckElem[deepPtr], reflect.TypeFor[deepPtr]()), ".B"},
		{check(pgas.CheckElem[struct{}], reflect.TypeFor[struct{}]()), "size 0"},
		{check(pgas.CheckElem[[0]int64], reflect.TypeFor[[0]int64]()), "size 0"},
	}
	for _, tt := range bad {
		t.Run("reject/"+tt.r.typ, func(t *testing.T) {
			if tt.r.err == nil {
				t.Fatalf("CheckElem[%s]() = nil; want an error", tt.r.typ)
			}
			if msg := tt.r.err.Error(); !strings.Contains(msg, tt.r.typ) || !strings.Contains(msg, tt.more) {
				t.Errorf("CheckElem[%s]() = %q; want it to name %q and %q", tt.r.typ, msg, tt.r.typ, tt.more)
			}
		})
	}
	good := []result{
		check(pgas.CheckElem[int64], reflect.TypeFor[int64]()),
		check(pgas.CheckElem[uint8], reflect.TypeFor[uint8]()),
		check(pgas.CheckElem[bool], reflect.TypeFor[bool]()),
		check(pgas.CheckElem[float32], reflect.TypeFor[float32]()),
		check(pgas.CheckElem[complex128], reflect.TypeFor[complex128]()),
		check(pgas.CheckElem[tri], reflect.TypeFor[tri]()),
		check(pgas.CheckElem[[4][2]uint8], reflect.TypeFor[[4][2]uint8]()),
		check(pgas.CheckElem[pair], reflect.TypeFor[pair]()),
		check(pgas.CheckElem[nested], reflect.TypeFor[nested]()),
		check(pgas.CheckElem[pgas.Region], reflect.TypeFor[pgas.Region]()),
		check(pgas.CheckElem[pgas.LockRef], reflect.TypeFor[pgas.LockRef]()),
		check(pgas.CheckElem[pgas.Ptr], reflect.TypeFor[pgas.Ptr]()),
		check(pgas.CheckElem[pgas.ArrayRef], reflect.TypeFor[pgas.ArrayRef]()),
	}
	for _, r := range good {
		t.Run("accept/"+r.typ, func(t *testing.T) {
			if r.err != nil {
				t.Errorf("CheckElem[%s]() = %v; want nil", r.typ, r.err)
			}
		})
	}
}

// TestAllocArrayRejectsPointerTypes: the array allocators refuse element
// types with pointers on every rank, without hanging, and allocate nothing.
func TestAllocArrayRejectsPointerTypes(t *testing.T) {
	const p = 3
	runJob(t, pgas.Config{Ranks: p}, func(ctx context.Context, r *pgas.Rank) error {
		c := newChecker(t, r.ID())
		expect := func(what, typ string, err error) {
			c.t.Helper()
			if err == nil {
				c.errorf("%s succeeded; want an error", what)
			} else if !strings.Contains(err.Error(), typ) {
				c.errorf("%s: error %q does not name %s", what, err, typ)
			}
		}
		_, err := pgas.AllAllocArray[string](ctx, r, 10, pgas.Cyclic)
		expect("AllAllocArray[string]", "string", err)
		_, err = pgas.AllAllocArray[withString](ctx, r, 10, 2)
		expect("AllAllocArray[withString]", "withString", err)
		_, err = pgas.AllAllocArray[[]int](ctx, r, 10, pgas.Star)
		expect("AllAllocArray[[]int]", "[]int", err)
		_, err = pgas.GlobalAllocArray[*int](ctx, r, 10, pgas.Cyclic)
		expect("GlobalAllocArray[*int]", "*int", err)
		_, err = pgas.AllocArray[map[string]int](ctx, r, 10)
		expect("AllocArray[map[string]int]", "map[string]int", err)
		// The job is still in step: a good collective allocation works.
		a, err := pgas.AllAllocArray[nested](ctx, r, 10, 3)
		if err != nil {
			return err
		}
		return a.AllFree(ctx)
	})
}

func TestConfigValidate(t *testing.T) {
	seg2 := minSegment(t, 2)
	tests := []struct {
		name string
		cfg  pgas.Config
		want []string // substrings of the error; nil: valid
	}{
		{name: "zero", cfg: pgas.Config{}},
		{name: "minimum segment", cfg: pgas.Config{Ranks: 2, SegmentBytes: seg2}},
		{name: "ranks and segment", cfg: pgas.Config{Ranks: -1, SegmentBytes: 7},
			want: []string{"Ranks = -1", "SegmentBytes = 7"}},
		{name: "segment too small and odd", cfg: pgas.Config{Ranks: 2, SegmentBytes: seg2 - 4},
			want: []string{fmt.Sprintf("SegmentBytes = %d is not a multiple of 8", seg2-4), fmt.Sprintf("want at least %d", seg2)}},
		{name: "segment too small", cfg: pgas.Config{Ranks: 2, SegmentBytes: seg2 - 8},
			want: []string{fmt.Sprint(seg2)}},
		{name: "one partly filled node", cfg: pgas.Config{Ranks: 2, RanksPerNode: 3}},
		{name: "negative ranks per node", cfg: pgas.Config{Ranks: 2, RanksPerNode: -1},
			want: []string{"RanksPerNode = -1"}},
		{name: "fragment and shutdown", cfg: pgas.Config{Ranks: 2, FragmentBytes: 4, ShutdownTimeout: -time.Second},
			want: []string{"FragmentBytes = 4", "ShutdownTimeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == nil {
				if err != nil {
					t.Errorf("Validate(%+v) = %v; want nil", tt.cfg, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%+v) = nil; want errors with %q", tt.cfg, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate(%+v) = %q; want it to contain %q", tt.cfg, err, w)
				}
			}
			if len(tt.want) > 1 {
				j, ok := err.(interface{ Unwrap() []error })
				if !ok || len(j.Unwrap()) < len(tt.want) {
					t.Errorf("Validate(%+v) = %q; want %d or more joined errors", tt.cfg, err, len(tt.want))
				}
			}
			// Run refuses it without starting ranks.
			ran := false
			if err := pgas.Run(t.Context(), tt.cfg, func(context.Context, *pgas.Rank) error { ran = true; return nil }); err == nil || ran {
				t.Errorf("Run(%+v) = %v, ran %v; want an error and no ranks", tt.cfg, err, ran)
			}
		})
	}
}

func TestLocks(t *testing.T) {
	const p = 4
	runJob(t, pgas.Config{Ranks: p}, func(ctx context.Context, r *pgas.Rank) error {
		me := r.ID()
		c := newChecker(t, me)
		refs, err := pgas.AllAllocArray[pgas.LockRef](ctx, r, p, pgas.Cyclic)
		if err != nil {
			return err
		}
		all, err := r.AllLockAlloc(ctx)
		if err != nil {
			return err
		}
		if all.Ref().Home != 0 {
			c.errorf("AllLockAlloc().Ref() = %+v; want Home 0", all.Ref())
		}
		if err := refs.Put(ctx, int64(me), all.Ref()); err != nil {
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
			if ref != all.Ref() {
				c.errorf("rank %d's AllLockAlloc ref %+v differs from mine %+v", q, ref, all.Ref())
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		// Rank 2 makes a lock at home and publishes it in slot 0.
		const home = 2
		var gl *pgas.Lock
		if me == home {
			if gl, err = r.GlobalLockAlloc(ctx); err != nil {
				return err
			}
			if gl.Ref().Home != home {
				c.errorf("GlobalLockAlloc().Ref() = %+v; want Home %d", gl.Ref(), home)
			}
			if err := refs.Put(ctx, 0, gl.Ref()); err != nil {
				return err
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		ref, err := refs.Get(ctx, 0)
		if err != nil {
			return err
		}
		if me != home {
			gl = r.OpenLock(ref)
		}
		if gl.Ref() != ref || ref.Home != home {
			c.errorf("OpenLock(%+v).Ref() = %+v; want the published ref, Home %d", ref, gl.Ref(), home)
		}
		mustPanic(c, "OpenLock of rank 99", func() { r.OpenLock(pgas.LockRef{Home: 99}) })

		// TryLock: only one of several tries succeeds; a failed try leaves
		// the lock as it was.
		for li, l := range []*pgas.Lock{all, gl} {
			step := func() error { return r.Barrier(ctx) }
			holder := (li + 1) % p
			if me == holder {
				if err := l.Lock(ctx); err != nil {
					return err
				}
			}
			if err := step(); err != nil {
				return err
			}
			if me != holder {
				ok, err := l.TryLock(ctx)
				if err != nil {
					return err
				}
				if ok {
					c.errorf("lock %d: TryLock succeeded while rank %d holds it", li, holder)
				}
			}
			if err := step(); err != nil {
				return err
			}
			if me == holder {
				if err := l.Unlock(ctx); err != nil {
					return err
				}
			}
			if err := step(); err != nil {
				return err
			}
			// Now it is free: one rank takes it by TryLock.
			taker := (holder + 1) % p
			if me == taker {
				ok, err := l.TryLock(ctx)
				if err != nil {
					return err
				}
				if !ok {
					c.errorf("lock %d: TryLock of a free lock failed", li)
				}
			}
			if err := step(); err != nil {
				return err
			}
			if me != taker {
				if ok, err := l.TryLock(ctx); err != nil {
					return err
				} else if ok {
					c.errorf("lock %d: TryLock succeeded while rank %d holds it by TryLock", li, taker)
				}
			}
			if err := step(); err != nil {
				return err
			}
			if me == taker {
				if err := l.Unlock(ctx); err != nil {
					return err
				}
			}
			if err := step(); err != nil {
				return err
			}
			// Free again: Lock must not wait forever, and TryLock by
			// everyone in turn works.
			for q := range p {
				if me == q {
					ok, err := l.TryLock(ctx)
					if err != nil {
						return err
					}
					if !ok {
						c.errorf("lock %d: TryLock by rank %d in turn failed", li, q)
					} else if err := l.Unlock(ctx); err != nil {
						return err
					}
				}
				if err := step(); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// TestLockMutualExclusion runs a read-modify-write counter with plain get
// and put under a lock, 8 ranks x 200 iterations, and checks that no two
// ranks were inside at once and no increment was lost.
func TestLockMutualExclusion(t *testing.T) {
	const p, iters = 8, 200
	runJob(t, pgas.Config{Ranks: p}, func(ctx context.Context, r *pgas.Rank) error {
		me := r.ID()
		c := newChecker(t, me)
		// words: counter for the AllLockAlloc lock at 3 (owned by rank 3),
		// counter for the GlobalLockAlloc lock at 6, occupancy at 5 and 1.
		words, err := pgas.AllAllocArray[int64](ctx, r, p, pgas.Cyclic)
		if err != nil {
			return err
		}
		refs, err := pgas.AllAllocArray[pgas.LockRef](ctx, r, 1, pgas.Indefinite)
		if err != nil {
			return err
		}
		all, err := r.AllLockAlloc(ctx)
		if err != nil {
			return err
		}
		const home = 6
		var gl *pgas.Lock
		if me == home {
			if gl, err = r.GlobalLockAlloc(ctx); err != nil {
				return err
			}
			if err := refs.Put(ctx, 0, gl.Ref()); err != nil {
				return err
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if me != home {
			ref, err := refs.Get(ctx, 0)
			if err != nil {
				return err
			}
			gl = r.OpenLock(ref)
		}
		type use struct {
			l            *pgas.Lock
			counter, occ int64
			n            int
		}
		for _, u := range []use{{all, 3, 5, iters}, {gl, 6, 1, iters / 2}} {
			for it := range u.n {
				if err := u.l.Lock(ctx); err != nil {
					return err
				}
				if o, err := pgas.FetchAdd(ctx, words, u.occ, 1); err != nil {
					return err
				} else if o != 0 {
					c.errorf("iteration %d: %d other ranks inside the critical section", it, o)
				}
				v, err := words.Get(ctx, u.counter)
				if err != nil {
					return err
				}
				if it&7 == 0 {
					time.Sleep(time.Microsecond) // widen the window
				}
				if err := words.Put(ctx, u.counter, v+1); err != nil {
					return err
				}
				if _, err := pgas.FetchAdd(ctx, words, u.occ, -1); err != nil {
					return err
				}
				if err := u.l.Unlock(ctx); err != nil {
					return err
				}
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			got, err := words.Get(ctx, u.counter)
			if err != nil {
				return err
			}
			if want := int64(p * u.n); got != want {
				c.errorf("counter at %d = %d after %d ranks x %d locked increments; want %d", u.counter, got, p, u.n, want)
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestLockFree(t *testing.T) {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
		all, err := r.AllLockAlloc(ctx)
		if err != nil {
			return err
		}
		if err := all.Free(ctx); err == nil {
			return fmt.Errorf("Free of an AllLockAlloc lock succeeded")
		}
		if err := all.AllFree(ctx); err != nil {
			return err
		}
		g, err := r.GlobalLockAlloc(ctx)
		if err != nil {
			return err
		}
		if err := r.OpenLock(g.Ref()).Free(ctx); err == nil {
			return fmt.Errorf("Free of an opened lock succeeded")
		}
		if err := g.AllFree(ctx); err == nil {
			return fmt.Errorf("AllFree of a GlobalLockAlloc lock succeeded")
		}
		if err := g.Free(ctx); err != nil {
			return err
		}
		if err := g.Free(ctx); err == nil {
			return fmt.Errorf("double Free of a lock succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
