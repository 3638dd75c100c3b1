package nd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/nd"
)

// inVal is element (i, j) of the stencil's input and of the matrix.
func inVal(i, j int64) float64 { return float64((i*31+j*17)%23) / 8 }

// stencilSeq is the sequential 5-point stencil, the oracle.
func stencilSeq(n0, n1 int64) []float64 {
	out := make([]float64, n0*n1)
	for i := range n0 {
		for j := range n1 {
			var s float64
			for _, k := range [][2]int64{{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
				a, b := i+k[0], j+k[1]
				if a >= 0 && b >= 0 && a < n0 && b < n1 {
					s += inVal(a, b)
				}
			}
			out[i*n1+j] = s
		}
	}
	return out
}

// stencilJob runs one stencil (naive or not) on ranks ranks and checks
// every rank's elements against the sequential result.
func stencilJob(tb testing.TB, ranks, perNode int, dims, blocks nd.Point, naive bool, reps int) {
	want := stencilSeq(dims[0], dims[1])
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := pgas.Config{Ranks: ranks, RanksPerNode: perNode, SegmentBytes: 64 << 20}
	err := pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		in, err := nd.AllAlloc[float64](ctx, r, dims, blocks)
		if err != nil {
			return err
		}
		out, err := nd.AllAlloc[float64](ctx, r, dims, blocks)
		if err != nil {
			return err
		}
		l := in.Layout()
		for v := range l.Extent().Points() {
			if l.Owner(v) == r.ID() {
				*in.At(v) = inVal(v[0], v[1])
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if b, ok := tb.(*testing.B); ok && r.ID() == 0 {
			b.ResetTimer()
		}
		for range reps {
			if naive {
				err = nd.Stencil5Naive(ctx, in, out)
			} else {
				err = nd.Stencil5(ctx, in, out)
			}
			if err != nil {
				return err
			}
		}
		if b, ok := tb.(*testing.B); ok && r.ID() == 0 {
			b.StopTimer()
		}
		for v := range l.Extent().Points() {
			if l.Owner(v) == r.ID() {
				if got, w := *out.At(v), want[v[0]*dims[1]+v[1]]; got != w {
					return fmt.Errorf("out%v = %v, want %v", v, got, w)
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// matVecJob runs y = A x on ranks ranks, A n x n in row tiles of b rows,
// and checks y against the sequential product.
func matVecJob(tb testing.TB, ranks, perNode int, n, b int64, naive bool, reps int) {
	want := make([]float64, n)
	for i := range n {
		var s float64
		for j := range n {
			s += inVal(i, j) * inVal(j, 0)
		}
		want[i] = s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := pgas.Config{Ranks: ranks, RanksPerNode: perNode, SegmentBytes: 64 << 20}
	err := pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		a, err := nd.AllAlloc[float64](ctx, r, nd.Point{n, n}, nd.Point{b, n})
		if err != nil {
			return err
		}
		x, err := nd.AllAlloc[float64](ctx, r, nd.Point{n}, nd.Point{b})
		if err != nil {
			return err
		}
		y, err := nd.AllAlloc[float64](ctx, r, nd.Point{n}, nd.Point{b})
		if err != nil {
			return err
		}
		for v := range a.Layout().Extent().Points() {
			if a.Layout().Owner(v) == r.ID() {
				*a.At(v) = inVal(v[0], v[1])
			}
		}
		for v := range x.Layout().Extent().Points() {
			if x.Layout().Owner(v) == r.ID() {
				*x.At(v) = inVal(v[0], 0)
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if b, ok := tb.(*testing.B); ok && r.ID() == 0 {
			b.ResetTimer()
		}
		for range reps {
			if naive {
				err = nd.MatVecNaive(ctx, a, x, y)
			} else {
				err = nd.MatVec(ctx, a, x, y)
			}
			if err != nil {
				return err
			}
		}
		if b, ok := tb.(*testing.B); ok && r.ID() == 0 {
			b.StopTimer()
		}
		for v := range y.Layout().Extent().Points() {
			if y.Layout().Owner(v) == r.ID() {
				if got := *y.At(v); got != want[v[0]] {
					return fmt.Errorf("y%v = %v, want %v", v, got, want[v[0]])
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// TestKernels: both versions of both kernels give the sequential result
// bit for bit, on 1 to 4 ranks, with tiles that pad the arrays.
func TestKernels(t *testing.T) {
	for _, c := range []struct{ ranks, perNode int }{{1, 0}, {2, 0}, {3, 2}, {4, 2}} {
		for _, naive := range []bool{true, false} {
			t.Run(fmt.Sprintf("ranks=%d/naive=%v", c.ranks, naive), func(t *testing.T) {
				stencilJob(t, c.ranks, c.perNode, nd.Point{23, 17}, nd.Point{5, 4}, naive, 1)
				stencilJob(t, c.ranks, c.perNode, nd.Point{8, 8}, nd.Point{8, 8}, naive, 2)
				matVecJob(t, c.ranks, c.perNode, 37, 5, naive, 1)
			})
		}
	}
}

// BenchmarkStencil5: the 2-D 5-point stencil on a 512 x 512 array in
// 64 x 64 tiles, naive (every element through the runtime, an owner test
// on every index) and privatised (Split; own tiles as slices). seeds/004
// reports 25x at one thread (5760 x 5760).
func BenchmarkStencil5(b *testing.B) {
	for _, ranks := range []int{1, 2} {
		for _, naive := range []bool{true, false} {
			b.Run(fmt.Sprintf("ranks=%d/%s", ranks, map[bool]string{true: "naive", false: "privatised"}[naive]), func(b *testing.B) {
				stencilJob(b, ranks, 0, nd.Point{512, 512}, nd.Point{64, 64}, naive, b.N)
			})
		}
	}
}

// BenchmarkMatVec: y = A x, 1024 x 1024 in row tiles of 64 rows, naive
// and privatised (x fetched once; own rows as slices). seeds/004 reports
// 24x at one thread (14400 x 14400).
func BenchmarkMatVec(b *testing.B) {
	for _, ranks := range []int{1, 2} {
		for _, naive := range []bool{true, false} {
			b.Run(fmt.Sprintf("ranks=%d/%s", ranks, map[bool]string{true: "naive", false: "privatised"}[naive]), func(b *testing.B) {
				matVecJob(b, ranks, 0, 1024, 64, naive, b.N)
			})
		}
	}
}
