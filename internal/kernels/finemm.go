package kernels

import (
	"context"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
)

// The fine-grained matrix multiply of seeds/001 (§5.5, §7.1.2, Table
// 5.1), the kernel its remote-reference cache is measured on:
//
//	shared [N] float A[N][N];  // a row per block: row i on rank i%THREADS
//	shared     float B[N][N];  // cyclic: element (k, j) on rank (k*N+j)%THREADS
//	shared [N] float C[N][N];
//
// Every B[k][j] is one element Get (remote for most elements), the
// fine-grained access a cache can help; A and C are the rank's own rows.
// Naive loops i (own rows), j, k, reading B by columns: spatial reuse
// only. Temporal loops j, k, i (own rows), so that each B[k][j] is read
// once per own row in a row: temporal reuse.

// FineMM holds the three shared matrices of one job.
type FineMM struct {
	N       int
	A, B, C *pgas.Array[float32]
}

// NewFineMM allocates the matrices (collective) and fills A and B with
// FineMMValue, each rank its own elements.
func NewFineMM(ctx context.Context, r *pgas.Rank, n int) (*FineMM, error) {
	nn := int64(n) * int64(n)
	a, err := pgas.AllAllocArray[float32](ctx, r, nn, int64(n))
	if err != nil {
		return nil, err
	}
	b, err := pgas.AllAllocArray[float32](ctx, r, nn, pgas.Cyclic)
	if err != nil {
		return nil, err
	}
	c, err := pgas.AllAllocArray[float32](ctx, r, nn, int64(n))
	if err != nil {
		return nil, err
	}
	m := &FineMM{N: n, A: a, B: b, C: c}
	for g, blk := range a.MyBlocks() {
		for k := range blk {
			blk[k] = FineMMValue(0, g+int64(k))
		}
	}
	for g, blk := range b.MyBlocks() {
		for k := range blk {
			blk[k] = FineMMValue(1, g+int64(k))
		}
	}
	return m, r.Barrier(ctx)
}

// FineMMValue is element g (row-major) of matrix 0 (A) or 1 (B): small
// integers, so that float32 sums are exact and every loop order gives
// the same bits.
func FineMMValue(mat int, g int64) float32 {
	return float32((g*7+int64(mat)*3)%11) - 5
}

// rows returns the rows of A this rank owns.
func (m *FineMM) rows(r *pgas.Rank) []int {
	var rows []int
	for i := r.ID(); i < m.N; i += r.N() {
		rows = append(rows, i)
	}
	return rows
}

// Naive computes C = A×B with loops i (own rows), j, k.
func (m *FineMM) Naive(ctx context.Context, r *pgas.Rank) error {
	n := m.N
	for _, i := range m.rows(r) {
		ai := m.ownRow(m.A, i)
		ci := m.ownRow(m.C, i)
		for j := range n {
			var sum float32
			for k := range n {
				bkj, err := m.B.Get(ctx, int64(k*n+j))
				if err != nil {
					return fmt.Errorf("fine matrix multiply: B[%d][%d]: %w", k, j, err)
				}
				sum = float32(sum + float32(ai[k]*bkj))
			}
			ci[j] = sum
		}
	}
	return r.Barrier(ctx)
}

// Temporal computes C = A×B with loops j, k, i (own rows).
func (m *FineMM) Temporal(ctx context.Context, r *pgas.Rank) error {
	n := m.N
	rows := m.rows(r)
	as, cs := make([][]float32, len(rows)), make([][]float32, len(rows))
	for x, i := range rows {
		as[x], cs[x] = m.ownRow(m.A, i), m.ownRow(m.C, i)
		clear(cs[x])
	}
	for j := range n {
		for k := range n {
			for x := range rows {
				bkj, err := m.B.Get(ctx, int64(k*n+j))
				if err != nil {
					return fmt.Errorf("fine matrix multiply: B[%d][%d]: %w", k, j, err)
				}
				cs[x][j] = float32(cs[x][j] + float32(as[x][k]*bkj))
			}
		}
	}
	return r.Barrier(ctx)
}

// ownRow is row i of a row-blocked matrix this rank owns, as a slice of
// its local memory.
func (m *FineMM) ownRow(a *pgas.Array[float32], i int) []float32 {
	lb := int64(i/a.Rank().N()) * int64(m.N)
	return a.Local()[lb : lb+int64(m.N)]
}

// Check compares this rank's rows of C with the sequential product of
// the same matrices.
func (m *FineMM) Check(r *pgas.Rank) error {
	n := m.N
	want := make([]float32, n)
	for _, i := range m.rows(r) {
		clear(want)
		for k := range n {
			aik := FineMMValue(0, int64(i*n+k))
			for j := range n {
				want[j] = float32(want[j] + float32(aik*FineMMValue(1, int64(k*n+j))))
			}
		}
		got := m.ownRow(m.C, i)
		for j := range n {
			if got[j] != want[j] {
				return fmt.Errorf("fine matrix multiply: C[%d][%d] = %v, want %v", i, j, got[j], want[j])
			}
		}
	}
	return nil
}

// Free releases the matrices (collective).
func (m *FineMM) Free(ctx context.Context) error {
	for _, a := range []*pgas.Array[float32]{m.A, m.B, m.C} {
		if err := a.AllFree(ctx); err != nil {
			return err
		}
	}
	return nil
}
