package kernels

import (
	"context"
	"fmt"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

func TestDenseMM(t *testing.T) {
	for _, ranks := range []int{1, 2, 3, 4} {
		for _, n := range []int{1, 7, 24} {
			a, b := RandomMatrix(n, n, 1), RandomMatrix(n, n, 2)
			want := make([]float64, n*n)
			MatMul(want, a, b, n, n, n)
			for _, ext := range []bool{false, true} {
				t.Run(fmt.Sprintf("ranks=%d/n=%d/extended=%v", ranks, n, ext), func(t *testing.T) {
					err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
						var ma, mb []float64
						if r.ID() == 0 {
							ma, mb = a, b
						}
						var c []float64
						var err error
						if ext {
							c, err = DenseMMExtended(ctx, r, ma, mb, n, coll.WithAlgo(coll.Binomial))
						} else {
							c, err = DenseMMStandard(ctx, r, ma, mb, n)
						}
						if err != nil || r.ID() != 0 {
							return err
						}
						return mismatch("C", c, want)
					})
					if err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}

func TestFFT(t *testing.T) {
	// The FFT of a unit impulse is all ones; of all ones, n at 0.
	x := make([]complex128, 8)
	x[0] = 1
	FFT(x)
	for i, v := range x {
		if v != 1 {
			t.Fatalf("FFT(impulse)[%d] = %v", i, v)
		}
	}
	// Against a direct DFT.
	g := FFTGrid{1, 1, 16}
	y := make([]complex128, 16)
	for i := range y {
		y[i] = g.Value(0, 0, i)
	}
	d := dft(y)
	FFT(y)
	for i := range y {
		if diff := y[i] - d[i]; real(diff)*real(diff)+imag(diff)*imag(diff) > 1e-18 {
			t.Fatalf("FFT[%d] = %v; DFT %v", i, y[i], d[i])
		}
	}
}

func TestFFT3D(t *testing.T) {
	for _, ranks := range []int{1, 2, 4} {
		g := FFTGrid{8, 8, 4}
		want := g.Sequential()
		for _, tr := range []FFTTranspose{TransposeStandard, TransposeExchange, TransposeExchangeInPlace} {
			t.Run(fmt.Sprintf("ranks=%d/%v", ranks, tr), func(t *testing.T) {
				err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
					out, err := FFT3D(ctx, r, g, tr)
					if err != nil {
						return err
					}
					part := want[r.ID()*len(out) : (r.ID()+1)*len(out)]
					for i := range out {
						if out[i] != part[i] {
							return fmt.Errorf("rank %d: out[%d] = %v; want %v", r.ID(), i, out[i], part[i])
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
