package nd

import (
	"context"
	"fmt"
)

// The two kernels of seeds/004 §5, each written twice: naive, as UPC
// code reads before the compiler's locality analysis (every element
// through the runtime, an affinity test on every index: upc_forall), and
// privatised, as the analysis leaves it (the rank's own elements through
// its slices, only what others hold through the runtime). They give the
// same result bit for bit.

// stencilOffsets are the five points of the 2-D stencil, centre first.
var stencilOffsets = []Point{{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}

// Stencil5Naive sets out[v] to the sum of in's elements at v and its
// four neighbours (those inside the array) for every v of the 2-D
// arrays (of one layout) that this rank holds, reading and writing every
// element through Get and Put and visiting every index with an owner
// test, like upc_forall. It ends with a barrier.
func Stencil5Naive(ctx context.Context, in, out *TiledArray[float64]) error {
	l := in.lay
	me := in.r.ID()
	w := make(Point, 2)
	for v := range l.Extent().Points() {
		if l.Owner(v) != me {
			continue
		}
		var s float64
		for _, k := range stencilOffsets {
			w[0], w[1] = v[0]+k[0], v[1]+k[1]
			if w[0] < 0 || w[1] < 0 || w[0] >= l.dims[0] || w[1] >= l.dims[1] {
				continue
			}
			x, err := in.Get(ctx, w)
			if err != nil {
				return fmt.Errorf("nd: stencil: %w", err)
			}
			s += x
		}
		if err := out.Put(ctx, v, s); err != nil {
			return fmt.Errorf("nd: stencil: %w", err)
		}
	}
	return in.r.Barrier(ctx)
}

// Stencil5 is Stencil5Naive privatised with Split: for each offset of
// the stencil, the pieces whose neighbours are this rank's own read them
// from its tiles' slices, the others through Get; the sums are made in
// this rank's tiles of out directly. The terms of a sum are added in the
// same order as Stencil5Naive adds them.
func Stencil5(ctx context.Context, in, out *TiledArray[float64]) error {
	l := in.lay
	if len(l.dims) != 2 {
		panic("nd: Stencil5 of a non-2-D array")
	}
	b0, b1 := l.blocks[0], l.blocks[1]
	ext := l.Extent()
	loc, res := in.local, out.local
	w := make(Point, 2)
	for n, k := range stencilOffsets {
		for _, p := range in.Split(ext, k) {
			// v's own tile (for the sum) and, when private, v+k's.
			vt := l.TileIndex(Point{p.Box.Lo[0] / b0, p.Box.Lo[1] / b1}) / int64(l.ranks) * l.tileElems
			switch p.Class {
			case Outside:
				if n == 0 {
					panic("nd: Stencil5: the centre is outside")
				}
				continue
			case Private:
				wt := l.TileIndex(Point{(p.Box.Lo[0] + k[0]) / b0, (p.Box.Lo[1] + k[1]) / b1}) / int64(l.ranks) * l.tileElems
				for i := p.Box.Lo[0]; i < p.Box.Hi[0]; i++ {
					vr := vt + (i%b0)*b1
					wr := wt + ((i+k[0])%b0)*b1
					for j := p.Box.Lo[1]; j < p.Box.Hi[1]; j++ {
						x := loc[wr+(j+k[1])%b1]
						if n == 0 {
							res[vr+j%b1] = x
						} else {
							res[vr+j%b1] += x
						}
					}
				}
			default:
				for i := p.Box.Lo[0]; i < p.Box.Hi[0]; i++ {
					vr := vt + (i%b0)*b1
					for j := p.Box.Lo[1]; j < p.Box.Hi[1]; j++ {
						w[0], w[1] = i+k[0], j+k[1]
						x, err := in.Get(ctx, w)
						if err != nil {
							return fmt.Errorf("nd: stencil: %w", err)
						}
						if n == 0 {
							res[vr+j%b1] = x
						} else {
							res[vr+j%b1] += x
						}
					}
				}
			}
		}
	}
	return in.r.Barrier(ctx)
}

// MatVecNaive sets y = A x for an n x n matrix a tiled in whole rows
// ([b][n]), a vector x of n elements and y of n tiled like a's rows
// ([b]). As in seeds/004, x is first fetched into a private copy; then
// every element of a is read, and y written, through Get and Put, and
// every row visited with an owner test (the rank computes the rows it
// holds).
func MatVecNaive(ctx context.Context, a, x, y *TiledArray[float64]) error {
	l := a.lay
	me := a.r.ID()
	xs, err := privateCopy(ctx, x)
	if err != nil {
		return err
	}
	v, yv := make(Point, 2), make(Point, 1)
	for i := range l.dims[0] {
		v[0], v[1] = i, 0
		if l.Owner(v) != me {
			continue
		}
		var s float64
		for j, xj := range xs {
			v[1] = int64(j)
			aij, err := a.Get(ctx, v)
			if err != nil {
				return err
			}
			s += aij * xj
		}
		yv[0] = i
		if err := y.Put(ctx, yv, s); err != nil {
			return err
		}
	}
	return a.r.Barrier(ctx)
}

// privateCopy returns the elements of the 1-D array x in a private slice.
func privateCopy(ctx context.Context, x *TiledArray[float64]) ([]float64, error) {
	xs := make([]float64, x.lay.dims[0])
	v := Point{0}
	for j := range xs {
		v[0] = int64(j)
		if x.lay.Owner(v) == x.r.ID() {
			xs[j] = *x.At(v)
			continue
		}
		xj, err := x.Get(ctx, v)
		if err != nil {
			return nil, err
		}
		xs[j] = xj
	}
	return xs, nil
}

// MatVec is MatVecNaive privatised: each of the rank's row tiles of a is
// read from its slice.
func MatVec(ctx context.Context, a, x, y *TiledArray[float64]) error {
	l := a.lay
	n := l.dims[1]
	xs, err := privateCopy(ctx, x)
	if err != nil {
		return err
	}
	b0 := l.blocks[0]
	for _, t := range l.TilesOwnedBy(a.r.ID()) {
		tile := a.Tile(t)
		box := l.TileBox(t)
		yt := y.Tile(Point{t[0]})
		for i := box.Lo[0]; i < box.Hi[0]; i++ {
			row := tile[(i%b0)*l.blocks[1]:][:n]
			var s float64
			for j, aij := range row {
				s += aij * xs[j]
			}
			yt[i%b0] = s
		}
	}
	return a.r.Barrier(ctx)
}
