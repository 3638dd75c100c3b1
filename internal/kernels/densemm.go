package kernels

import (
	"context"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// MatMul sets c (m×n) = a (m×k) × b (k×n), all row-major, with the naive
// triple loop (i, p, j), the kernel every version runs on its rows.
func MatMul(c, a, b []float64, m, k, n int) {
	for i := range m {
		ci := c[i*n : (i+1)*n]
		clear(ci)
		for p := range k {
			aip := a[i*k+p]
			bp := b[p*n : (p+1)*n]
			for j := range ci {
				ci[j] += aip * bp[j]
			}
		}
	}
}

// denseRows returns the rows per rank: N rounded up to a multiple of the
// rank count, divided.
func denseRows(n, ranks int) int { return (n + ranks - 1) / ranks }

// DenseMMStandard computes C = A×B for N×N matrices that start in rank 0's
// private memory (a and b; ignored elsewhere) and returns C on rank 0 (nil
// elsewhere). It uses shared temporaries: temp_A blocked by rows, temp_B on
// rank 0, temp_C blocked by rows, moved with PutRange/GetRange, with three
// barriers (seeds/002 listing 3.14).
func DenseMMStandard(ctx context.Context, r *pgas.Rank, a, b []float64, n int) ([]float64, error) {
	rows := denseRows(n, r.N())
	blk := int64(rows * n)
	tA, err := pgas.AllAllocArray[float64](ctx, r, blk*int64(r.N()), blk)
	if err != nil {
		return nil, err
	}
	tB, err := pgas.AllAllocArray[float64](ctx, r, int64(n*n), pgas.Indefinite)
	if err != nil {
		return nil, err
	}
	tC, err := pgas.AllAllocArray[float64](ctx, r, blk*int64(r.N()), blk)
	if err != nil {
		return nil, err
	}
	if r.ID() == 0 {
		if err := tA.PutRange(ctx, 0, a[:n*n]); err != nil {
			return nil, err
		}
		if err := tB.PutRange(ctx, 0, b[:n*n]); err != nil {
			return nil, err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}
	myRows := max(0, min(rows, n-r.ID()*rows))
	myA := tA.Local()[:myRows*n] // privatised: my rows of temp_A
	myB := make([]float64, n*n)
	if err := tB.GetRange(ctx, myB, 0); err != nil {
		return nil, err
	}
	MatMul(tC.Local()[:myRows*n], myA, myB, myRows, n, n)
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}
	var c []float64
	if r.ID() == 0 {
		c = make([]float64, n*n)
		if err := tC.GetRange(ctx, c, 0); err != nil {
			return nil, err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}
	for _, x := range []interface{ AllFree(context.Context) error }{tA, tB, tC} {
		if err := x.AllFree(ctx); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// DenseMMExtended computes the same with three collectives on private
// buffers: Scatter of A's rows, BroadcastInPlace of B, Gather of C
// (seeds/002 listing 3.15).
func DenseMMExtended(ctx context.Context, r *pgas.Rank, a, b []float64, n int, opts ...coll.Option) ([]float64, error) {
	w := r.World()
	rows := denseRows(n, r.N())
	chunk := rows * n
	var srcA, bufB, c []float64
	if r.ID() == 0 {
		srcA = make([]float64, chunk*r.N()) // padded to whole chunks
		copy(srcA, a[:n*n])
		bufB = b[:n*n]
		c = make([]float64, chunk*r.N())
	} else {
		bufB = make([]float64, n*n)
	}
	myA := make([]float64, chunk)
	if err := coll.Scatter(ctx, w, coll.Private(myA), coll.Private(srcA), chunk, opts...); err != nil {
		return nil, err
	}
	if err := coll.BroadcastInPlace(ctx, w, coll.Private(bufB), n*n, opts...); err != nil {
		return nil, err
	}
	myRows := max(0, min(rows, n-r.ID()*rows))
	myC := make([]float64, chunk)
	MatMul(myC[:myRows*n], myA[:myRows*n], bufB, myRows, n, n)
	if err := coll.Gather(ctx, w, coll.Private(c), coll.Private(myC), chunk, opts...); err != nil {
		return nil, err
	}
	if r.ID() == 0 {
		return c[:n*n], nil
	}
	return nil, nil
}

// RandomMatrix returns a rows×cols matrix of small integers as float64, so
// products are exact.
func RandomMatrix(rows, cols int, seed uint64) []float64 {
	m := make([]float64, rows*cols)
	x := seed*0x9e3779b97f4a7c15 + 1
	for i := range m {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		m[i] = float64(int64(x%17) - 8)
	}
	return m
}

// Equal reports the first index where a and b differ, or -1.
func Equal(a, b []float64) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

func mismatch(what string, got, want []float64) error {
	if i := Equal(got, want); i >= 0 {
		if i >= len(got) || i >= len(want) {
			return fmt.Errorf("%s: length %d; want %d", what, len(got), len(want))
		}
		return fmt.Errorf("%s: element %d = %v; want %v", what, i, got[i], want[i])
	}
	return nil
}
