package nd

import (
	"context"
	"fmt"
	"slices"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas"
)

// View is an ND array of T over memory of one rank's segment, after
// UPC++'s ndarray (seeds/003 §4): the element at point p of its domain
// is at byte Base() + sum_k p_k * stride_k of its owner's segment. Views
// are values: Constrict, Translate, Slice and Transpose make new views
// of the same memory. A View belongs to the job of the rank it was made
// with; any rank of the job may copy from or to it (CopyFrom).
type View[T any] struct {
	r      *pgas.Rank
	owner  int
	origin int64 // byte offset of point 0 (perhaps outside the domain, even negative)
	stride Point // bytes per step along each dimension
	dom    Rect
}

// NewView returns the row-major view over dom of rank owner's segment
// whose element at dom.Lo is at byte off: a descriptor over memory that
// already exists (an allocation of the job). It panics if the view's
// bytes are not in the segment or owner is not a rank of the job.
func NewView[T any](r *pgas.Rank, owner int, off int64, dom Rect) View[T] {
	esz := int64(unsafe.Sizeof(*new(T)))
	n := dom.Dims()
	st := make(Point, n)
	acc := esz
	for k := n - 1; k >= 0; k-- {
		st[k] = acc
		acc *= max(dom.Hi[k]-dom.Lo[k], 0)
	}
	origin := off
	for k := range n {
		origin -= dom.Lo[k] * st[k]
	}
	v := View[T]{r: r, owner: owner, origin: origin, stride: st, dom: Box(dom.Lo, dom.Hi)}
	if owner < 0 || owner >= r.N() {
		panic(fmt.Sprintf("nd: NewView on rank %d of %d", owner, r.N()))
	}
	if s := v.strided(); s.Check(int64(len(r.Segment()))) != nil {
		panic(fmt.Sprintf("nd: NewView: %v", s.Check(int64(len(r.Segment())))))
	}
	return v
}

// Domain is the view's box of points.
func (v View[T]) Domain() Rect { return Box(v.dom.Lo, v.dom.Hi) }

// Owner is the rank whose segment holds the view's elements.
func (v View[T]) Owner() int { return v.owner }

func (v View[T]) esz() int64 { return int64(unsafe.Sizeof(*new(T))) }

// Offset is the byte offset in the owner's segment of the element at
// point p (in the domain), for transfers made by hand.
func (v View[T]) Offset(p Point) int64 {
	if !v.dom.Contains(p) {
		panic(fmt.Sprintf("nd: Offset %v of a view over %v", p, v.dom))
	}
	return v.addr(p)
}

// addr is the byte offset of point p.
func (v View[T]) addr(p Point) int64 {
	a := v.origin
	for k, x := range p {
		a += x * v.stride[k]
	}
	return a
}

// Constrict is the view restricted to the points also in box.
func (v View[T]) Constrict(box Rect) View[T] {
	v.dom = v.dom.Intersect(box)
	return v
}

// Translate is the view with its domain moved by d: its point p+d is the
// receiver's point p.
func (v View[T]) Translate(d Point) View[T] {
	v.dom = v.dom.Translate(d)
	for k, x := range d {
		v.origin -= x * v.stride[k]
	}
	return v
}

// Slice is the (d-1)-dimensional view of the points whose index along
// dimension k is x. It panics if x is not in the domain along k.
func (v View[T]) Slice(k int, x int64) View[T] {
	if k < 0 || k >= v.dom.Dims() || x < v.dom.Lo[k] || x >= v.dom.Hi[k] {
		panic(fmt.Sprintf("nd: Slice(%d, %d) of a view over %v", k, x, v.dom))
	}
	out := v
	out.origin += x * v.stride[k]
	out.stride = slices.Delete(slices.Clone(v.stride), k, k+1)
	out.dom = Rect{Lo: slices.Delete(clonePoint(v.dom.Lo), k, k+1), Hi: slices.Delete(clonePoint(v.dom.Hi), k, k+1)}
	return out
}

// Transpose is the view whose dimension j is the receiver's dimension
// perm[j]. It panics if perm is not a permutation of the dimensions.
func (v View[T]) Transpose(perm ...int) View[T] {
	n := v.dom.Dims()
	seen := make([]bool, n)
	for _, p := range perm {
		if p < 0 || p >= n || seen[p] {
			panic(fmt.Sprintf("nd: Transpose(%v) of a %d-dimensional view", perm, n))
		}
		seen[p] = true
	}
	if len(perm) != n {
		panic(fmt.Sprintf("nd: Transpose(%v) of a %d-dimensional view", perm, n))
	}
	out := v
	out.stride, out.dom = make(Point, n), Rect{Lo: make(Point, n), Hi: make(Point, n)}
	for j, p := range perm {
		out.stride[j], out.dom.Lo[j], out.dom.Hi[j] = v.stride[p], v.dom.Lo[p], v.dom.Hi[p]
	}
	return out
}

// Strided is the view's elements as a strided box of its owner's
// segment, for transfers made by hand (pgas.Rank.GetStrided, PutStrided,
// transport.CopyStrided on the rank's own segment).
func (v View[T]) Strided() pgas.Strided { return v.strided() }

// strided is the view's elements as a strided box of its owner's segment.
func (v View[T]) strided() pgas.Strided {
	s := pgas.Strided{Off: v.addr(v.dom.Lo), Shape: v.dom.Shape(), Strides: clonePoint(v.stride), Elem: v.esz()}
	if s.Count() == 0 {
		s.Off = 0
	}
	return s
}

// At returns a pointer to the element at p, which must be in the domain,
// of a view this rank owns (it panics otherwise): the privatised access.
func (v View[T]) At(p Point) *T {
	if v.owner != v.r.ID() || !v.dom.Contains(p) {
		panic(fmt.Sprintf("nd: At %v of a view over %v owned by rank %d, from rank %d", p, v.dom, v.owner, v.r.ID()))
	}
	return (*T)(unsafe.Pointer(&v.r.Segment()[v.addr(p)]))
}

// Get returns the element at p (in the domain) through the runtime.
func (v View[T]) Get(ctx context.Context, p Point) (T, error) {
	var x T
	if !v.dom.Contains(p) {
		panic(fmt.Sprintf("nd: Get %v of a view over %v", p, v.dom))
	}
	err := v.r.GetBytes(ctx, v.owner, v.addr(p), unsafe.Slice((*byte)(unsafe.Pointer(&x)), v.esz()))
	return x, err
}

// Put stores x at p (in the domain) through the runtime; a remote put is
// complete at the next Fence or Barrier.
func (v View[T]) Put(ctx context.Context, p Point, x T) error {
	if !v.dom.Contains(p) {
		panic(fmt.Sprintf("nd: Put %v of a view over %v", p, v.dom))
	}
	return v.r.PutBytes(ctx, v.owner, v.addr(p), unsafe.Slice((*byte)(unsafe.Pointer(&x)), v.esz()))
}

// CopyFrom copies src's elements at the points of both domains into v's
// (UPC++'s A.copy(B)), packed into one message per rank pair: one
// strided get when src is another rank's and v this rank's, one strided
// put when src is this rank's and v another's (complete at the target
// at this rank's next Fence or Barrier, as a put is), a get and a put
// when both are others', no message when both are this rank's. The
// domains must have as many dimensions; the elements of v's part must
// not overlap each other (views made by this package never do).
func (v View[T]) CopyFrom(ctx context.Context, src View[T]) error {
	return v.CopyFromAsync(ctx, src).Wait(ctx)
}

// CopyHandle is an outstanding CopyFromAsync.
type CopyHandle struct {
	h      *pgas.Handle
	finish func(ctx context.Context) error // what is left once h is done, or nil
	what   string                          // the copy, for errors
}

// Wait blocks until the copy is complete as CopyFrom leaves it (a put to
// another rank complete at this rank's next Fence or Barrier) and returns
// its error. Waiting again returns nil.
func (c *CopyHandle) Wait(ctx context.Context) error {
	var err error
	if c.h != nil {
		err = c.h.Wait(ctx)
	}
	if c.finish != nil && err == nil {
		err = c.finish(ctx)
	}
	if err != nil {
		err = fmt.Errorf("nd: copy of %s: %w", c.what, err)
	}
	*c = CopyHandle{}
	return err
}

// CopyFromAsync starts CopyFrom's copy and returns a handle whose Wait
// finishes it: the elements of src must not change, nor v's be read,
// until then. Several copies may be outstanding at once (a ghost-zone
// exchange starts one per neighbour and waits for all). The transfer to
// or from another rank starts before it returns; where the data comes to
// this rank for another rank (both views others'), the put waits for
// Wait.
func (v View[T]) CopyFromAsync(ctx context.Context, src View[T]) *CopyHandle {
	if v.dom.Dims() != src.dom.Dims() {
		panic(fmt.Sprintf("nd: copy between views of %d and %d dimensions", v.dom.Dims(), src.dom.Dims()))
	}
	if v.r != src.r {
		panic("nd: copy between views made with different ranks")
	}
	in := v.dom.Intersect(src.dom)
	if in.Empty() {
		return &CopyHandle{}
	}
	d, s := v.Constrict(in).strided(), src.Constrict(in).strided()
	buf := make([]byte, s.Bytes())
	what := fmt.Sprintf("%v from rank %d to rank %d", in, src.owner, v.owner)
	h := v.r.GetStridedAsync(ctx, src.owner, s, buf, nil)
	if src.owner == v.r.ID() { // packed already: the put can start
		return &CopyHandle{h: v.r.PutStridedAsync(ctx, v.owner, d, buf, h), what: what}
	}
	return &CopyHandle{h: h, what: what, finish: func(ctx context.Context) error {
		return v.r.PutStrided(ctx, v.owner, d, buf)
	}}
}

// Grid is one box of T on every rank of a job (each rank's own domain),
// the storage of a block-distributed structured grid such as miniGMG's:
// rank p's elements are the row-major box Domain(p) of its segment.
type Grid[T any] struct {
	r    *pgas.Rank
	doms []Rect
	reg  pgas.Region
}

// AllAllocGrid allocates the boxes doms[p] on every rank p (collective:
// every rank passes the same doms). Elements start zeroed.
func AllAllocGrid[T any](ctx context.Context, r *pgas.Rank, doms []Rect) (*Grid[T], error) {
	if len(doms) != r.N() {
		panic(fmt.Sprintf("nd: AllAllocGrid with %d domains for %d ranks", len(doms), r.N()))
	}
	esz := int64(unsafe.Sizeof(*new(T)))
	var most int64
	for _, d := range doms {
		most = max(most, d.Size())
	}
	reg, err := r.AllAlloc(ctx, max(most*esz, 8))
	if err != nil {
		return nil, fmt.Errorf("nd: grid of %d boxes: %w", len(doms), err)
	}
	g := &Grid[T]{r: r, reg: reg, doms: make([]Rect, len(doms))}
	for p, d := range doms {
		g.doms[p] = Box(d.Lo, d.Hi)
	}
	return g, nil
}

// Domain is rank p's box.
func (g *Grid[T]) Domain(p int) Rect { return Box(g.doms[p].Lo, g.doms[p].Hi) }

// View is rank p's box as a view.
func (g *Grid[T]) View(p int) View[T] { return NewView[T](g.r, p, g.reg.Off, g.doms[p]) }

// Local is this rank's box as a slice, row-major.
func (g *Grid[T]) Local() []T {
	n := g.doms[g.r.ID()].Size()
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&g.r.Segment()[g.reg.Off])), n)
}

// AllFree frees the grid (collective).
func (g *Grid[T]) AllFree(ctx context.Context) error { return g.r.AllFree(ctx, g.reg) }
