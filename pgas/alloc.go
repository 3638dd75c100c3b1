package pgas

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
)

// Segment layout. Every rank's segment starts with the same header, so the
// symmetric heap that follows it starts at the same offset everywhere:
//
//	[0, 64)            allocator words (used on rank 0): lock, high-water, floor, extents, ever
//	[64, 128)          two AllAlloc result slots (every rank)
//	[128, 128+8N)      argument-check table (rank 0)
//	[extOff, +16K)     extent table of the symmetric heap (rank 0)
//	[.., heapStart)    the world team's control block (every rank)
//	[heapStart, floor) symmetric heap, allocated first-fit upward
//	[low_r, end)       rank r's local heap (Alloc), grown downward
//
// The symmetric allocator's state lives in rank 0's segment and is changed
// only under a ticket lock there, with one-sided operations, so it works on
// every transport. floor is the lowest local-heap start over all ranks;
// symmetric blocks stay below it and local heaps above the high-water mark.
const (
	hLock       = 0  // ticket lock: next (0), serving (8)
	hSymHigh    = 16 // end of the highest symmetric block
	hFloor      = 24 // min over ranks of the local heap start
	hNExt       = 32 // number of live symmetric blocks
	hSymEver    = 40 // end of the highest symmetric block ever allocated
	hSlots      = 64 // 2 slots of 4 words: code, off, asked, left
	hCheck      = 128
	maxExtents  = 1024
	allocAlign  = 64
	slotWords   = 4
	codeOK      = 0
	codeNoSpace = 1
	codeTooMany = 2
	codeCheck   = 3
)

func align(n int64) int64 { return (n + allocAlign - 1) &^ (allocAlign - 1) }

func extOff(ranks int) int64 { return align(hCheck + 8*int64(ranks)) }

// worldCtlOff is the offset of the world team's control block.
func worldCtlOff(ranks int) int64 { return extOff(ranks) + maxExtents*16 }

// headerBytes is the size of the segment header for a job of ranks ranks.
func headerBytes(ranks int) int64 { return worldCtlOff(ranks) + teamCtlBytes }

// Region is a block of shared memory. Owner is -1 for a symmetric block
// (the same offsets are reserved on every rank, from AllAlloc or
// GlobalAlloc), or the rank whose segment holds a local block (Alloc).
type Region struct {
	Off, Size int64
	Owner     int
}

// Symmetric reports whether the region exists on every rank.
func (g Region) Symmetric() bool { return g.Owner < 0 }

// OutOfMemoryError reports an allocation the segment cannot hold.
type OutOfMemoryError struct {
	Op             string
	Asked, Left    int64 // bytes asked for; free bytes in the heap that would hold it
	SegmentBytes   int64
	TooManyRegions bool
}

func (e *OutOfMemoryError) Error() string {
	if e.TooManyRegions {
		return fmt.Sprintf("pgas: %s of %d bytes: more than %d live symmetric regions", e.Op, e.Asked, maxExtents)
	}
	// Segments of this size at least would have held it; a MiB more,
	// rounded to MiB, leaves room for what comes next.
	need := (e.SegmentBytes + e.Asked - e.Left + 2<<20 - 1) &^ (1<<20 - 1)
	return fmt.Sprintf("pgas: %s of %d bytes: out of shared memory, %d bytes left in %d-byte segments (raise Config.SegmentBytes, mrrun --segment-bytes, to %d MiB or more)",
		e.Op, e.Asked, e.Left, e.SegmentBytes, need>>20)
}

// freshMarks know which parts of a rank's segment may hold data: the
// symmetric blocks handed out (dirty, sorted and coalesced) and the local
// heap from local on. Bytes outside them are still zero, as the transport
// gave them or as AllFreeUsed left them, so an allocation clears only what
// it shares with them: pages nobody used are not touched (made resident)
// just to be zeroed again, which at 64 in-process ranks was most of the
// collectives' staging areas and of the node tables' regions.
type freshMarks struct {
	dirty []extent // as [off, off+size)
	local int64
}

// markDirty adds [lo, hi) to the dirty extents.
func (f *freshMarks) markDirty(lo, hi int64) {
	if lo >= hi {
		return
	}
	out := f.dirty[:0:0]
	for _, e := range f.dirty {
		switch {
		case e.off+e.size < lo || e.off > hi: // apart
			out = append(out, e)
		default: // overlapping or touching: merge
			lo, hi = min(lo, e.off), max(hi, e.off+e.size)
		}
	}
	out = append(out, extent{lo, hi - lo})
	slices.SortFunc(out, func(a, b extent) int { return int(a.off - b.off) })
	f.dirty = out
}

// cleanDirty removes [lo, hi) from the dirty extents.
func (f *freshMarks) cleanDirty(lo, hi int64) {
	out := f.dirty[:0:0]
	for _, e := range f.dirty {
		end := e.off + e.size
		if end <= lo || e.off >= hi {
			out = append(out, e)
			continue
		}
		if e.off < lo {
			out = append(out, extent{e.off, lo - e.off})
		}
		if end > hi {
			out = append(out, extent{hi, end - hi})
		}
	}
	f.dirty = out
}

// seeSym learns that symmetric blocks up to ever were handed out that
// this rank was not told of (another rank's GlobalAlloc, whose memory it
// zeroes and fills with puts, or a team's AllAlloc): its bytes below ever
// are no longer known to be zero.
func (r *Rank) seeSym(ever int64) { r.fresh.markDirty(headerBytes(r.n), ever) }

// zeroSym zeroes [off, off+size) of this rank's segment for a symmetric
// block and marks it handed out.
func (r *Rank) zeroSym(off, size int64) {
	r.zeroUsed(off, size)
	r.fresh.markDirty(off, off+size)
}

// zeroLocal is zeroSym for a block of the local heap.
func (r *Rank) zeroLocal(off, size int64) {
	r.zeroUsed(off, size)
	r.fresh.local = min(r.fresh.local, off)
}

// zeroUsed clears the bytes of [off, off+size) that may hold data.
func (r *Rank) zeroUsed(off, size int64) {
	end := off + size
	for _, e := range r.fresh.dirty {
		if lo, hi := max(off, e.off), min(end, e.off+e.size); lo < hi {
			clear(r.seg[lo:hi])
		}
	}
	if lo, hi := max(off, r.fresh.local), end; lo < hi {
		clear(r.seg[lo:hi])
	}
}

// initHeader is run by rank 0 before the start barrier.
func (r *Rank) initHeader() {
	binary.LittleEndian.PutUint64(r.seg[hSymHigh:], uint64(headerBytes(r.n)))
	binary.LittleEndian.PutUint64(r.seg[hFloor:], uint64(r.cfg.SegmentBytes))
}

func (r *Rank) allocLock() *Lock { return &Lock{r: r, ref: LockRef{Home: 0, Off: hLock}} }

type extent struct{ off, size int64 }

// symState is rank 0's allocator state as read under the lock.
type symState struct {
	high, floor int64
	ever        int64 // max end of the blocks not every rank was told of (freshMarks)
	ext         []extent
}

func (r *Rank) readSym(ctx context.Context) (symState, error) {
	var b [32]byte
	if err := r.GetBytes(ctx, 0, hSymHigh, b[:]); err != nil {
		return symState{}, err
	}
	st := symState{
		high:  int64(binary.LittleEndian.Uint64(b[0:])),
		floor: int64(binary.LittleEndian.Uint64(b[8:])),
		ever:  int64(binary.LittleEndian.Uint64(b[24:])),
	}
	n := int64(binary.LittleEndian.Uint64(b[16:]))
	if n < 0 || n > maxExtents {
		return symState{}, fmt.Errorf("pgas: allocator state corrupt: %d extents", n)
	}
	buf := make([]byte, n*16)
	if err := r.GetBytes(ctx, 0, extOff(r.n), buf); err != nil {
		return symState{}, err
	}
	st.ext = make([]extent, n)
	for i := range st.ext {
		st.ext[i] = extent{int64(binary.LittleEndian.Uint64(buf[16*i:])), int64(binary.LittleEndian.Uint64(buf[16*i+8:]))}
	}
	return st, nil
}

func (r *Rank) writeSym(ctx context.Context, st symState) error {
	buf := make([]byte, 32+len(st.ext)*16)
	binary.LittleEndian.PutUint64(buf[0:], uint64(st.high))
	binary.LittleEndian.PutUint64(buf[8:], uint64(st.floor))
	binary.LittleEndian.PutUint64(buf[16:], uint64(len(st.ext)))
	binary.LittleEndian.PutUint64(buf[24:], uint64(st.ever))
	for i, e := range st.ext {
		binary.LittleEndian.PutUint64(buf[32+16*i:], uint64(e.off))
		binary.LittleEndian.PutUint64(buf[32+16*i+8:], uint64(e.size))
	}
	if err := r.PutBytes(ctx, 0, hSymHigh, buf[:32]); err != nil {
		return err
	}
	return r.PutBytes(ctx, 0, extOff(r.n), buf[32:])
}

// withAllocLock runs f with the allocator lock held.
func (r *Rank) withAllocLock(ctx context.Context, f func() error) error {
	l := r.allocLock()
	if err := l.Lock(ctx); err != nil {
		return err
	}
	ferr := f()
	if err := l.Unlock(ctx); err != nil && ferr == nil {
		ferr = err
	}
	return ferr
}

// symAlloc reserves a symmetric block of size bytes and returns its
// offset and ever: the end of the highest block allocated before it that
// not every rank was told of. Every rank learns of an AllAlloc (told);
// a GlobalAlloc or a team's AllAlloc raises ever, so that every rank
// treats its bytes below as possibly written (freshMarks).
func (r *Rank) symAlloc(ctx context.Context, op string, size int64, told bool) (off, ever int64, err error) {
	asked := size
	size = max(align(size), allocAlign)
	err = r.withAllocLock(ctx, func() error {
		st, err := r.readSym(ctx)
		if err != nil {
			return err
		}
		start := headerBytes(r.n)
		cur, at, free := start, -1, int64(0)
		for i, e := range st.ext {
			if gap := e.off - cur; gap >= size && at < 0 {
				at, off = i, cur
			} else if gap > 0 {
				free += gap
			}
			cur = e.off + e.size
		}
		if at < 0 {
			if st.floor-cur >= size {
				at, off = len(st.ext), cur
			} else {
				return &OutOfMemoryError{Op: op, Asked: asked, Left: free + max(0, st.floor-cur), SegmentBytes: r.cfg.SegmentBytes}
			}
		}
		if len(st.ext) >= maxExtents {
			return &OutOfMemoryError{Op: op, Asked: asked, TooManyRegions: true}
		}
		st.ext = slices.Insert(st.ext, at, extent{off, size})
		ever = st.ever
		st.high = max(st.high, off+size)
		if !told {
			st.ever = max(st.ever, off+size)
		}
		return r.writeSym(ctx, st)
	})
	return off, ever, err
}

func (r *Rank) symFree(ctx context.Context, off int64) error {
	return r.withAllocLock(ctx, func() error {
		st, err := r.readSym(ctx)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(st.ext, func(e extent) bool { return e.off == off })
		if i < 0 {
			return fmt.Errorf("pgas: free of symmetric offset %d: not a live allocation", off)
		}
		st.ext = slices.Delete(st.ext, i, i+1)
		st.high = headerBytes(r.n)
		if k := len(st.ext); k > 0 {
			st.high = st.ext[k-1].off + st.ext[k-1].size
		}
		return r.writeSym(ctx, st)
	})
}

// AllAlloc is collective (upc_all_alloc): every rank calls it with the same
// size, and every rank gets the same symmetric region of size bytes,
// zeroed on every rank. Unless Config.NoCheck, different sizes are an error
// naming the ranks.
func (r *Rank) AllAlloc(ctx context.Context, size int64) (Region, error) {
	if size < 0 {
		panic(fmt.Sprintf("pgas: AllAlloc of %d bytes", size))
	}
	slot := int64(hSlots + (r.allocs%2)*slotWords*8)
	r.allocs++
	if !r.cfg.NoCheck {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(size))
		if err := r.PutBytes(ctx, 0, hCheck+8*int64(r.id), b[:]); err != nil {
			return Region{}, err
		}
		if err := r.Barrier(ctx); err != nil {
			return Region{}, err
		}
	}
	if r.id == 0 {
		var res [slotWords]int64
		if mism := r.checkSizes(size); mism >= 0 {
			res = [slotWords]int64{codeCheck, int64(mism), size, int64(binary.LittleEndian.Uint64(r.seg[hCheck+8*mism:]))}
		} else {
			off, ever, err := r.symAlloc(ctx, "AllAlloc", size, true)
			if res, err = allocResult(size, off, ever, err); err != nil {
				return Region{}, err
			}
		}
		if err := r.publishSlot(ctx, r.World(), slot, res); err != nil {
			return Region{}, err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return Region{}, err
	}
	res := r.readSlot(slot)
	if res[0] == codeCheck {
		return Region{}, fmt.Errorf("pgas: AllAlloc arguments differ: rank 0 asked for %d bytes, rank %d for %d", res[2], res[1], res[3])
	}
	if err := slotError("AllAlloc", res, r.cfg.SegmentBytes); err != nil {
		return Region{}, err
	}
	reg := Region{Off: res[1], Size: size, Owner: -1}
	r.seeSym(res[3])
	r.zeroSym(reg.Off, size)
	if err := r.Barrier(ctx); err != nil {
		return Region{}, err
	}
	return reg, nil
}

// allocResult packs the outcome of a symmetric allocation into result-slot
// words (code, offset, size, and ever: the end of the highest symmetric
// block before this one); errors other than running out of memory are
// returned.
func allocResult(size, off, ever int64, err error) ([slotWords]int64, error) {
	if err == nil {
		return [slotWords]int64{codeOK, off, size, ever}, nil
	}
	oom, ok := err.(*OutOfMemoryError)
	if !ok {
		return [slotWords]int64{}, err
	}
	if oom.TooManyRegions {
		return [slotWords]int64{codeTooMany, 0, oom.Asked, 0}, nil
	}
	return [slotWords]int64{codeNoSpace, 0, oom.Asked, oom.Left}, nil
}

// publishSlot writes res into the result slot of every member of t.
func (r *Rank) publishSlot(ctx context.Context, t *Team, slot int64, res [slotWords]int64) error {
	var b [slotWords * 8]byte
	for i, v := range res {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	h := &Handle{}
	for tid := range t.size {
		p := t.RankOf(tid)
		if p == r.id {
			copy(r.seg[slot:], b[:])
			continue
		}
		r.putBytesAsync(ctx, p, slot, b[:], h)
	}
	return h.Wait(ctx)
}

// readSlot reads this rank's copy of a result slot.
func (r *Rank) readSlot(slot int64) [slotWords]int64 {
	var res [slotWords]int64
	for i := range res {
		res[i] = int64(binary.LittleEndian.Uint64(r.seg[slot+8*int64(i):]))
	}
	return res
}

// slotError turns a failed allocation result into its error.
func slotError(op string, res [slotWords]int64, segBytes int64) error {
	switch res[0] {
	case codeOK:
		return nil
	case codeNoSpace:
		return &OutOfMemoryError{Op: op, Asked: res[2], Left: res[3], SegmentBytes: segBytes}
	case codeTooMany:
		return &OutOfMemoryError{Op: op, Asked: res[2], TooManyRegions: true}
	}
	return fmt.Errorf("pgas: %s: corrupt result code %d", op, res[0])
}

// checkSizes returns the first rank whose AllAlloc size differs from size,
// or -1 (always -1 under Config.NoCheck).
func (r *Rank) checkSizes(size int64) int {
	if r.cfg.NoCheck {
		return -1
	}
	for p := range r.n {
		if int64(binary.LittleEndian.Uint64(r.seg[hCheck+8*p:])) != size {
			return p
		}
	}
	return -1
}

// GlobalAlloc is called by one rank (upc_global_alloc): it reserves a
// symmetric region of size bytes on every rank, zeroes it everywhere and
// returns it to the caller, who may pass the Region to other ranks through
// shared memory.
func (r *Rank) GlobalAlloc(ctx context.Context, size int64) (Region, error) {
	if size < 0 {
		panic(fmt.Sprintf("pgas: GlobalAlloc of %d bytes", size))
	}
	off, ever, err := r.symAlloc(ctx, "GlobalAlloc", size, false)
	if err != nil {
		return Region{}, err
	}
	r.seeSym(ever)
	reg := Region{Off: off, Size: size, Owner: -1}
	zero := make([]byte, min(size, r.cfg.FragmentBytes))
	h := &Handle{}
	for p := range r.n {
		for o := int64(0); o < size; o += int64(len(zero)) {
			n := min(int64(len(zero)), size-o)
			if p == r.id {
				r.zeroSym(off+o, n)
				continue
			}
			r.putBytesAsync(ctx, p, off+o, zero[:n], h)
		}
	}
	if err := h.Wait(ctx); err != nil {
		return Region{}, err
	}
	if err := r.Fence(ctx); err != nil {
		return Region{}, err
	}
	return reg, nil
}

// Alloc is called by one rank (upc_alloc): it returns a zeroed region of
// size bytes in the caller's own segment, which every rank can reach by
// (rank, offset).
func (r *Rank) Alloc(ctx context.Context, size int64) (Region, error) {
	if size < 0 {
		panic(fmt.Sprintf("pgas: Alloc of %d bytes", size))
	}
	asked := size
	size = max(align(size), allocAlign)
	off, ok := r.heap.take(size)
	if !ok {
		// Grow the local heap downward, under the allocator lock, staying
		// above the symmetric heap's high-water mark.
		grow := size
		if n := len(r.heap.free); n > 0 && r.heap.free[0].off == r.heap.low {
			grow -= r.heap.free[0].size
		}
		err := r.withAllocLock(ctx, func() error {
			st, err := r.readSym(ctx)
			if err != nil {
				return err
			}
			newLow := r.heap.low - grow
			if newLow < st.high {
				return &OutOfMemoryError{Op: "Alloc", Asked: asked, Left: r.heap.freeBytes() + max(0, r.heap.low-st.high), SegmentBytes: r.cfg.SegmentBytes}
			}
			if newLow < st.floor {
				st.floor = newLow
				var b [8]byte
				binary.LittleEndian.PutUint64(b[:], uint64(newLow))
				return r.PutBytes(ctx, 0, hFloor, b[:])
			}
			return nil
		})
		if err != nil {
			return Region{}, err
		}
		r.heap.release(r.heap.low-grow, grow)
		r.heap.low -= grow
		if off, ok = r.heap.take(size); !ok {
			return Region{}, fmt.Errorf("pgas: Alloc of %d bytes: local heap inconsistent after growing", size)
		}
	}
	r.zeroLocal(off, size)
	return Region{Off: off, Size: asked, Owner: r.id}, nil
}

// Free releases a region (upc_free). A symmetric region is freed by one
// rank, after every rank has stopped using it; a local region only by its
// owner. Freeing a region twice, or one that was never allocated, is an
// error.
func (r *Rank) Free(ctx context.Context, reg Region) error {
	if reg.Symmetric() {
		return r.symFree(ctx, reg.Off)
	}
	if reg.Owner != r.id {
		return fmt.Errorf("pgas: rank %d cannot free a region of rank %d's local heap", r.id, reg.Owner)
	}
	size := max(align(reg.Size), allocAlign)
	if !r.heap.live(reg.Off, size) {
		return fmt.Errorf("pgas: free of local offset %d (%d bytes) on rank %d: not a live allocation", reg.Off, reg.Size, r.id)
	}
	r.heap.release(reg.Off, size)
	return nil
}

// AllFree is collective: after a barrier, rank 0 frees the symmetric region
// reg. It is the counterpart of AllAlloc.
func (r *Rank) AllFree(ctx context.Context, reg Region) error {
	if !reg.Symmetric() {
		return fmt.Errorf("pgas: AllFree of rank %d's local region", reg.Owner)
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if r.id == 0 {
		return r.symFree(ctx, reg.Off)
	}
	return nil
}

// AllFreeUsed is AllFree for a region whose copy on this rank was written
// (by any rank) only in its first used bytes, the rest being still as
// AllAlloc handed it out, zero. It clears those bytes, so the region is
// zero again on every rank, and an allocation over it later need not
// clear the rest, which would make pages resident that nobody used (a
// table sized for the worst case, mostly empty). used may differ from
// rank to rank. Collective.
func (r *Rank) AllFreeUsed(ctx context.Context, reg Region, used int64) error {
	if !reg.Symmetric() {
		return fmt.Errorf("pgas: AllFreeUsed of rank %d's local region", reg.Owner)
	}
	if used < 0 || used > reg.Size || reg.Off < 0 || reg.Off+reg.Size > int64(len(r.seg)) {
		return fmt.Errorf("pgas: AllFreeUsed of %d bytes of region [%d,%d) of rank %d", used, reg.Off, reg.Off+reg.Size, r.id)
	}
	clear(r.seg[reg.Off : reg.Off+used])
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	r.fresh.cleanDirty(reg.Off, reg.Off+reg.Size)
	if r.id == 0 {
		return r.symFree(ctx, reg.Off)
	}
	return nil
}

// localHeap is a rank's private first-fit allocator over [low, end) of its
// own segment; only the rank itself allocates from it.
type localHeap struct {
	low  int64
	free []extent        // sorted, coalesced
	used map[int64]int64 // off -> size
}

func (h *localHeap) init(end int64) {
	h.low = end &^ (allocAlign - 1) // keep local regions 64-byte aligned
	h.used = map[int64]int64{}
}

func (h *localHeap) take(size int64) (int64, bool) {
	for i, e := range h.free {
		if e.size < size {
			continue
		}
		// Take from the top of the block so the heap stays compact at low.
		off := e.off + e.size - size
		if e.size == size {
			h.free = slices.Delete(h.free, i, i+1)
		} else {
			h.free[i].size -= size
		}
		h.used[off] = size
		return off, true
	}
	return 0, false
}

func (h *localHeap) live(off, size int64) bool { return h.used[off] == size }

func (h *localHeap) release(off, size int64) {
	delete(h.used, off)
	i, _ := slices.BinarySearchFunc(h.free, off, func(e extent, o int64) int { return cmpInt(e.off, o) })
	h.free = slices.Insert(h.free, i, extent{off, size})
	if i+1 < len(h.free) && h.free[i].off+h.free[i].size == h.free[i+1].off {
		h.free[i].size += h.free[i+1].size
		h.free = slices.Delete(h.free, i+1, i+2)
	}
	if i > 0 && h.free[i-1].off+h.free[i-1].size == h.free[i].off {
		h.free[i-1].size += h.free[i].size
		h.free = slices.Delete(h.free, i, i+1)
	}
}

func (h *localHeap) freeBytes() int64 {
	var t int64
	for _, e := range h.free {
		t += e.size
	}
	return t
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
