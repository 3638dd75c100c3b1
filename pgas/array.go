package pgas

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"unsafe"

	"github.com/pgasmr/pgasmr/internal/elem"
)

// Array is a shared array, shared [Block] T[N] in UPC, over segment memory.
// T must be a fixed-size type without Go pointers (numbers, bools, arrays
// and structs of them): segment memory may be a shared-memory mapping or an
// MPI window, where Go pointers cannot live. Allocation reports any other
// type as an error.
//
// Element access takes the local fast path when this rank owns the element
// and goes through the transport otherwise. Local and MyBlocks give this
// rank's partition as ordinary slices (privatisation), the fast way to work
// on owned data.
type Array[T any] struct {
	r     *Rank
	lay   Layout
	reg   Region
	esz   int64
	local []T
}

// ArrayRef describes an array as plain data, so that one rank can publish
// an array it allocated (GlobalAllocArray, AllocArray) in shared memory and
// others can open it with OpenArray.
type ArrayRef struct {
	Layout Layout
	Region Region
}

// CheckElem reports whether T can live in segment memory.
func CheckElem[T any]() error {
	t := reflect.TypeFor[T]()
	if err := elem.Raw(t); err != nil {
		return fmt.Errorf("pgas: element type %v cannot live in shared memory: %w; use fixed-size, pointer-free types", t, err)
	}
	return nil
}

// AllAllocArray is collective (upc_all_alloc): every rank calls it with the
// same n and blk and gets the same array of n zero elements distributed as
// shared [blk] T[n]. blk may be Cyclic, a block size, Star or Indefinite
// (all on rank 0).
func AllAllocArray[T any](ctx context.Context, r *Rank, n, blk int64) (*Array[T], error) {
	if err := CheckElem[T](); err != nil {
		return nil, err
	}
	lay := NewLayout(n, blk, r.n, 0)
	reg, err := r.AllAlloc(ctx, lay.LocalCap()*int64(unsafe.Sizeof(*new(T))))
	if err != nil {
		return nil, err
	}
	return openArray[T](r, ArrayRef{lay, reg}), nil
}

// GlobalAllocArray is called by one rank (upc_global_alloc): it allocates a
// zeroed array distributed as shared [blk] T[n] over all ranks and returns
// it to the caller only; publish its Ref to share it.
func GlobalAllocArray[T any](ctx context.Context, r *Rank, n, blk int64) (*Array[T], error) {
	if err := CheckElem[T](); err != nil {
		return nil, err
	}
	lay := NewLayout(n, blk, r.n, 0)
	reg, err := r.GlobalAlloc(ctx, lay.LocalCap()*int64(unsafe.Sizeof(*new(T))))
	if err != nil {
		return nil, err
	}
	return openArray[T](r, ArrayRef{lay, reg}), nil
}

// AllocArray is called by one rank (upc_alloc): it allocates n zero
// elements in the caller's own segment, an array with affinity to the
// caller (shared [] T[n] on this rank), reachable by every rank through
// its Ref.
func AllocArray[T any](ctx context.Context, r *Rank, n int64) (*Array[T], error) {
	if err := CheckElem[T](); err != nil {
		return nil, err
	}
	lay := NewLayout(n, Indefinite, r.n, r.id)
	reg, err := r.Alloc(ctx, n*int64(unsafe.Sizeof(*new(T))))
	if err != nil {
		return nil, err
	}
	return openArray[T](r, ArrayRef{lay, reg}), nil
}

// OpenArray returns this rank's handle on the array ref describes.
func OpenArray[T any](r *Rank, ref ArrayRef) (*Array[T], error) {
	if err := CheckElem[T](); err != nil {
		return nil, err
	}
	l := ref.Layout
	if l.Ranks != r.n {
		return nil, fmt.Errorf("pgas: array ref for %d ranks opened in a job of %d", l.Ranks, r.n)
	}
	if l.N < 0 || l.Block < 1 || l.First < 0 || l.First >= l.Ranks {
		return nil, fmt.Errorf("pgas: array ref has an invalid layout %+v", l)
	}
	if !ref.Region.Symmetric() && (ref.Region.Owner != l.First || l.Blocks() > 1 || ref.Region.Owner >= r.n) {
		return nil, fmt.Errorf("pgas: array ref %+v: a local region holds only an indefinite array on its owner", ref)
	}
	need := ref.Layout.LocalCap() * int64(unsafe.Sizeof(*new(T)))
	if !ref.Region.Symmetric() {
		need = ref.Layout.N * int64(unsafe.Sizeof(*new(T)))
	}
	if ref.Region.Size < need || ref.Region.Off < 0 || ref.Region.Off+ref.Region.Size > r.cfg.SegmentBytes {
		return nil, fmt.Errorf("pgas: array ref %+v does not fit its region", ref)
	}
	return openArray[T](r, ref), nil
}

func openArray[T any](r *Rank, ref ArrayRef) *Array[T] {
	a := &Array[T]{r: r, lay: ref.Layout, reg: ref.Region, esz: int64(unsafe.Sizeof(*new(T)))}
	if n := a.lay.LocalLen(r.id); n > 0 && (ref.Region.Symmetric() || ref.Region.Owner == r.id) {
		a.local = unsafe.Slice((*T)(unsafe.Pointer(&r.seg[a.reg.Off])), n)
	}
	return a
}

// Ref returns the array's description as plain data.
func (a *Array[T]) Ref() ArrayRef { return ArrayRef{a.lay, a.reg} }

// Layout returns the array's distribution.
func (a *Array[T]) Layout() Layout { return a.lay }

// Len returns the number of elements.
func (a *Array[T]) Len() int64 { return a.lay.N }

// Rank returns the rank this handle belongs to.
func (a *Array[T]) Rank() *Rank { return a.r }

// Local returns this rank's partition as a slice (privatisation): element k
// of it is global element Layout().GlobalIndex(ID, k). It aliases segment
// memory: other ranks' puts land in it, ordered by barriers and locks.
func (a *Array[T]) Local() []T { return a.local }

// MyBlocks iterates over the blocks this rank owns, in increasing order,
// yielding each block's first global index and the block as a slice of the
// local partition.
func (a *Array[T]) MyBlocks() iter.Seq2[int64, []T] {
	return func(yield func(int64, []T) bool) {
		l, me := a.lay, a.r.id
		for lo := int64(0); lo < int64(len(a.local)); lo += l.Block {
			hi := min(lo+l.Block, int64(len(a.local)))
			if !yield(l.GlobalIndex(me, lo), a.local[lo:hi]) {
				return
			}
		}
	}
}

// ForAll iterates over the global indices of the elements this rank owns,
// in increasing order, the way upc_forall with an affinity expression does:
// by testing the owner of every index. MyBlocks is the fast way.
func (a *Array[T]) ForAll() iter.Seq[int64] {
	return func(yield func(int64) bool) {
		for i := int64(0); i < a.lay.N; i++ {
			if a.lay.Owner(i) == a.r.id && !yield(i) {
				return
			}
		}
	}
}

func (a *Array[T]) check(i, n int64) {
	if i < 0 || n < 0 || i > a.lay.N || n > a.lay.N-i {
		panic(fmt.Sprintf("pgas: elements [%d,%d) out of range [0,%d)", i, i+n, a.lay.N))
	}
}

// locate returns the owner of element i and its index there, with one
// division by the block size and one by the rank count.
func (a *Array[T]) locate(i int64) (int, int64) {
	l := &a.lay
	b := i / l.Block
	ph := i - b*l.Block
	rb := b / int64(l.Ranks)
	owner := int64(l.First) + b - rb*int64(l.Ranks)
	if owner >= int64(l.Ranks) {
		owner -= int64(l.Ranks)
	}
	return int(owner), rb*l.Block + ph
}

// Locate returns the owner of element i and the byte offset of the element
// in the owner's segment. It panics if i is out of range.
func (a *Array[T]) Locate(i int64) (rank int, off int64) {
	a.check(i, 1)
	return a.offset(i)
}

// offset returns the owner and byte offset of element i.
func (a *Array[T]) offset(i int64) (int, int64) {
	return a.lay.Owner(i), a.reg.Off + a.lay.LocalIndex(i)*a.esz
}

// Bytes returns the memory of s as bytes (no copy). T must be a type
// CheckElem accepts.
func Bytes[T any](s []T) []byte {
	return sliceBytes(s, int64(unsafe.Sizeof(*new(T))))
}

func sliceBytes[T any](s []T, esz int64) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), int64(len(s))*esz)
}

// scratch returns an 8-byte aligned private buffer of n bytes.
func (r *Rank) scratchBytes(n int64) []byte {
	if w := (n + 7) / 8; int64(len(r.scratch)) < w {
		r.scratch = make([]uint64, w)
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&r.scratch[0])), n)
}

// Get returns element i. It panics if i is out of range.
func (a *Array[T]) Get(ctx context.Context, i int64) (T, error) {
	a.check(i, 1)
	owner, li := a.locate(i)
	if owner == a.r.id {
		a.r.stats.countLocal(OpGet, int(a.esz))
		return a.local[li], nil
	}
	off := a.reg.Off + li*a.esz
	buf := a.r.scratchBytes(a.esz)
	if c := a.r.cache; c != nil && a.esz <= int64(c.cfg.LineBytes) {
		if err := c.get(ctx, owner, off, buf); err != nil {
			var zero T
			return zero, fmt.Errorf("pgas: get element %d from rank %d: %w", i, owner, err)
		}
		return *(*T)(unsafe.Pointer(&buf[0])), nil
	}
	a.r.countRemote(OpGet, owner, 0, int(a.esz))
	if err := a.r.ep.Get(ctx, owner, off, buf); err != nil {
		var zero T
		return zero, fmt.Errorf("pgas: get element %d from rank %d: %w", i, owner, err)
	}
	return *(*T)(unsafe.Pointer(&buf[0])), nil
}

// Put stores v as element i. A remote put is complete at the next Fence or
// Barrier. It panics if i is out of range.
func (a *Array[T]) Put(ctx context.Context, i int64, v T) error {
	a.check(i, 1)
	owner, li := a.locate(i)
	if owner == a.r.id {
		a.r.stats.countLocal(OpPut, int(a.esz))
		a.local[li] = v
		return nil
	}
	off := a.reg.Off + li*a.esz
	buf := a.r.scratchBytes(a.esz)
	*(*T)(unsafe.Pointer(&buf[0])) = v
	if c := a.r.cache; c != nil && a.esz <= int64(c.cfg.LineBytes) {
		if err := c.put(ctx, owner, off, buf); err != nil {
			return fmt.Errorf("pgas: put element %d to rank %d: %w", i, owner, err)
		}
		return nil
	}
	a.r.countRemote(OpPut, owner, int(a.esz), 0)
	if err := a.r.ep.Put(ctx, owner, off, buf); err != nil {
		return fmt.Errorf("pgas: put element %d to rank %d: %w", i, owner, err)
	}
	return nil
}

// pieces calls fn for each maximal run of [start, start+n) inside one
// block: its owner, the byte offset of its first element there, and its
// position [lo, hi) relative to start.
func (a *Array[T]) pieces(start, n int64, fn func(owner int, off, lo, hi int64)) {
	l := a.lay
	for i, end := start, start+n; i < end; {
		b := i / l.Block
		ph := i - b*l.Block
		cnt := min(l.Block-ph, end-i)
		owner := int((int64(l.First) + b) % int64(l.Ranks))
		off := a.reg.Off + ((b/int64(l.Ranks))*l.Block+ph)*a.esz
		fn(owner, off, i-start, i-start+cnt)
		i += cnt
	}
}

// GetRangeAsync starts copying elements [start, start+len(dst)) into dst,
// which may span blocks and ranks; local pieces are copied before it
// returns, remote ones by one transfer per block piece (split at
// Config.FragmentBytes). dst must not be read until the handle's Wait
// returns. It panics if the range is out of bounds.
func (a *Array[T]) GetRangeAsync(ctx context.Context, dst []T, start int64) *Handle {
	a.check(start, int64(len(dst)))
	h := &Handle{}
	b := sliceBytes(dst, a.esz)
	a.pieces(start, int64(len(dst)), func(owner int, off, lo, hi int64) {
		part := b[lo*a.esz : hi*a.esz]
		if owner == a.r.id {
			copy(part, a.r.seg[off:])
			a.r.stats.countLocal(OpGet, len(part))
			return
		}
		a.r.getBytesAsync(ctx, owner, off, part, h)
	})
	return h
}

// GetAsync starts reading element i into *dst; *dst must not be read
// until the handle's Wait returns. Several outstanding GetAsync calls
// overlap their latencies.
func (a *Array[T]) GetAsync(ctx context.Context, i int64, dst *T) *Handle {
	return a.GetRangeAsync(ctx, unsafe.Slice(dst, 1), i)
}

// PutAsync starts storing v as element i; the value is copied, and the
// put is complete at the next Fence or Barrier.
func (a *Array[T]) PutAsync(ctx context.Context, i int64, v T) *Handle {
	return a.PutRangeAsync(ctx, i, []T{v})
}

// GetRange copies elements [start, start+len(dst)) into dst (upc_memget
// across blocks and ranks).
func (a *Array[T]) GetRange(ctx context.Context, dst []T, start int64) error {
	return a.GetRangeAsync(ctx, dst, start).Wait(ctx)
}

// PutRangeAsync starts storing src as elements [start, start+len(src)).
// src must not be modified until the handle's Wait returns; the data is
// complete at its targets at the next Fence or Barrier.
func (a *Array[T]) PutRangeAsync(ctx context.Context, start int64, src []T) *Handle {
	a.check(start, int64(len(src)))
	h := &Handle{}
	b := sliceBytes(src, a.esz)
	a.pieces(start, int64(len(src)), func(owner int, off, lo, hi int64) {
		part := b[lo*a.esz : hi*a.esz]
		if owner == a.r.id {
			copy(a.r.seg[off:], part)
			a.r.stats.countLocal(OpPut, len(part))
			return
		}
		a.r.putBytesAsync(ctx, owner, off, part, h)
	})
	return h
}

// PutRange stores src as elements [start, start+len(src)) (upc_memput).
func (a *Array[T]) PutRange(ctx context.Context, start int64, src []T) error {
	return a.PutRangeAsync(ctx, start, src).Wait(ctx)
}

// Set stores v in elements [start, start+n) (upc_memset).
func (a *Array[T]) Set(ctx context.Context, start, n int64, v T) error {
	a.check(start, n)
	chunk := make([]T, min(n, max(1, a.r.cfg.FragmentBytes/a.esz)))
	for i := range chunk {
		chunk[i] = v
	}
	for done := int64(0); done < n; done += int64(len(chunk)) {
		k := min(int64(len(chunk)), n-done)
		if err := a.PutRange(ctx, start+done, chunk[:k]); err != nil {
			return err
		}
	}
	return nil
}

// Copy copies n elements from src[srcStart:] to dst[dstStart:]
// (upc_memcpy), staging through a private buffer of at most
// Config.FragmentBytes. The arrays may differ in layout; they must not
// overlap unless dst == src and the ranges do not.
func Copy[T any](ctx context.Context, dst *Array[T], dstStart int64, src *Array[T], srcStart, n int64) error {
	src.check(srcStart, n)
	dst.check(dstStart, n)
	buf := make([]T, min(n, max(1, src.r.cfg.FragmentBytes/src.esz)))
	for done := int64(0); done < n; done += int64(len(buf)) {
		k := min(int64(len(buf)), n-done)
		if err := src.GetRange(ctx, buf[:k], srcStart+done); err != nil {
			return err
		}
		if err := dst.PutRange(ctx, dstStart+done, buf[:k]); err != nil {
			return err
		}
	}
	return nil
}

// PtrTo returns the pointer-to-shared of element i; i may be N (one past the
// end). It panics if i is out of range.
func (a *Array[T]) PtrTo(i int64) Ptr {
	a.check(i, 0)
	b := i / a.lay.Block
	return Ptr{
		Rank:  int((int64(a.lay.First) + b) % int64(a.lay.Ranks)),
		Phase: i % a.lay.Block,
		Off:   a.reg.Off + a.lay.LocalIndex(i)*a.esz,
	}
}

// Add returns p advanced by k elements (k may be negative), carrying the
// phase across block and rank boundaries as UPC pointer arithmetic does,
// from the pointer's own fields.
func (a *Array[T]) Add(p Ptr, k int64) Ptr {
	l := a.lay
	blk, ranks := l.Block, int64(l.Ranks)
	localBlock := ((p.Off-a.reg.Off)/a.esz - p.Phase) / blk
	q := p.Phase + k
	db := floorDiv(q, blk)
	phase := q - db*blk
	rel := (int64(p.Rank)-int64(l.First)+ranks)%ranks + db
	localBlock += floorDiv(rel, ranks)
	rel -= floorDiv(rel, ranks) * ranks
	return Ptr{
		Rank:  int((rel + int64(l.First)) % ranks),
		Phase: phase,
		Off:   a.reg.Off + (localBlock*blk+phase)*a.esz,
	}
}

// IndexOf returns the global index p points at.
func (a *Array[T]) IndexOf(p Ptr) int64 {
	localIdx := (p.Off - a.reg.Off) / a.esz
	return a.lay.GlobalIndex(p.Rank, localIdx)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Free releases the array's memory; see Rank.Free for who may call it.
func (a *Array[T]) Free(ctx context.Context) error { return a.r.Free(ctx, a.reg) }

// AllFree releases a symmetric array collectively; see Rank.AllFree.
func (a *Array[T]) AllFree(ctx context.Context) error { return a.r.AllFree(ctx, a.reg) }

// FetchAdd atomically adds delta to element i of a and returns its old
// value; the operation runs at the element's owner.
func FetchAdd(ctx context.Context, a *Array[int64], i, delta int64) (int64, error) {
	a.check(i, 1)
	owner, off := a.offset(i)
	return a.r.FetchAdd(ctx, owner, off, delta)
}

// CompareAndSwap atomically sets element i of a to new if it holds old, and
// returns the value it held; the operation runs at the element's owner.
func CompareAndSwap(ctx context.Context, a *Array[int64], i, old, new int64) (int64, error) {
	a.check(i, 1)
	owner, off := a.offset(i)
	return a.r.CompareAndSwap(ctx, owner, off, old, new)
}

// AtomicLoad atomically reads element i of a at its owner.
func AtomicLoad(ctx context.Context, a *Array[int64], i int64) (int64, error) {
	a.check(i, 1)
	owner, off := a.offset(i)
	return a.r.AtomicLoad(ctx, owner, off)
}
