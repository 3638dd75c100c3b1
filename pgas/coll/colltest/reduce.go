package colltest

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// Checks of the reductions (Reduce, Allreduce, PrefixReduce, their
// in-place and chunked forms). Every check runs on the world team and then
// on the two teams of r.Split(ID%2) at the same time, over shared arrays
// that span every rank (so a team's array has elements on non-members),
// for several operators, among them a non-commutative one. Inputs are a
// function of the global index (shared sources) or of team id and offset
// (private sources); each rank computes the expected results itself with
// a plain left fold over the sequence.

func init() {
	register(
		Check{Name: "reduce-reduce", MinRanks: 1, Run: rdCheck(func(c rdOp, ctx context.Context, e *rdEnv) error { return c.reduce(ctx, e, false) })},
		Check{Name: "reduce-allreduce", MinRanks: 1, Run: rdCheck(func(c rdOp, ctx context.Context, e *rdEnv) error { return c.reduce(ctx, e, true) })},
		Check{Name: "reduce-prefix", MinRanks: 1, Run: rdCheck(rdOp.prefix)},
		Check{Name: "reduce-inplace", MinRanks: 1, Run: rdCheck(rdOp.inPlace)},
		Check{Name: "reduce-v", MinRanks: 1, Run: rdCheck(func(c rdOp, ctx context.Context, e *rdEnv) error { return c.vector(ctx, e, false) })},
		Check{Name: "reduce-v-cyclic", MinRanks: 1, Run: rdCheck(func(c rdOp, ctx context.Context, e *rdEnv) error { return c.vector(ctx, e, true) })},
		Check{Name: "reduce-chain", MinRanks: 1, Run: rdCheck(rdOp.chain)},
		Check{Name: "reduce-large", MinRanks: 1, Run: rdCheck(rdOp.large)},
	)
}

// rdOp is one operator under test, with its element type hidden.
type rdOp interface {
	reduce(ctx context.Context, e *rdEnv, all bool) error
	prefix(ctx context.Context, e *rdEnv) error
	inPlace(ctx context.Context, e *rdEnv) error
	vector(ctx context.Context, e *rdEnv, cyclic bool) error
	chain(ctx context.Context, e *rdEnv) error
	large(ctx context.Context, e *rdEnv) error
}

// rdMat is a 2x2 integer matrix mod rdP, row-major: a non-commutative,
// associative product.
type rdMat [4]int64

const rdP = 1_000_000_007

func rdMatMul(a, b rdMat) rdMat {
	return rdMat{
		(a[0]*b[0] + a[1]*b[2]) % rdP, (a[0]*b[1] + a[1]*b[3]) % rdP,
		(a[2]*b[0] + a[3]*b[2]) % rdP, (a[2]*b[1] + a[3]*b[3]) % rdP,
	}
}

func rdOps() []rdOp {
	return []rdOp{
		rdCase[int64]{
			name: "add-int64", op: coll.Add[int64](),
			f:   func(a, b int64) int64 { return a + b },
			val: func(k int64) int64 { return (k*k*31)%1001 - 500 }, sentinel: -77777,
		},
		rdCase[float64]{
			name: "max-float64", op: coll.Max[float64](),
			f: func(a, b float64) float64 {
				if b > a {
					return b
				}
				return a
			},
			val: func(k int64) float64 { return float64((k*7919)%1009)*0.25 - 100 }, sentinel: -1e300,
		},
		rdCase[uint32]{
			name: "band-uint32", op: coll.Band[uint32](),
			f:   func(a, b uint32) uint32 { return a & b },
			val: func(k int64) uint32 { return ^(uint32(1) << uint((k*7)%23+5)) }, sentinel: 12345,
		},
		rdCase[int8]{
			name: "logor-int8", op: coll.LogOr[int8](),
			f: func(a, b int8) int8 {
				if a != 0 || b != 0 {
					return 1
				}
				return 0
			},
			val: func(k int64) int8 {
				if k%13 == 12 {
					return -3
				}
				return 0
			}, sentinel: 99,
		},
		rdCase[uint64]{
			name: "func-addmod", op: coll.Func("addmod", func(a, b uint64) uint64 { return (a + b) % rdP }),
			f:   func(a, b uint64) uint64 { return (a + b) % rdP },
			val: func(k int64) uint64 { return (uint64(k)*uint64(k)*2654435761 + 12345) % rdP }, sentinel: 1 << 60,
		},
		rdCase[rdMat]{
			name: "noncomm-rdMat", op: coll.NonCommFunc("matmul", rdMatMul),
			f: rdMatMul,
			val: func(k int64) rdMat {
				return rdMat{(k*3 + 1) % rdP, (k*k + 2) % rdP, (k + 5) % rdP, (k*7 + 3) % rdP}
			}, sentinel: rdMat{-1, -1, -1, -1},
		},
	}
}

// rdEnv is one member's view of a team under test.
type rdEnv struct {
	r     *pgas.Rank
	t     *pgas.Team
	tag   string
	calls int
}

// rdCheck returns a check that runs fn for every operator on the world
// team, then on the split teams concurrently.
func rdCheck(fn func(c rdOp, ctx context.Context, e *rdEnv) error) func(ctx context.Context, r *pgas.Rank) error {
	return func(ctx context.Context, r *pgas.Rank) error {
		run := func(e *rdEnv) error {
			for _, c := range rdOps() {
				if err := fn(c, ctx, e); err != nil {
					return fmt.Errorf("%s team (size %d, id %d): %w", e.tag, e.t.Size(), e.t.ID(), err)
				}
			}
			return nil
		}
		if err := run(&rdEnv{r: r, t: r.World(), tag: "world"}); err != nil {
			return err
		}
		t, err := r.Split(ctx, r.ID()%2)
		if err != nil {
			return err
		}
		return run(&rdEnv{r: r, t: t, tag: fmt.Sprintf("split(%d)", r.ID()%2)})
	}
}

func (e *rdEnv) size() int { return e.t.Size() }
func (e *rdEnv) tid() int  { return e.t.ID() }

// roots returns the roots to try: 0, the last member and a middle one.
func (e *rdEnv) roots() []int {
	rs := []int{0}
	for _, x := range []int{e.size() - 1, e.size() / 2} {
		if x != rs[len(rs)-1] && x != 0 {
			rs = append(rs, x)
		}
	}
	return rs
}

// options varies the synchronisation mode, the broadcast tree and the
// message size from call to call (identically on every member). outNo
// says the caller must synchronise before reading the result elsewhere.
func (e *rdEnv) options(root int) (opts []coll.Option, outNo bool) {
	k := e.calls
	e.calls++
	opts = []coll.Option{coll.Root(root), coll.WithAlgo([]coll.Algo{coll.Auto, coll.Flat, coll.Binomial, coll.BinomialFlat, coll.FlatFlat}[k%5])}
	if k%3 == 1 {
		opts = append(opts, coll.WithSync(coll.InNo|coll.OutNo))
		outNo = true
	}
	if k%5 == 2 {
		opts = append(opts, coll.Segment(16))
	}
	return opts, outNo
}

// after synchronises after a call that used OutNo.
func (e *rdEnv) after(ctx context.Context, outNo bool) error {
	if outNo {
		return e.t.Barrier(ctx)
	}
	return nil
}

type rdLayout struct {
	name string
	blk  int64
	home int
}

// layouts returns the source layouts to try: cyclic, blocks of 3, star and
// indefinite on the last rank of the job (outside a split team half the
// time).
func (e *rdEnv) layouts() []rdLayout {
	return []rdLayout{
		{"cyclic", pgas.Cyclic, 0},
		{"blk3", 3, 0},
		{"star", pgas.Star, 0},
		{"indefinite", pgas.Indefinite, e.r.N() - 1},
	}
}

// rdAlloc allocates a team array of n elements over every rank of the job.
func rdAlloc[T any](ctx context.Context, e *rdEnv, n int64, lc rdLayout) (*pgas.Array[T], error) {
	lay := pgas.NewLayout(n, lc.blk, e.r.N(), lc.home)
	reg, err := e.t.AllAlloc(ctx, lay.LocalCap()*int64(unsafe.Sizeof(*new(T))))
	if err != nil {
		return nil, err
	}
	return pgas.OpenArray[T](e.r, pgas.ArrayRef{Layout: lay, Region: reg})
}

func rdFree[T any](ctx context.Context, e *rdEnv, a *pgas.Array[T]) error {
	return e.t.AllFree(ctx, a.Ref().Region)
}

// rdFill makes team id 0 store f(i) in every element of a; the caller
// synchronises.
func rdFill[T any](ctx context.Context, e *rdEnv, a *pgas.Array[T], f func(i int64) T) error {
	if e.tid() != 0 {
		return nil
	}
	vs := make([]T, a.Len())
	for i := range vs {
		vs[i] = f(int64(i))
	}
	return a.PutRange(ctx, 0, vs)
}

// rdCase is one operator over T, with an oracle combine function, the
// input function and a sentinel for elements that must stay untouched.
type rdCase[T comparable] struct {
	name     string
	op       coll.Op[T]
	f        func(a, b T) T
	val      func(k int64) T
	sentinel T
}

// privVal is member m's private element k.
func (c rdCase[T]) privVal(m int, k int64) T { return c.val(1000*int64(m+1) + k) }

// privSlice returns member m's private source of n elements.
func (c rdCase[T]) privSlice(m int, n int64) []T {
	s := make([]T, n)
	for k := range s {
		s[k] = c.privVal(m, int64(k))
	}
	return s
}

// foldAll is the oracle: the left fold of xs, and false if xs is empty.
func (c rdCase[T]) foldAll(xs []T) (T, bool) {
	var acc T
	for i, x := range xs {
		if i == 0 {
			acc = x
		} else {
			acc = c.f(acc, x)
		}
	}
	return acc, len(xs) > 0
}

// prefixes is the oracle of the prefix reductions.
func (c rdCase[T]) prefixes(xs []T) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		if i == 0 {
			out[i] = x
		} else {
			out[i] = c.f(out[i-1], x)
		}
	}
	return out
}

func (c rdCase[T]) sentinels(n int64) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = c.sentinel
	}
	return s
}

// rdCheckShared compares every element of a with want.
func rdCheckShared[T comparable](ctx context.Context, a *pgas.Array[T], want []T, what string) error {
	got := make([]T, a.Len())
	if err := a.GetRange(ctx, got, 0); err != nil {
		return err
	}
	for i := range got {
		if got[i] != want[i] {
			if len(got) > 40 {
				return fmt.Errorf("%s: shared element %d = %v, want %v", what, i, got[i], want[i])
			}
			return fmt.Errorf("%s: shared element %d = %v, want %v (all: %v, want %v)", what, i, got[i], want[i], got, want)
		}
	}
	return nil
}

func rdCheckPriv[T comparable](got, want []T, what string) error {
	for i := range want {
		if got[i] != want[i] {
			return fmt.Errorf("%s: private element %d = %v, want %v (all: %v, want %v)", what, i, got[i], want[i], got, want)
		}
	}
	return nil
}

// reduce checks Reduce (all false) or Allreduce over shared and private
// sources and destinations, several layouts and roots, and n = 0.
func (c rdCase[T]) reduce(ctx context.Context, e *rdEnv, all bool) error {
	name := "Reduce"
	call := coll.Reduce[T]
	if all {
		name, call = "Allreduce", coll.Allreduce[T]
	}
	s := e.size()
	const dAt = 2
	dst, err := rdAlloc[T](ctx, e, int64(s)+dAt+2, rdLayout{blk: 2})
	if err != nil {
		return err
	}
	// one runs call with src and n, expecting want (none if !ok) at the
	// root or at every member.
	one := func(what string, src coll.Buf[T], n int, root int, privDst bool, want T, ok bool) error {
		what = fmt.Sprintf("%s %s %s root=%d privdst=%v", name, c.name, what, root, privDst)
		if err := rdFill(ctx, e, dst, func(int64) T { return c.sentinel }); err != nil {
			return err
		}
		if err := e.t.Barrier(ctx); err != nil {
			return err
		}
		pd := c.sentinels(2)
		d := coll.Shared(dst, dAt)
		if privDst {
			d = coll.Private(pd)
		}
		opts, outNo := e.options(root)
		if err := call(ctx, e.t, d, src, n, c.op, opts...); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := e.after(ctx, outNo); err != nil {
			return err
		}
		wantS, wantP := c.sentinels(dst.Len()), c.sentinels(2)
		if ok {
			switch {
			case all && privDst:
				wantP[0] = want
			case all:
				for m := range s {
					wantS[dAt+m] = want
				}
			case privDst && e.tid() == root:
				wantP[0] = want
			case !privDst:
				wantS[dAt] = want
			}
		}
		if err := rdCheckShared(ctx, dst, wantS, what); err != nil {
			return err
		}
		if err := rdCheckPriv(pd, wantP, what); err != nil {
			return err
		}
		return e.t.Barrier(ctx)
	}

	R := e.r.N()
	for li, lc := range e.layouts() {
		n, at := int64(3*R+4), int64(li%2)
		src, err := rdAlloc[T](ctx, e, at+n+2, lc)
		if err != nil {
			return err
		}
		if err := rdFill(ctx, e, src, c.val); err != nil {
			return err
		}
		var seq []T
		for i := at; i < at+n; i++ {
			seq = append(seq, c.val(i))
		}
		want, ok := c.foldAll(seq)
		for _, root := range e.roots() {
			for _, pd := range []bool{false, true} {
				if err := one("shared src "+lc.name, coll.Shared(src, at), int(n), root, pd, want, ok); err != nil {
					return err
				}
			}
		}
		if li == 0 { // nothing to reduce: dst stays as it is
			if err := one("shared src n=0", coll.Shared(src, at), 0, s-1, false, want, false); err != nil {
				return err
			}
		}
		if err := rdFree(ctx, e, src); err != nil {
			return err
		}
	}
	for _, n := range []int64{1, 5} {
		var seq []T
		for m := range s {
			seq = append(seq, c.privSlice(m, n)...)
		}
		want, ok := c.foldAll(seq)
		// A longer slice than n: only [0:n] counts.
		mine := append(c.privSlice(e.tid(), n), c.sentinel)
		for _, root := range e.roots() {
			for _, pd := range []bool{false, true} {
				if err := one(fmt.Sprintf("private src n=%d", n), coll.Private(mine), int(n), root, pd, want, ok); err != nil {
					return err
				}
			}
		}
	}
	if err := one("private src n=0", coll.Private([]T{}), 0, 0, true, c.sentinel, false); err != nil {
		return err
	}
	return rdFree(ctx, e, dst)
}

// prefix checks PrefixReduce in its four forms.
func (c rdCase[T]) prefix(ctx context.Context, e *rdEnv) error {
	s, R := e.size(), e.r.N()
	me := e.r.ID()
	const dAt = 1
	for li, lc := range e.layouts() {
		n, at := int64(2*R+3), int64(1-li%2)
		src, err := rdAlloc[T](ctx, e, at+n+1, lc)
		if err != nil {
			return err
		}
		dlc := e.layouts()[(li+1)%4]
		dst, err := rdAlloc[T](ctx, e, dAt+n+1, dlc)
		if err != nil {
			return err
		}
		if err := rdFill(ctx, e, src, c.val); err != nil {
			return err
		}
		var seq []T
		for i := at; i < at+n; i++ {
			seq = append(seq, c.val(i))
		}
		pref := c.prefixes(seq)
		for _, pd := range []bool{false, true} {
			what := fmt.Sprintf("PrefixReduce %s shared src %s dst %s privdst=%v", c.name, lc.name, dlc.name, pd)
			if err := rdFill(ctx, e, dst, func(int64) T { return c.sentinel }); err != nil {
				return err
			}
			if err := e.t.Barrier(ctx); err != nil {
				return err
			}
			priv := c.sentinels(n)
			d := coll.Shared(dst, dAt)
			if pd {
				d = coll.Private(priv)
			}
			opts, outNo := e.options(e.size() - 1)
			if err := coll.PrefixReduce(ctx, e.t, d, coll.Shared(src, at), int(n), c.op, opts...); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if err := e.after(ctx, outNo); err != nil {
				return err
			}
			wantS, wantP := c.sentinels(dst.Len()), c.sentinels(n)
			for i := range n {
				if !pd {
					wantS[dAt+i] = pref[i]
				} else if src.Layout().Owner(at+i) == me {
					wantP[i] = pref[i]
				}
			}
			if err := rdCheckShared(ctx, dst, wantS, what); err != nil {
				return err
			}
			if err := rdCheckPriv(priv, wantP, what); err != nil {
				return err
			}
			if err := e.t.Barrier(ctx); err != nil {
				return err
			}
		}
		if err := rdFree(ctx, e, dst); err != nil {
			return err
		}
		if err := rdFree(ctx, e, src); err != nil {
			return err
		}
	}
	// Private sources.
	for _, n := range []int64{3, 0} {
		var seq []T
		for m := range s {
			seq = append(seq, c.privSlice(m, n)...)
		}
		pref := c.prefixes(seq)
		dst, err := rdAlloc[T](ctx, e, dAt+n*int64(s)+1, rdLayout{blk: 2})
		if err != nil {
			return err
		}
		for _, pd := range []bool{false, true} {
			what := fmt.Sprintf("PrefixReduce %s private src n=%d privdst=%v", c.name, n, pd)
			if err := rdFill(ctx, e, dst, func(int64) T { return c.sentinel }); err != nil {
				return err
			}
			if err := e.t.Barrier(ctx); err != nil {
				return err
			}
			priv := c.sentinels(n + 1)
			d := coll.Shared(dst, dAt)
			if pd {
				d = coll.Private(priv)
			}
			opts, outNo := e.options(0)
			if err := coll.PrefixReduce(ctx, e.t, d, coll.Private(c.privSlice(e.tid(), n)), int(n), c.op, opts...); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if err := e.after(ctx, outNo); err != nil {
				return err
			}
			wantS, wantP := c.sentinels(dst.Len()), c.sentinels(n+1)
			if pd {
				copy(wantP, pref[int64(e.tid())*n:int64(e.tid()+1)*n])
			} else {
				copy(wantS[dAt:], pref)
			}
			if err := rdCheckShared(ctx, dst, wantS, what); err != nil {
				return err
			}
			if err := rdCheckPriv(priv, wantP, what); err != nil {
				return err
			}
			if err := e.t.Barrier(ctx); err != nil {
				return err
			}
		}
		if err := rdFree(ctx, e, dst); err != nil {
			return err
		}
	}
	return nil
}

// inPlace checks ReduceInPlace, AllreduceInPlace and PrefixReduceInPlace,
// shared and private.
func (c rdCase[T]) inPlace(ctx context.Context, e *rdEnv) error {
	s, R := e.size(), e.r.N()
	type form int
	const (
		red form = iota
		allred
		pre
	)
	forms := []form{red, allred, pre}
	names := []string{"ReduceInPlace", "AllreduceInPlace", "PrefixReduceInPlace"}
	for li, lc := range e.layouts() {
		n, at := int64(3*R+2), int64(li%2)
		length := at + n + 1
		buf, err := rdAlloc[T](ctx, e, length, lc)
		if err != nil {
			return err
		}
		blk := buf.Layout().Block
		var seq []T
		for i := at; i < at+n; i++ {
			seq = append(seq, c.val(i))
		}
		want, _ := c.foldAll(seq)
		pref := c.prefixes(seq)
		for _, f := range forms {
			if f == allred && at+int64(s-1)*blk >= length {
				continue // no room for every member's slot (indefinite)
			}
			for _, root := range e.roots() {
				if f != red && root != 0 {
					continue
				}
				what := fmt.Sprintf("%s %s shared %s root=%d", names[f], c.name, lc.name, root)
				if err := rdFill(ctx, e, buf, c.val); err != nil {
					return err
				}
				if err := e.t.Barrier(ctx); err != nil {
					return err
				}
				opts, outNo := e.options(root)
				b := coll.Shared(buf, at)
				switch f {
				case red:
					err = coll.ReduceInPlace(ctx, e.t, b, int(n), c.op, opts...)
				case allred:
					err = coll.AllreduceInPlace(ctx, e.t, b, int(n), c.op, opts...)
				case pre:
					err = coll.PrefixReduceInPlace(ctx, e.t, b, int(n), c.op, opts...)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", what, err)
				}
				if err := e.after(ctx, outNo); err != nil {
					return err
				}
				wantS := make([]T, length)
				for i := range wantS {
					wantS[i] = c.val(int64(i))
				}
				switch f {
				case red:
					wantS[at] = want
				case allred:
					for m := range int64(s) {
						wantS[at+m*blk] = want
					}
				case pre:
					copy(wantS[at:], pref)
				}
				if err := rdCheckShared(ctx, buf, wantS, what); err != nil {
					return err
				}
				if err := e.t.Barrier(ctx); err != nil {
					return err
				}
			}
		}
		if err := rdFree(ctx, e, buf); err != nil {
			return err
		}
	}
	// Private buffers.
	for _, n := range []int64{1, 4} {
		var seq []T
		for m := range s {
			seq = append(seq, c.privSlice(m, n)...)
		}
		want, _ := c.foldAll(seq)
		pref := c.prefixes(seq)
		for _, f := range forms {
			for _, root := range e.roots() {
				if f != red && root != 0 {
					continue
				}
				what := fmt.Sprintf("%s %s private n=%d root=%d", names[f], c.name, n, root)
				mine := append(c.privSlice(e.tid(), n), c.sentinel)
				wantP := append(c.privSlice(e.tid(), n), c.sentinel)
				opts, outNo := e.options(root)
				var err error
				b := coll.Private(mine)
				switch f {
				case red:
					err = coll.ReduceInPlace(ctx, e.t, b, int(n), c.op, opts...)
					if e.tid() == root {
						wantP[0] = want
					}
				case allred:
					err = coll.AllreduceInPlace(ctx, e.t, b, int(n), c.op, opts...)
					wantP[0] = want
				case pre:
					err = coll.PrefixReduceInPlace(ctx, e.t, b, int(n), c.op, opts...)
					copy(wantP, pref[int64(e.tid())*n:int64(e.tid()+1)*n])
				}
				if err != nil {
					return fmt.Errorf("%s: %w", what, err)
				}
				if err := e.after(ctx, outNo); err != nil {
					return err
				}
				if err := rdCheckPriv(mine, wantP, what); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// rdSharedChunks returns deterministic chunks over a source of length
// elements viewed from at: some empty, some overlapping, Dst packed.
func rdSharedChunks(k int, length, at int64) []coll.Chunk {
	var cs []coll.Chunk
	dst := 0
	for j := range k {
		n := int64((j * 3) % 6)
		if n > length-at {
			n = length - at
		}
		off := (int64(j)*5 + 1) % (length - at - n + 1)
		cs = append(cs, coll.Chunk{Src: int(off), Dst: dst, N: int(n)})
		dst += int(n)
	}
	return cs
}

// rdCyclicChunks returns k chunks of which chunk j lies on the rank of team
// id j mod Size: inside one block that rank owns, or empty if it owns
// none.
func rdCyclicChunks(e *rdEnv, k int, l pgas.Layout) []coll.Chunk {
	var cs []coll.Chunk
	dst := 0
	s := e.size()
	for j := range k {
		q := e.t.RankOf(j % s)
		nb := l.LocalBlocks(q)
		ch := coll.Chunk{Dst: dst}
		if nb > 0 && j%5 != 4 {
			rel := int64((q - l.First + l.Ranks) % l.Ranks)
			b := rel + int64(l.Ranks)*(int64(j/s)%nb)
			lo, hi := b*l.Block, min((b+1)*l.Block, l.N)
			o := int64(j*3) % (hi - lo)
			ch.Src = int(lo + o)
			ch.N = int(min(hi-lo-o, int64(j%4)))
		}
		cs = append(cs, ch)
		dst += ch.N
	}
	return cs
}

// rdPrivChunks returns member m's chunks of its private source of 9
// elements; member 1 has only empty ones. Dst is packed from base.
func rdPrivChunks(m int, base int) []coll.Chunk {
	var cs []coll.Chunk
	for j := range m%3 + 1 {
		n := (m + j*2) % 5
		if m == 1 {
			n = 0
		}
		off := (j*3 + m) % (9 - n + 1)
		cs = append(cs, coll.Chunk{Src: off, Dst: base, N: n})
		base += n
	}
	return cs
}

func rdChunkTotal(cs []coll.Chunk) int {
	t := 0
	for _, ch := range cs {
		t += ch.N
	}
	return t
}

func rdSpans(cs []coll.Chunk) []coll.Span {
	sp := make([]coll.Span, len(cs))
	for i, ch := range cs {
		sp[i] = coll.Span{Off: ch.Src, N: ch.N}
	}
	return sp
}

// rdVCase is one chunked case: the chunks this member passes (with a
// shared and with a private destination: they differ in Dst for private
// sources), the whole sequence, and where each sequence position's prefix
// goes: an offset in the shared destination, and an offset in this
// member's private destination or -1.
type rdVCase[T any] struct {
	what           string
	src            coll.Buf[T]
	cs, csPriv     []coll.Chunk
	seq            []T
	sharedPos      []int
	privPos        []int
	dlen, plen     int
	noPrivateCheck bool
}

// vector checks ReduceV, AllreduceV and PrefixReduceV over shared sources
// (with or without CyclicChunks) and, without it, private sources.
func (c rdCase[T]) vector(ctx context.Context, e *rdEnv, cyclic bool) error {
	s, R := e.size(), e.r.N()
	me := e.r.ID()
	for li, lc := range e.layouts() {
		length := int64(3*R + 5)
		at := int64(li % 2)
		if cyclic {
			at = 0
		}
		src, err := rdAlloc[T](ctx, e, length, lc)
		if err != nil {
			return err
		}
		if err := rdFill(ctx, e, src, c.val); err != nil {
			return err
		}
		if err := e.t.Barrier(ctx); err != nil {
			return err
		}
		var cs []coll.Chunk
		if cyclic {
			cs = rdCyclicChunks(e, 2*s+3, src.Layout())
		} else {
			cs = rdSharedChunks(2*s+3, length, at)
		}
		v := rdVCase[T]{what: "shared src " + lc.name, src: coll.Shared(src, at), cs: cs, csPriv: cs}
		for _, ch := range cs {
			for i := range ch.N {
				k := at + int64(ch.Src+i)
				v.seq = append(v.seq, c.val(k))
				v.sharedPos = append(v.sharedPos, ch.Dst+i)
				pp := -1
				if src.Layout().Owner(k) == me {
					pp = ch.Dst + i
				}
				v.privPos = append(v.privPos, pp)
			}
		}
		v.dlen, v.plen = rdChunkTotal(cs), rdChunkTotal(cs)
		if err := c.vrun(ctx, e, v, cyclic); err != nil {
			return err
		}
		if err := rdFree(ctx, e, src); err != nil {
			return err
		}
	}
	if cyclic {
		return nil
	}
	// Private sources: each member passes its own chunks; the sequence is
	// member 0's, then member 1's... With a shared destination the
	// members' Dst are packed globally, with a private one per member.
	v := rdVCase[T]{what: "private src"}
	base := 0
	for m := range s {
		cs := rdPrivChunks(m, base)
		local := rdPrivChunks(m, 0)
		if m == e.tid() {
			v.cs, v.csPriv = cs, local
			v.src = coll.Private(c.privSlice(m, 9))
			v.plen = rdChunkTotal(cs)
		}
		for j, ch := range cs {
			for i := range ch.N {
				v.seq = append(v.seq, c.privVal(m, int64(ch.Src+i)))
				v.sharedPos = append(v.sharedPos, ch.Dst+i)
				pp := -1
				if m == e.tid() {
					pp = local[j].Dst + i
				}
				v.privPos = append(v.privPos, pp)
			}
		}
		base += rdChunkTotal(cs)
	}
	v.dlen = base
	return c.vrun(ctx, e, v, false)
}

// vrun runs ReduceV, AllreduceV and PrefixReduceV on one chunked case
// with shared and private destinations.
func (c rdCase[T]) vrun(ctx context.Context, e *rdEnv, v rdVCase[T], cyclic bool) error {
	s := e.size()
	var extra []coll.Option
	if cyclic {
		extra = []coll.Option{coll.CyclicChunks()}
	}
	want, ok := c.foldAll(v.seq)
	pref := c.prefixes(v.seq)
	const dAt = 1
	dst, err := rdAlloc[T](ctx, e, dAt+int64(max(v.dlen, s))+1, rdLayout{blk: 3})
	if err != nil {
		return err
	}
	for _, all := range []bool{false, true} {
		for _, pd := range []bool{false, true} {
			root := (e.calls / 2) % s
			w := fmt.Sprintf("%s %s all=%v root=%d privdst=%v", v.what, c.name, all, root, pd)
			if err := rdFill(ctx, e, dst, func(int64) T { return c.sentinel }); err != nil {
				return err
			}
			if err := e.t.Barrier(ctx); err != nil {
				return err
			}
			priv := c.sentinels(1)
			d := coll.Shared(dst, dAt)
			if pd {
				d = coll.Private(priv)
			}
			opts, outNo := e.options(root)
			opts = append(opts, extra...)
			if all {
				err = coll.AllreduceV(ctx, e.t, d, v.src, rdSpans(v.cs), c.op, opts...)
			} else {
				err = coll.ReduceV(ctx, e.t, d, v.src, rdSpans(v.cs), c.op, opts...)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", w, err)
			}
			if err := e.after(ctx, outNo); err != nil {
				return err
			}
			wantS, wantP := c.sentinels(dst.Len()), c.sentinels(1)
			if ok {
				switch {
				case pd && (all || e.tid() == root):
					wantP[0] = want
				case !pd && all:
					for m := range s {
						wantS[dAt+m] = want
					}
				case !pd:
					wantS[dAt] = want
				}
			}
			if err := rdCheckShared(ctx, dst, wantS, w); err != nil {
				return err
			}
			if err := rdCheckPriv(priv, wantP, w); err != nil {
				return err
			}
			if err := e.t.Barrier(ctx); err != nil {
				return err
			}
		}
	}
	for _, pd := range []bool{false, true} {
		w := fmt.Sprintf("PrefixReduceV %s %s privdst=%v", v.what, c.name, pd)
		if err := rdFill(ctx, e, dst, func(int64) T { return c.sentinel }); err != nil {
			return err
		}
		if err := e.t.Barrier(ctx); err != nil {
			return err
		}
		priv := c.sentinels(int64(v.plen) + 1)
		d, cs := coll.Shared(dst, dAt), v.cs
		if pd {
			d, cs = coll.Private(priv), v.csPriv
		}
		opts, outNo := e.options((e.calls / 3) % s)
		opts = append(opts, extra...)
		if err := coll.PrefixReduceV(ctx, e.t, d, v.src, cs, c.op, opts...); err != nil {
			return fmt.Errorf("%s: %w", w, err)
		}
		if err := e.after(ctx, outNo); err != nil {
			return err
		}
		wantS, wantP := c.sentinels(dst.Len()), c.sentinels(int64(v.plen)+1)
		for p := range v.seq {
			if !pd {
				wantS[dAt+v.sharedPos[p]] = pref[p]
			} else if v.privPos[p] >= 0 {
				wantP[v.privPos[p]] = pref[p]
			}
		}
		if err := rdCheckShared(ctx, dst, wantS, w); err != nil {
			return err
		}
		if err := rdCheckPriv(priv, wantP, w); err != nil {
			return err
		}
		if err := e.t.Barrier(ctx); err != nil {
			return err
		}
	}
	return rdFree(ctx, e, dst)
}

// chain makes 12 reductions on private buffers back to back, all
// InNo|OutNo, with no synchronisation between them (each call's inputs are
// its own), checking each result as it returns: private results are
// complete at return, and the reductions' internal rounds must not
// overwrite staging a slower member is still reading.
func (c rdCase[T]) chain(ctx context.Context, e *rdEnv) error {
	s := e.size()
	const n = 3
	for it := range 12 {
		root := it % s
		// Member m's part in iteration it.
		part := func(m int) []T {
			p := make([]T, n)
			for k := range p {
				p[k] = c.val(int64(10000*it + 100*m + k))
			}
			return p
		}
		var seq []T
		for m := range s {
			seq = append(seq, part(m)...)
		}
		want, _ := c.foldAll(seq)
		pref := c.prefixes(seq)
		mine := part(e.tid())
		opts := []coll.Option{coll.Root(root), coll.WithSync(coll.InNo | coll.OutNo),
			coll.WithAlgo([]coll.Algo{coll.Flat, coll.Binomial, coll.BinomialFlat, coll.FlatFlat}[it%4])}
		what := fmt.Sprintf("chain %s iteration %d", c.name, it)
		switch it % 4 {
		case 0, 1:
			got := c.sentinels(1)
			if err := coll.Allreduce(ctx, e.t, coll.Private(got), coll.Private(mine), n, c.op, opts...); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if got[0] != want {
				return fmt.Errorf("%s: Allreduce gave %v, want %v", what, got[0], want)
			}
		case 2:
			got := c.sentinels(n)
			if err := coll.PrefixReduce(ctx, e.t, coll.Private(got), coll.Private(mine), n, c.op, opts...); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if err := rdCheckPriv(got, pref[e.tid()*n:(e.tid()+1)*n], what); err != nil {
				return err
			}
		case 3:
			if err := coll.ReduceInPlace(ctx, e.t, coll.Private(mine), n, c.op, opts...); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if e.tid() == root && mine[0] != want {
				return fmt.Errorf("%s: ReduceInPlace gave %v, want %v", what, mine[0], want)
			}
		}
	}
	return e.t.Barrier(ctx)
}

// large reduces a few hundred elements in small blocks and small messages
// (many partial results for the non-commutative operator), for the sum and
// the matrix product only.
func (c rdCase[T]) large(ctx context.Context, e *rdEnv) error {
	if c.name != "add-int64" && c.name != "noncomm-mat2" {
		return nil
	}
	const n, at = 600, 3
	for _, blk := range []int64{1, 7} {
		src, err := rdAlloc[T](ctx, e, n+at, rdLayout{blk: blk})
		if err != nil {
			return err
		}
		dst, err := rdAlloc[T](ctx, e, n+at, rdLayout{blk: 5})
		if err != nil {
			return err
		}
		if err := rdFill(ctx, e, src, c.val); err != nil {
			return err
		}
		if err := rdFill(ctx, e, dst, func(int64) T { return c.sentinel }); err != nil {
			return err
		}
		if err := e.t.Barrier(ctx); err != nil {
			return err
		}
		var seq []T
		for i := int64(at); i < n+at; i++ {
			seq = append(seq, c.val(i))
		}
		want, _ := c.foldAll(seq)
		pref := c.prefixes(seq)
		opts := []coll.Option{coll.Segment(64), coll.Root(e.size() - 1)}
		what := fmt.Sprintf("large %s blk=%d", c.name, blk)
		got := c.sentinels(1)
		if err := coll.Allreduce(ctx, e.t, coll.Private(got), coll.Shared(src, at), n, c.op, opts...); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if got[0] != want {
			return fmt.Errorf("%s: Allreduce gave %v, want %v", what, got[0], want)
		}
		if err := coll.PrefixReduce(ctx, e.t, coll.Shared(dst, 0), coll.Shared(src, at), n, c.op, opts...); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		wantS := c.sentinels(dst.Len())
		copy(wantS, pref)
		if err := rdCheckShared(ctx, dst, wantS, what); err != nil {
			return err
		}
		if err := e.t.Barrier(ctx); err != nil {
			return err
		}
		if err := rdFree(ctx, e, dst); err != nil {
			return err
		}
		if err := rdFree(ctx, e, src); err != nil {
			return err
		}
	}
	return nil
}
