// Package minigmg is the ghost-zone exchange of seeds/003's miniGMG on a
// 3-D 7-point stencil: a cubic grid of N^3 cells block-distributed over
// the ranks (one box each, with a ghost zone one cell deep), smoothed by
// weighted Jacobi steps, each after an exchange of the six face ghost
// zones, written in the three styles the seed compares:
//
//   - Bulk: each rank packs the face a neighbour needs into one buffer
//     and puts it into that neighbour's receive slot (one message per
//     neighbour); after a barrier every rank unpacks its slots into its
//     ghost cells (the MPI structure, one-sided).
//   - Fine: each rank puts every ghost cell a neighbour needs straight
//     into the neighbour's box, one 8-byte element put per cell.
//   - Array: each rank copies the part of its box a neighbour needs into
//     the neighbour's ghost zone with one ND view copy
//     (nd.View.CopyFromAsync: a strided put), all started before any is
//     waited on, the runtime doing the packing.
//
// Every style gives the sequential result bit for bit (Sequential): a
// cell's new value depends only on old values, added in one fixed order.
package minigmg

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/nd"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Style is a way of exchanging ghost zones.
type Style int

// The styles of seeds/003.
const (
	Bulk Style = iota
	Fine
	Array
)

// Styles lists every style.
var Styles = []Style{Bulk, Fine, Array}

func (s Style) String() string {
	switch s {
	case Bulk:
		return "bulk"
	case Fine:
		return "fine"
	case Array:
		return "array"
	}
	return fmt.Sprintf("Style(%d)", int(s))
}

// ParseStyle reads "bulk", "fine" or "array".
func ParseStyle(s string) (Style, error) {
	for _, x := range Styles {
		if x.String() == s {
			return x, nil
		}
	}
	return 0, fmt.Errorf("minigmg: unknown style %q (want bulk, fine or array)", s)
}

// omega is the Jacobi weight.
const omega = 2.0 / 3

// U0 and F are the initial value and the right-hand side at cell (i,
// j, k): small dyadic numbers, so sums are exact and easy to compare.
func U0(i, j, k int64) float64 { return float64((i*7+j*3+k*5)%9) / 8 }
func F(i, j, k int64) float64  { return float64((i*5+j*11+k)%7) / 4 }

// update is one cell's Jacobi step, the one formula every version uses:
// the neighbours are added in the order -i, +i, -j, +j, -k, +k.
func update(u, f, im, ip, jm, jp, km, kp float64) float64 {
	nb := ((((im + ip) + jm) + jp) + km) + kp
	return u + omega*(f-(6*u-nb))/6
}

// Sequential returns the n^3 cells (row-major) after steps Jacobi steps
// from U0 with right-hand side F and zero values outside the cube.
func Sequential(n int64, steps int) []float64 {
	u := make([]float64, n*n*n)
	v := make([]float64, n*n*n)
	at := func(a []float64, i, j, k int64) float64 {
		if i < 0 || j < 0 || k < 0 || i >= n || j >= n || k >= n {
			return 0
		}
		return a[(i*n+j)*n+k]
	}
	for i := range n {
		for j := range n {
			for k := range n {
				u[(i*n+j)*n+k] = U0(i, j, k)
			}
		}
	}
	for range steps {
		for i := range n {
			for j := range n {
				for k := range n {
					v[(i*n+j)*n+k] = update(u[(i*n+j)*n+k], F(i, j, k),
						at(u, i-1, j, k), at(u, i+1, j, k), at(u, i, j-1, k), at(u, i, j+1, k), at(u, i, j, k-1), at(u, i, j, k+1))
				}
			}
		}
		u, v = v, u
	}
	return u
}

// ProcGrid returns the ranks along each dimension, px*py*pz = ranks, as
// even as the factors allow (8 -> 2x2x2, 4 -> 2x2x1, 12 -> 2x2x3).
func ProcGrid(ranks int) [3]int {
	g := [3]int{1, 1, 1}
	rest := ranks
	for f := 2; rest > 1; {
		if rest%f != 0 {
			f++
			continue
		}
		rest /= f
		// Give the factor to the dimension with the fewest ranks.
		m := 0
		for d := 1; d < 3; d++ {
			if g[d] < g[m] {
				m = d
			}
		}
		g[m] *= f
	}
	return g
}

// Decompose returns each rank's interior box of an n^3 cube split over
// ProcGrid(ranks): rank (a, b, c) of the grid, numbered a*py*pz+b*pz+c,
// holds [a*n/px, (a+1)*n/px) x ... .
func Decompose(n int64, ranks int) []nd.Rect {
	g := ProcGrid(ranks)
	out := make([]nd.Rect, 0, ranks)
	for a := range g[0] {
		for b := range g[1] {
			for c := range g[2] {
				co := [3]int{a, b, c}
				r := nd.Rect{Lo: make(nd.Point, 3), Hi: make(nd.Point, 3)}
				for d := range 3 {
					r.Lo[d] = int64(co[d]) * n / int64(g[d])
					r.Hi[d] = int64(co[d]+1) * n / int64(g[d])
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// face is one ghost face of a rank's box: the cells of its ghost zone
// next to dimension d's side (side 0 low, 1 high), which neighbour
// holds as interior cells.
type face struct {
	d, side   int
	neighbour int
	box       nd.Rect // in global coordinates
}

// faces returns the faces of rank p's box that another rank supplies
// (faces on the cube's surface have no neighbour and stay zero).
func faces(interiors []nd.Rect, p int) []face {
	var out []face
	me := interiors[p]
	for d := range 3 {
		for side := range 2 {
			b := nd.Box(me.Lo, me.Hi)
			if side == 0 {
				b.Lo[d], b.Hi[d] = me.Lo[d]-1, me.Lo[d]
			} else {
				b.Lo[d], b.Hi[d] = me.Hi[d], me.Hi[d]+1
			}
			for q, in := range interiors {
				if q != p && in.Covers(b) && !b.Empty() {
					out = append(out, face{d: d, side: side, neighbour: q, box: b})
				}
			}
		}
	}
	return out
}

// Solver is one rank's part of a run.
type Solver struct {
	r         *pgas.Rank
	style     Style
	n         int64
	interiors []nd.Rect
	u, v      *nd.Grid[float64] // the current and next values, boxes grown by the ghost zone
	f         []float64         // the right-hand side on this rank's grown box
	mine      []face            // this rank's ghost faces, filled by neighbours
	theirs    []face            // the neighbours' faces this rank fills
	slots     pgas.Region       // Bulk: two sets of 6 receive slots of slotBytes
	slotBytes int64
	pack      []byte
	steps     int64 // exchanges done: which set of slots is next
}

// NewSolver sets up a run of an n^3 cube (collective).
func NewSolver(ctx context.Context, r *pgas.Rank, n int64, style Style) (*Solver, error) {
	if n < 1 {
		return nil, fmt.Errorf("minigmg: a cube of %d cells a side", n)
	}
	s := &Solver{r: r, style: style, n: n, interiors: Decompose(n, r.N())}
	grown := make([]nd.Rect, r.N())
	for p, in := range s.interiors {
		grown[p] = in.Grow(1)
	}
	var err error
	if s.u, err = nd.AllAllocGrid[float64](ctx, r, grown); err != nil {
		return nil, err
	}
	if s.v, err = nd.AllAllocGrid[float64](ctx, r, grown); err != nil {
		return nil, err
	}
	me := r.ID()
	s.mine = faces(s.interiors, me)
	for q := range r.N() {
		for _, f := range faces(s.interiors, q) {
			if f.neighbour == me {
				f.neighbour = q // the rank whose ghost zone it is
				s.theirs = append(s.theirs, f)
			}
		}
	}
	for _, in := range s.interiors {
		sh := in.Shape()
		s.slotBytes = max(s.slotBytes, sh[0]*sh[1]*8, sh[0]*sh[2]*8, sh[1]*sh[2]*8)
	}
	if style == Bulk {
		if s.slots, err = r.AllAlloc(ctx, max(12*s.slotBytes, 8)); err != nil {
			return nil, err
		}
	}
	box := grown[me]
	s.f = make([]float64, box.Size())
	uv := s.u.View(me)
	for x := range s.interiors[me].Points() {
		*uv.At(x) = U0(x[0], x[1], x[2])
		s.f[s.index(x)] = F(x[0], x[1], x[2])
	}
	return s, r.Barrier(ctx)
}

// index is point x's place in this rank's grown box, row-major.
func (s *Solver) index(x nd.Point) int64 {
	b := s.u.Domain(s.r.ID())
	return ((x[0]-b.Lo[0])*(b.Hi[1]-b.Lo[1])+(x[1]-b.Lo[1]))*(b.Hi[2]-b.Lo[2]) + (x[2] - b.Lo[2])
}

// slot is the receive slot of a face on its side d, side, in the slot
// set of exchange number step: the sets alternate, so that a rank that
// puts the next exchange's faces never writes a slot its neighbour is
// still unpacking.
func slot(step int64, d, side int) int64 { return step%2*6 + int64(d*2+side) }

// Exchange fills this rank's ghost faces of the current values from its
// neighbours in the solver's style; it ends after a barrier, with every
// rank's ghost zones filled.
func (s *Solver) Exchange(ctx context.Context) error {
	me := s.r.ID()
	cur := s.u
	switch s.style {
	case Bulk:
		step := s.steps
		s.steps++
		src := cur.View(me)
		seg := s.r.Segment()
		for _, f := range s.theirs {
			st := src.Constrict(f.box).Strided()
			if n := st.Bytes(); int64(cap(s.pack)) < n {
				s.pack = make([]byte, n)
			}
			buf := s.pack[:st.Bytes()]
			transport.CopyStrided(seg, st, buf, true) // pack
			// f is the neighbour's face on its side (d, side).
			if err := s.r.PutBytes(ctx, f.neighbour, s.slots.Off+slot(step, f.d, f.side)*s.slotBytes, buf); err != nil {
				return err
			}
		}
		if err := s.r.Barrier(ctx); err != nil {
			return err
		}
		dst := cur.View(me)
		for _, f := range s.mine {
			st := dst.Constrict(f.box).Strided()
			off := s.slots.Off + slot(step, f.d, f.side)*s.slotBytes
			transport.CopyStrided(seg, st, seg[off:off+st.Bytes()], false) // unpack
		}
		return nil
	case Fine:
		src := cur.View(me)
		for _, f := range s.theirs {
			dst := cur.View(f.neighbour)
			for x := range f.box.Points() {
				if err := s.r.PutBytes(ctx, f.neighbour, dst.Offset(x), floatBytes(src.At(x))); err != nil {
					return err
				}
			}
		}
		return s.r.Barrier(ctx)
	case Array:
		// One copy per neighbour, all started before any is waited on
		// (seeds/003's async_copy).
		hs := make([]*nd.CopyHandle, len(s.theirs))
		for i, f := range s.theirs {
			hs[i] = cur.View(f.neighbour).Constrict(f.box).CopyFromAsync(ctx, cur.View(me))
		}
		for _, h := range hs {
			if err := h.Wait(ctx); err != nil {
				return err
			}
		}
		return s.r.Barrier(ctx)
	}
	panic(fmt.Sprintf("minigmg: %v", s.style))
}

func floatBytes(x *float64) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(x)), 8) }

// Smooth exchanges the ghost zones and makes one Jacobi step (Step).
func (s *Solver) Smooth(ctx context.Context) error {
	if err := s.Exchange(ctx); err != nil {
		return err
	}
	s.Step()
	return nil
}

// Step makes one Jacobi step on this rank's interior from the current
// values, ghost zones included (filled by Exchange); the new values
// become the current ones.
func (s *Solver) Step() {
	me := s.r.ID()
	u, v := s.u.Local(), s.v.Local()
	b := s.u.Domain(me)
	in := s.interiors[me]
	s1, s2 := b.Hi[1]-b.Lo[1], b.Hi[2]-b.Lo[2]
	plane := s1 * s2
	for i := in.Lo[0]; i < in.Hi[0]; i++ {
		for j := in.Lo[1]; j < in.Hi[1]; j++ {
			row := ((i-b.Lo[0])*s1 + (j - b.Lo[1])) * s2
			for k := in.Lo[2]; k < in.Hi[2]; k++ {
				c := row + k - b.Lo[2]
				v[c] = update(u[c], s.f[c], u[c-plane], u[c+plane], u[c-s2], u[c+s2], u[c-1], u[c+1])
			}
		}
	}
	s.u, s.v = s.v, s.u
}

// Check compares this rank's interior with want (Sequential's cube).
func (s *Solver) Check(want []float64) error {
	me := s.r.ID()
	uv := s.u.View(me)
	for x := range s.interiors[me].Points() {
		if got, w := *uv.At(x), want[(x[0]*s.n+x[1])*s.n+x[2]]; got != w {
			return fmt.Errorf("minigmg %v: cell %v = %v, want %v", s.style, x, got, w)
		}
	}
	return nil
}

// Free releases the solver's shared memory (collective).
func (s *Solver) Free(ctx context.Context) error {
	if err := s.u.AllFree(ctx); err != nil {
		return err
	}
	if err := s.v.AllFree(ctx); err != nil {
		return err
	}
	if s.style == Bulk {
		return s.r.AllFree(ctx, s.slots)
	}
	return nil
}
