package pgastest

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
)

func isZero(b []byte) bool { return bytes.Count(b, []byte{0}) == len(b) }

// pattern returns n bytes that depend on rank p and salt.
func pattern(p int, salt, n int64) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(int64(p)*31 + salt*11 + int64(k)*7 + 1)
	}
	return b
}

// checkRegion checks that reg lies in the segment, is 8-byte aligned, has
// size bytes and the owner want (-1 for symmetric).
func checkRegion(r *pgas.Rank, what string, reg pgas.Region, size int64, owner int) error {
	seg := r.Config().SegmentBytes
	if reg.Size != size || reg.Owner != owner || reg.Symmetric() != (owner < 0) ||
		reg.Off < 0 || reg.Off%8 != 0 || reg.Off+reg.Size > seg {
		return fmt.Errorf("%s returned %+v; want %d bytes, owner %d, 8-byte aligned inside a %d-byte segment", what, reg, size, owner, seg)
	}
	return nil
}

func overlap(a, b pgas.Region) bool { return a.Off < b.Off+b.Size && b.Off < a.Off+a.Size }

// checkAlloc: AllAlloc, GlobalAlloc and Alloc return zeroed, aligned,
// disjoint regions that other ranks reach by (rank, offset); Free and
// AllFree give the memory back (allocating a quarter of the segment five
// times in a row succeeds); misuse of Free is an error; a request larger
// than the segment is an *OutOfMemoryError on every rank and leaves the
// allocator usable.
func checkAlloc(ctx context.Context, r *pgas.Rank) error {
	n, me := r.N(), r.ID()
	segBytes := r.Config().SegmentBytes
	if got := int64(len(r.Segment())); got != segBytes {
		return fmt.Errorf("len(Segment()) = %d; want Config().SegmentBytes = %d", got, segBytes)
	}
	pub, err := pgas.AllAllocArray[pgas.Region](ctx, r, int64(n)+1, pgas.Cyclic) // element p on rank p; element n on rank 0
	if err != nil {
		return err
	}
	seg := r.Segment()
	const size = 1000

	// AllAlloc: the same zeroed region everywhere.
	reg, err := r.AllAlloc(ctx, size)
	if err != nil {
		return err
	}
	if err := checkRegion(r, "AllAlloc", reg, size, -1); err != nil {
		return err
	}
	if overlap(reg, pub.Ref().Region) {
		return fmt.Errorf("AllAlloc region %+v overlaps live region %+v", reg, pub.Ref().Region)
	}
	if !isZero(seg[reg.Off : reg.Off+size]) {
		return fmt.Errorf("AllAlloc region %+v is not zero", reg)
	}
	if err := pub.Put(ctx, int64(me), reg); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil { // everyone has seen zeros before anyone writes
		return err
	}
	if err := r.PutBytes(ctx, next(r), reg.Off, pattern(me, 1, size)); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	for p := range n {
		if got, err := pub.Get(ctx, int64(p)); err != nil || got != reg {
			return fmt.Errorf("rank %d's AllAlloc returned %+v (%v); this rank's %+v", p, got, err, reg)
		}
	}
	if !bytes.Equal(seg[reg.Off:reg.Off+size], pattern(prev(r), 1, size)) {
		return fmt.Errorf("AllAlloc region does not hold the bytes rank %d put there", prev(r))
	}
	got := make([]byte, size)
	if err := r.GetBytes(ctx, next(r), reg.Off, got); err != nil {
		return err
	}
	if !bytes.Equal(got, pattern(me, 1, size)) {
		return fmt.Errorf("GetBytes of rank %d's AllAlloc region does not return the bytes put there", next(r))
	}
	if err := r.AllFree(ctx, reg); err != nil {
		return err
	}

	// GlobalAlloc by the last rank, published through pub[n]: zeroed on
	// every rank although the memory was just used.
	if me == n-1 {
		g, err := r.GlobalAlloc(ctx, size)
		if err != nil {
			return err
		}
		if err := checkRegion(r, "GlobalAlloc", g, size, -1); err != nil {
			return err
		}
		if err := pub.Put(ctx, int64(n), g); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	g, err := pub.Get(ctx, int64(n))
	if err != nil {
		return err
	}
	if err := checkRegion(r, "published GlobalAlloc", g, size, -1); err != nil {
		return err
	}
	if !isZero(seg[g.Off : g.Off+size]) {
		return fmt.Errorf("GlobalAlloc region %+v is not zero on this rank", g)
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if err := r.PutBytes(ctx, next(r), g.Off, pattern(me, 2, size)); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if !bytes.Equal(seg[g.Off:g.Off+size], pattern(prev(r), 2, size)) {
		return fmt.Errorf("GlobalAlloc region does not hold the bytes rank %d put there", prev(r))
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if me == n-1 {
		if err := r.Free(ctx, g); err != nil {
			return err
		}
		if err := r.Free(ctx, g); err == nil {
			return fmt.Errorf("second Free of GlobalAlloc region %+v succeeded; want an error", g)
		}
	}

	// Alloc on every rank: in the caller's segment, reached by the others.
	l, err := r.Alloc(ctx, size)
	if err != nil {
		return err
	}
	if l.Size < size || l.Owner != me || l.Symmetric() || l.Off < 0 || l.Off%8 != 0 || l.Off+l.Size > segBytes {
		return fmt.Errorf("Alloc returned %+v; want at least %d bytes, owner %d, 8-byte aligned inside a %d-byte segment", l, size, me, segBytes)
	}
	if overlap(l, pub.Ref().Region) {
		return fmt.Errorf("Alloc region %+v overlaps live region %+v", l, pub.Ref().Region)
	}
	if !isZero(seg[l.Off : l.Off+size]) {
		return fmt.Errorf("Alloc region %+v is not zero", l)
	}
	if err := pub.Put(ctx, int64(me), l); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	q, err := pub.Get(ctx, int64(next(r)))
	if err != nil {
		return err
	}
	if q.Owner != next(r) {
		return fmt.Errorf("rank %d's Alloc region %+v has owner %d", next(r), q, q.Owner)
	}
	if err := r.PutBytes(ctx, q.Owner, q.Off, pattern(me, 3, size)); err != nil {
		return err
	}
	if n > 1 {
		if err := r.Free(ctx, q); err == nil {
			return fmt.Errorf("Free of rank %d's local region %+v by rank %d succeeded; want an error", q.Owner, q, me)
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if !bytes.Equal(seg[l.Off:l.Off+size], pattern(prev(r), 3, size)) {
		return fmt.Errorf("Alloc region does not hold the bytes rank %d put there", prev(r))
	}
	if err := r.Free(ctx, l); err != nil {
		return err
	}
	if err := r.Free(ctx, l); err == nil {
		return fmt.Errorf("second Free of Alloc region %+v succeeded; want an error", l)
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}

	// Every rank allocates at once: the regions are disjoint.
	if err := concurrentAlloc(ctx, r); err != nil {
		return err
	}

	// Freed memory is reused: a quarter of the segment, five times.
	big := segBytes / 4 &^ 63
	for i := range 5 {
		reg, err := r.AllAlloc(ctx, big)
		if err != nil {
			return fmt.Errorf("AllAlloc %d of %d bytes after AllFree: %w", i, big, err)
		}
		if !isZero(seg[reg.Off : reg.Off+big]) {
			return fmt.Errorf("AllAlloc %d of %d bytes is not zero", i, big)
		}
		seg[reg.Off], seg[reg.Off+big-1] = 0xff, 0xff // must be zero again next time
		if err := r.AllFree(ctx, reg); err != nil {
			return err
		}
	}
	if me == 0 {
		for i := range 5 {
			g, err := r.GlobalAlloc(ctx, big)
			if err != nil {
				return fmt.Errorf("GlobalAlloc %d of %d bytes after Free: %w", i, big, err)
			}
			if err := r.Free(ctx, g); err != nil {
				return err
			}
		}
	}
	for i := range 5 {
		l, err := r.Alloc(ctx, big)
		if err != nil {
			return fmt.Errorf("Alloc %d of %d bytes after Free: %w", i, big, err)
		}
		if !isZero(seg[l.Off : l.Off+big]) {
			return fmt.Errorf("Alloc %d of %d bytes is not zero", i, big)
		}
		seg[l.Off], seg[l.Off+big-1] = 0xff, 0xff
		if err := r.Free(ctx, l); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}

	// Too large: an error on every rank, and the allocator still works.
	var oom *pgas.OutOfMemoryError
	if reg, err := r.AllAlloc(ctx, segBytes); !errors.As(err, &oom) {
		return fmt.Errorf("AllAlloc of the whole segment = %+v, %v; want an *OutOfMemoryError", reg, err)
	}
	if reg, err := r.Alloc(ctx, segBytes); !errors.As(err, &oom) {
		return fmt.Errorf("Alloc of the whole segment = %+v, %v; want an *OutOfMemoryError", reg, err)
	}
	if me == 0 {
		if reg, err := r.GlobalAlloc(ctx, segBytes); !errors.As(err, &oom) {
			return fmt.Errorf("GlobalAlloc of the whole segment = %+v, %v; want an *OutOfMemoryError", reg, err)
		}
	}
	reg, err = r.AllAlloc(ctx, 64)
	if err != nil {
		return fmt.Errorf("AllAlloc after running out of memory: %w", err)
	}
	if err := r.AllFree(ctx, reg); err != nil {
		return err
	}
	return pub.AllFree(ctx)
}

// checkRefs: a LockRef and ArrayRefs published through shared arrays are
// opened by other ranks (OpenLock, OpenArray) and work there; OpenArray
// rejects a ref whose region is too small for the element type.
func checkRefs(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), r.ID()
	home := r.N() - 1
	arefs, err := pgas.AllAllocArray[pgas.ArrayRef](ctx, r, 2, pgas.Cyclic)
	if err != nil {
		return err
	}
	lrefs, err := pgas.AllAllocArray[pgas.LockRef](ctx, r, 1, pgas.Indefinite)
	if err != nil {
		return err
	}
	const m = 50 // elements m and m+1 of the local array: holder and counter words
	var local, glob *pgas.Array[int64]
	gsize := n*5 + 3
	if me == home {
		lk, err := r.GlobalLockAlloc(ctx)
		if err != nil {
			return err
		}
		if lk.Ref().Home != home {
			return fmt.Errorf("GlobalLockAlloc on rank %d: lock homed on rank %d", home, lk.Ref().Home)
		}
		if err := lrefs.Put(ctx, 0, lk.Ref()); err != nil {
			return err
		}
		if local, err = pgas.AllocArray[int64](ctx, r, m+2); err != nil {
			return err
		}
		for k := range local.Local()[:m] {
			local.Local()[k] = val(int64(k), 11)
		}
		if err := arefs.Put(ctx, 0, local.Ref()); err != nil {
			return err
		}
	}
	if me == 0 {
		if glob, err = pgas.GlobalAllocArray[int64](ctx, r, gsize, 2); err != nil {
			return err
		}
		src := make([]int64, gsize)
		for i := range src {
			src[i] = val(int64(i), 12)
		}
		if err := glob.PutRange(ctx, 0, src); err != nil {
			return err
		}
		if err := arefs.Put(ctx, 1, glob.Ref()); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}

	ref, err := arefs.Get(ctx, 0)
	if err != nil {
		return err
	}
	a, err := pgas.OpenArray[int64](r, ref)
	if err != nil {
		return err
	}
	if a.Len() != m+2 {
		return fmt.Errorf("array of rank %d opened from its ref: Len() = %d; want %d", home, a.Len(), m+2)
	}
	for i := range int64(m + 2) {
		if o := a.Layout().Owner(i); o != home {
			return fmt.Errorf("AllocArray of rank %d: element %d owned by rank %d", home, i, o)
		}
		if err := checkPtr(a, i, home); err != nil {
			return fmt.Errorf("AllocArray of rank %d: %w", home, err)
		}
	}
	if wantLocal := map[bool]int{true: m + 2, false: 0}[me == home]; len(a.Local()) != wantLocal {
		return fmt.Errorf("AllocArray of rank %d opened on rank %d: len(Local()) = %d; want %d", home, me, len(a.Local()), wantLocal)
	}
	buf := make([]int64, m)
	if err := a.GetRange(ctx, buf, 0); err != nil {
		return err
	}
	for k, v := range buf {
		if want := val(int64(k), 11); v != want {
			return fmt.Errorf("opened AllocArray of rank %d: element %d = %d; want %d", home, k, v, want)
		}
	}
	if _, err := pgas.OpenArray[[64]int64](r, ref); err == nil {
		return fmt.Errorf("OpenArray of a %d-element int64 array ref as [64]int64 elements succeeded; want an error", m+2)
	}

	gref, err := arefs.Get(ctx, 1)
	if err != nil {
		return err
	}
	g, err := pgas.OpenArray[int64](r, gref)
	if err != nil {
		return err
	}
	gbuf := make([]int64, gsize)
	if err := g.GetRange(ctx, gbuf, 0); err != nil {
		return err
	}
	for i, v := range gbuf {
		if want := val(int64(i), 12); v != want {
			return fmt.Errorf("opened GlobalAllocArray of rank 0: element %d = %d; want %d", i, v, want)
		}
	}
	for k, v := range g.Local() {
		if i := g.Layout().GlobalIndex(me, int64(k)); v != val(i, 12) {
			return fmt.Errorf("opened GlobalAllocArray of rank 0: local element %d (global %d) = %d; want %d", k, i, v, val(i, 12))
		}
	}

	lref, err := lrefs.Get(ctx, 0)
	if err != nil {
		return err
	}
	if lref.Home != home {
		return fmt.Errorf("published LockRef %+v; want home %d", lref, home)
	}
	lk := r.OpenLock(lref)
	k := int64(scaled(r, 10))
	for range k {
		if err := lk.Lock(ctx); err != nil {
			return err
		}
		if err := lockedIncrement(ctx, r, a, m, m+1); err != nil {
			return err
		}
		if err := lk.Unlock(ctx); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if v, err := a.Get(ctx, m+1); err != nil || v != n*k {
		return fmt.Errorf("counter incremented %d times by %d ranks under an opened lock = %d (%v); want %d", k, n, v, err, n*k)
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if me == home {
		if err := local.Free(ctx); err != nil {
			return err
		}
	}
	if me == 0 {
		if err := glob.Free(ctx); err != nil {
			return err
		}
	}
	if err := lrefs.AllFree(ctx); err != nil {
		return err
	}
	return arefs.AllFree(ctx)
}

// concurrentAlloc: every rank calls GlobalAlloc (of a size that depends on
// its id) and Alloc at the same time; no two symmetric regions overlap, and
// no local region overlaps a symmetric one.
func concurrentAlloc(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), int64(r.ID())
	pub, err := pgas.AllAllocArray[pgas.Region](ctx, r, 2*n, pgas.Cyclic) // elements p and n+p on rank p
	if err != nil {
		return err
	}
	g, err := r.GlobalAlloc(ctx, 64*(me%8+1)+8)
	if err != nil {
		return err
	}
	l, err := r.Alloc(ctx, 512)
	if err != nil {
		return err
	}
	if err := pub.Put(ctx, me, g); err != nil {
		return err
	}
	if err := pub.Put(ctx, n+me, l); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	regs := make([]pgas.Region, 2*n)
	if err := pub.GetRange(ctx, regs, 0); err != nil {
		return err
	}
	regs = append(regs, pub.Ref().Region)
	for i, a := range regs {
		for j, b := range regs[:i] {
			if (a.Symmetric() || b.Symmetric() || a.Owner == b.Owner) && overlap(a, b) {
				return fmt.Errorf("concurrent allocations: region %d %+v overlaps region %d %+v", i, a, j, b)
			}
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if err := r.Free(ctx, g); err != nil {
		return err
	}
	if err := r.Free(ctx, l); err != nil {
		return err
	}
	return pub.AllFree(ctx)
}
