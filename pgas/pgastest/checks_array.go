package pgastest

import (
	"context"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
)

// rec is a struct element type with padding and an array field.
type rec struct {
	A int32
	B float64
	C [3]uint16
}

func mkRec(i int64) rec {
	return rec{int32(i*3 + 1), float64(i) + 0.25, [3]uint16{uint16(i), uint16(i >> 16), uint16(i*7 + 5)}}
}

// checkElements: element Get and Put on cyclic, blocked, Star and
// Indefinite arrays of several element types; ownership (Owner, PtrTo,
// Local, MyBlocks, ForAll) matches the layout's definition; fresh arrays
// are zero.
func checkElements(ctx context.Context, r *pgas.Rank) error {
	n := int64(r.N())
	size := 12*n + 5 // partial last blocks for every layout below
	star := max((size+n-1)/n, 1)
	layouts := []struct {
		name  string
		blk   int64
		owner func(i int64) int
	}{
		{"cyclic", pgas.Cyclic, func(i int64) int { return int(i % n) }},
		{"blocked(3)", 3, func(i int64) int { return int(i / 3 % n) }},
		{"star", pgas.Star, func(i int64) int { return int(i / star) }},
		{"indefinite", pgas.Indefinite, func(int64) int { return 0 }},
	}
	for _, l := range layouts {
		if err := elementsCase(ctx, r, l.name+"/int64", size, l.blk, l.owner, func(i int64) int64 { return val(i, 3) }); err != nil {
			return err
		}
		if err := elementsCase(ctx, r, l.name+"/int32", size, l.blk, l.owner, func(i int64) int32 { return int32(val(i, 4)) }); err != nil {
			return err
		}
		if err := elementsCase(ctx, r, l.name+"/struct", size, l.blk, l.owner, mkRec); err != nil {
			return err
		}
		if err := elementsCase(ctx, r, l.name+"/[3]byte", size, l.blk, l.owner, mkBytes3); err != nil {
			return err
		}
	}
	// Fewer elements than ranks, one element, none.
	for _, small := range []int64{n/2 + 1, 1, 0} {
		star := max((small+n-1)/n, 1)
		if err := elementsCase(ctx, r, fmt.Sprintf("cyclic/%d elements", small), small, pgas.Cyclic,
			func(i int64) int { return int(i % n) }, func(i int64) int64 { return val(i, 6) }); err != nil {
			return err
		}
		if err := elementsCase(ctx, r, fmt.Sprintf("star/%d elements", small), small, pgas.Star,
			func(i int64) int { return int(i / star) }, mkRec); err != nil {
			return err
		}
		if err := elementsCase(ctx, r, fmt.Sprintf("indefinite/%d elements", small), small, pgas.Indefinite,
			func(int64) int { return 0 }, mkBytes3); err != nil {
			return err
		}
	}
	return nil
}

func mkBytes3(i int64) [3]byte { return [3]byte{byte(i), byte(i >> 8), byte(i*5 + 1)} }

func elementsCase[T comparable](ctx context.Context, r *pgas.Rank, name string, size, blk int64, owner func(int64) int, mk func(int64) T) error {
	n, me := int64(r.N()), r.ID()
	a, err := pgas.AllAllocArray[T](ctx, r, size, blk)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if a.Len() != size {
		return fmt.Errorf("%s: Len() = %d; want %d", name, a.Len(), size)
	}
	lay := a.Layout()
	var mine int64
	for i := range size {
		o := owner(i)
		if got := lay.Owner(i); got != o {
			return fmt.Errorf("%s: Layout().Owner(%d) = %d; want %d", name, i, got, o)
		}
		if err := checkPtr(a, i, o); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if o == me {
			mine++
		}
	}
	if got := int64(len(a.Local())); got != mine || lay.LocalLen(me) != mine {
		return fmt.Errorf("%s: len(Local()) = %d, LocalLen = %d; want %d", name, got, lay.LocalLen(me), mine)
	}
	var zero T
	for k, v := range a.Local() {
		if v != zero {
			return fmt.Errorf("%s: fresh array: local element %d = %v; want zero", name, k, v)
		}
	}
	var seen int64
	var forAll []int64
	for i := range a.ForAll() {
		forAll = append(forAll, i)
	}
	for start, b := range a.MyBlocks() {
		for k := range b {
			i := start + int64(k)
			if owner(i) != me {
				return fmt.Errorf("%s: MyBlocks yields element %d, owned by rank %d", name, i, owner(i))
			}
			if seen >= int64(len(forAll)) || forAll[seen] != i {
				return fmt.Errorf("%s: ForAll and MyBlocks disagree at position %d", name, seen)
			}
			seen++
		}
	}
	if seen != mine || int64(len(forAll)) != mine {
		return fmt.Errorf("%s: MyBlocks yields %d elements, ForAll %d; want %d", name, seen, len(forAll), mine)
	}

	if err := r.Barrier(ctx); err != nil { // everyone has seen zeros before anyone writes
		return err
	}
	// Rank me writes the elements i with i%N == (me+1)%N, mostly remote.
	for i := (int64(me) + 1) % n; i < size; i += n {
		if err := a.Put(ctx, i, mk(i)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	for k, v := range a.Local() {
		i := lay.GlobalIndex(me, int64(k))
		if want := mk(i); v != want {
			return fmt.Errorf("%s: local element %d (global %d) = %v; want %v", name, k, i, v, want)
		}
	}
	stride := max(1, n/4)
	for i := int64(me) % stride; i < size; i += stride {
		v, err := a.Get(ctx, i)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if want := mk(i); v != want {
			return fmt.Errorf("%s: Get(%d) from rank %d = %v; want %v", name, i, owner(i), v, want)
		}
	}
	return a.AllFree(ctx)
}

// checkPtr checks the pointer-to-shared of element i, owned by rank owner:
// its rank, IndexOf, and Add from element 0 and back.
func checkPtr[T any](a *pgas.Array[T], i int64, owner int) error {
	p := a.PtrTo(i)
	if p.Rank != owner {
		return fmt.Errorf("PtrTo(%d).Rank = %d; want %d", i, p.Rank, owner)
	}
	if got := a.IndexOf(p); got != i {
		return fmt.Errorf("IndexOf(PtrTo(%d)) = %d", i, got)
	}
	if got := a.Add(a.PtrTo(0), i); got != p {
		return fmt.Errorf("Add(PtrTo(0), %d) = %+v; want PtrTo(%d) = %+v", i, got, i, p)
	}
	if got := a.Add(p, -i); got != a.PtrTo(0) {
		return fmt.Errorf("Add(PtrTo(%d), %d) = %+v; want PtrTo(0) = %+v", i, -i, got, a.PtrTo(0))
	}
	return nil
}

// checkRanges: GetRange and PutRange across blocks and ranks, including a
// partial last block and empty ranges at the end.
func checkRanges(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), r.ID()
	const blk = 7
	size := n*blk*3 + 4
	a, err := pgas.AllAllocArray[int64](ctx, r, size, blk)
	if err != nil {
		return err
	}
	for start, b := range a.MyBlocks() {
		for k := range b {
			b[k] = val(start+int64(k), 1)
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	verify := func(what string, got []int64, start, salt int64) error {
		for k, v := range got {
			if want := val(start+int64(k), salt); v != want {
				return fmt.Errorf("%s [%d,%d): element %d = %d; want %d", what, start, start+int64(len(got)), start+int64(k), v, want)
			}
		}
		return nil
	}
	all := make([]int64, size)
	if err := a.GetRange(ctx, all, 0); err != nil {
		return err
	}
	if err := verify("GetRange", all, 0, 1); err != nil {
		return err
	}
	// Odd-sized chunks at a rank-dependent phase, and the tail.
	const chunk = 11
	buf := make([]int64, chunk)
	s := int64(me % 5)
	for ; s+chunk <= size; s += chunk * int64(max(1, n/8)) {
		clear(buf)
		if err := a.GetRange(ctx, buf, s); err != nil {
			return err
		}
		if err := verify("GetRange", buf, s, 1); err != nil {
			return err
		}
	}
	tail := buf[:blk+3] // the partial last block and the block before it
	if err := a.GetRange(ctx, tail, size-int64(len(tail))); err != nil {
		return err
	}
	if err := verify("GetRange of the tail", tail, size-int64(len(tail)), 1); err != nil {
		return err
	}
	if err := a.GetRange(ctx, nil, size); err != nil {
		return fmt.Errorf("empty GetRange at the end: %v", err)
	}
	if err := a.PutRange(ctx, size, nil); err != nil {
		return fmt.Errorf("empty PutRange at the end: %v", err)
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}

	// Rank me writes part (me+1)%N of the array, which spans blocks and
	// ranks; the last part holds the partial block.
	lo, hi := span(size, next(r), r.N())
	src := make([]int64, hi-lo)
	for k := range src {
		src[k] = val(lo+int64(k), 2)
	}
	if err := a.PutRangeAsync(ctx, lo, src).Wait(ctx); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	for k, v := range a.Local() {
		i := a.Layout().GlobalIndex(me, int64(k))
		if want := val(i, 2); v != want {
			return fmt.Errorf("after PutRange: local element %d (global %d) = %d; want %d, put by rank %d", k, i, v, want, (partOf(size, i, r.N())+r.N()-1)%r.N())
		}
	}
	clear(all)
	if err := a.GetRange(ctx, all, 0); err != nil {
		return err
	}
	if err := verify("GetRange after PutRange", all, 0, 2); err != nil {
		return err
	}
	return a.AllFree(ctx)
}

// checkGetRangeAsync: many GetRangeAsync handles outstanding at once, waited
// in reverse order, each filled exactly.
func checkGetRangeAsync(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), int64(r.ID())
	const per = 37
	size := n*per - 3 // Star: blocks of 37, the last one partial
	a, err := pgas.AllAllocArray[int64](ctx, r, size, pgas.Star)
	if err != nil {
		return err
	}
	for start, b := range a.MyBlocks() {
		for k := range b {
			b[k] = val(start+int64(k), 5)
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	type op struct {
		start int64
		dst   []int64
		h     *pgas.Handle
	}
	handles := scaled(r, 48)
	ops := make([]op, 0, handles+1)
	for h := range int64(handles) {
		l := 1 + (h*7+me)%23
		l = min(l, size)
		start := (h*131 + me*17) % (size - l + 1)
		dst := make([]int64, l)
		ops = append(ops, op{start, dst, a.GetRangeAsync(ctx, dst, start)})
	}
	whole := make([]int64, size)
	ops = append(ops, op{0, whole, a.GetRangeAsync(ctx, whole, 0)})
	for k := len(ops) - 1; k >= 0; k-- {
		if err := ops[k].h.Wait(ctx); err != nil {
			return err
		}
	}
	for _, o := range ops {
		for k, v := range o.dst {
			if want := val(o.start+int64(k), 5); v != want {
				return fmt.Errorf("GetRangeAsync [%d,%d): element %d = %d; want %d", o.start, o.start+int64(len(o.dst)), o.start+int64(k), v, want)
			}
		}
		if err := o.h.Wait(ctx); err != nil {
			return fmt.Errorf("second Wait on a completed handle: %v", err)
		}
	}
	return a.AllFree(ctx)
}

// checkCopySet: Set fills ranges, Copy moves ranges between arrays of
// different layouts with an offset.
func checkCopySet(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), r.ID()
	size := n*10 + 3
	const shift = 7
	src, err := pgas.AllAllocArray[int64](ctx, r, size, 5)
	if err != nil {
		return err
	}
	dst, err := pgas.AllAllocArray[int64](ctx, r, size+shift, pgas.Cyclic)
	if err != nil {
		return err
	}
	mark := func(p int) int64 { return 1000 + int64(p) }
	lo, hi := span(size, me, r.N())
	if err := src.Set(ctx, lo, hi-lo, mark(me)); err != nil {
		return err
	}
	if err := src.Set(ctx, size, 0, -1); err != nil {
		return fmt.Errorf("empty Set at the end: %v", err)
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	lo, hi = span(size, next(r), r.N())
	if err := pgas.Copy(ctx, dst, lo+shift, src, lo, hi-lo); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	got := make([]int64, size+shift)
	if err := dst.GetRange(ctx, got, 0); err != nil {
		return err
	}
	for j, v := range got {
		want := int64(0)
		if j >= shift {
			want = mark(partOf(size, int64(j-shift), r.N()))
		}
		if v != want {
			return fmt.Errorf("after Set and Copy: dst[%d] = %d; want %d", j, v, want)
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if me == r.N()-1 {
		if err := dst.Set(ctx, 0, shift, -5); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	for j := range int64(shift + 1) {
		v, err := dst.Get(ctx, j)
		if err != nil {
			return err
		}
		want := int64(-5)
		if j == shift {
			want = mark(0)
		}
		if v != want {
			return fmt.Errorf("after Set by rank %d: dst[%d] = %d; want %d", r.N()-1, j, v, want)
		}
	}
	if err := dst.AllFree(ctx); err != nil {
		return err
	}
	return src.AllFree(ctx)
}
