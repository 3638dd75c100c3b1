package kernels

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// CSR is a Rows×Cols sparse matrix in compressed sparse row form: row i's
// non-zeros are Val[RowPtr[i]:RowPtr[i+1]], in columns
// ColInd[RowPtr[i]:RowPtr[i+1]] (increasing within a row).
type CSR struct {
	Rows, Cols int
	RowPtr     []int // Rows+1 entries, RowPtr[0] = 0
	ColInd     []int
	Val        []float64
}

// NNZ returns the number of stored non-zeros.
func (s *CSR) NNZ() int { return s.RowPtr[s.Rows] }

// Check reports the first structural problem of s, or nil.
func (s *CSR) Check() error {
	if s.Rows < 0 || s.Cols < 0 || len(s.RowPtr) != s.Rows+1 || s.RowPtr[0] != 0 {
		return fmt.Errorf("kernels: CSR %d×%d with %d row pointers", s.Rows, s.Cols, len(s.RowPtr))
	}
	for i := range s.Rows {
		if s.RowPtr[i+1] < s.RowPtr[i] {
			return fmt.Errorf("kernels: CSR row %d has pointers %d > %d", i, s.RowPtr[i], s.RowPtr[i+1])
		}
	}
	nnz := s.RowPtr[s.Rows]
	if len(s.ColInd) != nnz || len(s.Val) != nnz {
		return fmt.Errorf("kernels: CSR with %d non-zeros has %d column indices and %d values", nnz, len(s.ColInd), len(s.Val))
	}
	for i := range s.Rows {
		for p := s.RowPtr[i]; p < s.RowPtr[i+1]; p++ {
			if j := s.ColInd[p]; j < 0 || j >= s.Cols || (p > s.RowPtr[i] && j <= s.ColInd[p-1]) {
				return fmt.Errorf("kernels: CSR row %d: column %d out of range or order", i, j)
			}
		}
	}
	return nil
}

// RandomSymmetricCSR returns an n×n symmetric sparse matrix in which each
// entry (i, j) with i <= j is non-zero with probability density (and
// mirrored to (j, i)), so it has about density*n*n non-zeros. Values are
// small non-zero integers, so every product and sum of the multiply is
// exact. The stand-in for the paper's FIDAP matrix (0.4%: density 0.004).
func RandomSymmetricCSR(n int, density float64, seed uint64) *CSR {
	if n < 0 || density < 0 || density > 1 {
		panic(fmt.Sprintf("kernels: RandomSymmetricCSR(%d, %v)", n, density))
	}
	type entry struct {
		i, j int
		v    float64
	}
	var upper []entry // (i, j), i <= j, in row-major order
	x := mix64(seed + 0x51ed27)
	next := func() float64 { // uniform in (0, 1]
		x = mix64(x + 0x9e3779b97f4a7c15)
		return (float64(x>>11) + 1) / (1 << 53)
	}
	if density > 0 {
		// Geometric skipping over the upper triangle, row by row:
		// O(non-zeros), not O(n²).
		logq := math.Log1p(-density)
		for i := range n {
			j := i - 1
			for {
				if density >= 1 {
					j++
				} else {
					j += 1 + int(math.Log(next())/logq)
				}
				if j >= n || j < 0 {
					break
				}
				v := float64(int(next()*16)%16 - 8) // -8..7
				if v >= 0 {
					v++ // -8..-1, 1..8: never zero
				}
				upper = append(upper, entry{i, j, v})
			}
		}
	}
	s := &CSR{Rows: n, Cols: n, RowPtr: make([]int, n+1)}
	for _, e := range upper {
		s.RowPtr[e.i+1]++
		if e.i != e.j {
			s.RowPtr[e.j+1]++
		}
	}
	for i := range n {
		s.RowPtr[i+1] += s.RowPtr[i]
	}
	nnz := s.RowPtr[n]
	s.ColInd, s.Val = make([]int, nnz), make([]float64, nnz)
	cur := append([]int(nil), s.RowPtr[:n]...)
	put := func(i, j int, v float64) {
		s.ColInd[cur[i]], s.Val[cur[i]] = j, v
		cur[i]++
	}
	// Row r receives its mirrored entries (columns < r, from rows i < r,
	// in increasing i) before its own upper entries (columns >= r, when
	// row r itself is visited), so columns come out sorted.
	for _, e := range upper {
		put(e.i, e.j, e.v)
		if e.i != e.j {
			put(e.j, e.i, e.v)
		}
	}
	return s
}

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// csrRows sets c (rows×n) to rows of a CSR matrix times b (k×n, row-major).
// rowPtr has rows+1 entries, rebased so that rowPtr[0] indexes colInd and
// val; row i's products are summed in increasing storage order, the same
// order for every version, so results are bit-identical.
func csrRows(c []float64, rowPtr, colInd []int, val, b []float64, rows, n int) {
	for i := range rows {
		ci := c[i*n : (i+1)*n]
		clear(ci)
		for p := rowPtr[i]; p < rowPtr[i+1]; p++ {
			v := val[p]
			bj := b[colInd[p]*n : (colInd[p]+1)*n]
			for j := range ci {
				ci[j] += v * bj[j]
			}
		}
	}
}

// CSRMul returns s × b for b of s.Cols×n (row-major): the sequential
// oracle of SparseMM.
func CSRMul(s *CSR, b []float64, n int) []float64 {
	c := make([]float64, s.Rows*n)
	csrRows(c, s.RowPtr, s.ColInd, s.Val, b, s.Rows, n)
	return c
}

// SplitRows splits the rows of a CSR matrix into ranks contiguous ranges
// balanced by non-zeros: it returns ranks+1 row boundaries, rank q owning
// rows [bounds[q], bounds[q+1]). Boundary q is the row whose pointer is
// nearest to q*nnz/ranks.
func SplitRows(rowPtr []int, ranks int) []int {
	rows := len(rowPtr) - 1
	nnz := rowPtr[rows]
	bounds := make([]int, ranks+1)
	bounds[ranks] = rows
	for q := 1; q < ranks; q++ {
		target := int(int64(q) * int64(nnz) / int64(ranks))
		// The first row whose pointer reaches target (at most rows, as
		// target <= nnz), or the row before if that one is nearer.
		i := sort.SearchInts(rowPtr, target)
		if i > 0 && target-rowPtr[i-1] < rowPtr[i]-target {
			i--
		}
		bounds[q] = max(i, bounds[q-1])
	}
	return bounds
}

// sparsePlan is the partition every rank learns from rank 0: row
// boundaries, and the non-zero boundaries (RowPtr at each row boundary).
type sparsePlan struct {
	rows, nz []int // ranks+1 each
}

func newSparsePlan(buf []int, ranks int) sparsePlan {
	return sparsePlan{rows: buf[:ranks+1], nz: buf[ranks+1:]}
}

// planBuf is rank 0's encoding of the partition: the row boundaries, then
// the non-zero boundaries.
func planBuf(s *CSR, ranks int) []int {
	rb := SplitRows(s.RowPtr, ranks)
	buf := make([]int, 2*(ranks+1))
	copy(buf, rb)
	for q, i := range rb {
		buf[ranks+1+q] = s.RowPtr[i]
	}
	return buf
}

func (p sparsePlan) myRows(q int) int { return p.rows[q+1] - p.rows[q] }
func (p sparsePlan) myNNZ(q int) int  { return p.nz[q+1] - p.nz[q] }

func checkSparseArgs(r *pgas.Rank, s *CSR, b []float64, m, k, n int) {
	if m < 0 || k < 0 || n < 0 {
		panic(fmt.Sprintf("kernels: SparseMM with negative dimensions %d×%d×%d", m, k, n))
	}
	if r.ID() != 0 {
		return
	}
	if s == nil || s.Rows != m || s.Cols != k || len(s.RowPtr) != m+1 || len(s.ColInd) < s.NNZ() || len(s.Val) < s.NNZ() {
		panic(fmt.Sprintf("kernels: SparseMM on rank 0: S does not describe an %d×%d CSR matrix", m, k))
	}
	if len(b) < k*n {
		panic(fmt.Sprintf("kernels: SparseMM on rank 0: B has %d elements, want %d×%d", len(b), k, n))
	}
}

// SparseMMExtended computes C = S×B for S an m×k CSR matrix and B a dense
// k×n matrix (row-major), both in rank 0's private memory (ignored
// elsewhere; every rank passes m, k, n), and returns C (m×n) on rank 0 (nil
// elsewhere). Rows of S are split into contiguous ranges balanced by
// non-zeros (SplitRows). It uses collectives on private buffers only
// (seeds/002 listing 3.16): BroadcastInPlace of the partition, ScatterV of
// val and col_ind, VectorCopy of the row_ptr pieces (rebased locally),
// BroadcastInPlace of B, a local CSR×dense multiply, GatherV of C's rows.
func SparseMMExtended(ctx context.Context, r *pgas.Rank, s *CSR, b []float64, m, k, n int, opts ...coll.Option) ([]float64, error) {
	checkSparseArgs(r, s, b, m, k, n)
	w, T, me := r.World(), r.N(), r.ID()
	var srcVal []float64
	var srcCol, srcRow []int
	var bufB []float64
	pbuf := make([]int, 2*(T+1))
	if me == 0 {
		copy(pbuf, planBuf(s, T))
		srcVal, srcCol, srcRow = s.Val, s.ColInd, s.RowPtr
		bufB = b[:k*n]
	} else {
		bufB = make([]float64, k*n)
	}
	if err := coll.BroadcastInPlace(ctx, w, coll.Private(pbuf), len(pbuf), opts...); err != nil {
		return nil, err
	}
	p := newSparsePlan(pbuf, T)

	counts := make([]int, T)
	copies := make([]coll.Copy, T)
	for q := range T {
		counts[q] = p.myNNZ(q)
		copies[q] = coll.Copy{Src: p.rows[q], Dst: 0, N: p.myRows(q) + 1, SrcRank: 0, DstRank: q}
	}
	nzDispl := p.nz[:T] // chunk q starts at non-zero nz[q] of rank 0's arrays
	myVal := make([]float64, p.myNNZ(me))
	myCol := make([]int, p.myNNZ(me))
	myRow := make([]int, p.myRows(me)+1)
	if err := coll.ScatterV(ctx, w, coll.Private(myVal), coll.Private(srcVal), counts, nzDispl, nil, opts...); err != nil {
		return nil, err
	}
	if err := coll.ScatterV(ctx, w, coll.Private(myCol), coll.Private(srcCol), counts, nzDispl, nil, opts...); err != nil {
		return nil, err
	}
	if err := coll.VectorCopy(ctx, w, coll.Private(myRow), coll.Private(srcRow), copies, opts...); err != nil {
		return nil, err
	}
	for i := range myRow {
		myRow[i] -= p.nz[me]
	}
	if err := coll.BroadcastInPlace(ctx, w, coll.Private(bufB), k*n, opts...); err != nil {
		return nil, err
	}

	myC := make([]float64, p.myRows(me)*n)
	csrRows(myC, myRow, myCol, myVal, bufB, p.myRows(me), n)

	var c []float64
	if me == 0 {
		c = make([]float64, m*n)
	}
	for q := range T {
		counts[q] = p.myRows(q) * n
	}
	if err := coll.GatherV(ctx, w, coll.Private(c), coll.Private(myC), counts, nil, nil, opts...); err != nil {
		return nil, err
	}
	return c, nil
}

// SparseMMStandard computes the same as SparseMMExtended with the standard
// library only: shared temporaries that rank 0 fills with PutRange (the
// partition, then each rank's val, col_ind and row_ptr pieces, each in
// that rank's block, and B on rank 0), barriers, privatised reads of the
// own blocks and a GetRange of B, the local multiply into the own block of
// a shared C, and rank 0 GetRange-ing every block of C.
func SparseMMStandard(ctx context.Context, r *pgas.Rank, s *CSR, b []float64, m, k, n int) ([]float64, error) {
	checkSparseArgs(r, s, b, m, k, n)
	T, me := r.N(), r.ID()
	var arrays []interface{ AllFree(context.Context) error }

	// The partition: computed by rank 0, published in a shared array.
	tPlan, err := pgas.AllAllocArray[int](ctx, r, int64(2*(T+1)), pgas.Indefinite)
	if err != nil {
		return nil, err
	}
	arrays = append(arrays, tPlan)
	if me == 0 {
		if err := tPlan.PutRange(ctx, 0, planBuf(s, T)); err != nil {
			return nil, err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}
	pbuf := make([]int, 2*(T+1))
	if err := tPlan.GetRange(ctx, pbuf, 0); err != nil {
		return nil, err
	}
	p := newSparsePlan(pbuf, T)

	// Temporaries with one block per rank, as large as the largest piece.
	var maxNNZ, maxRows int
	for q := range T {
		maxNNZ, maxRows = max(maxNNZ, p.myNNZ(q)), max(maxRows, p.myRows(q))
	}
	bNZ, bRow, bC := int64(max(1, maxNNZ)), int64(maxRows+1), int64(max(1, maxRows*n))
	tVal, err := pgas.AllAllocArray[float64](ctx, r, bNZ*int64(T), bNZ)
	if err != nil {
		return nil, err
	}
	tCol, err := pgas.AllAllocArray[int](ctx, r, bNZ*int64(T), bNZ)
	if err != nil {
		return nil, err
	}
	tRow, err := pgas.AllAllocArray[int](ctx, r, bRow*int64(T), bRow)
	if err != nil {
		return nil, err
	}
	tB, err := pgas.AllAllocArray[float64](ctx, r, int64(k*n), pgas.Indefinite)
	if err != nil {
		return nil, err
	}
	tC, err := pgas.AllAllocArray[float64](ctx, r, bC*int64(T), bC)
	if err != nil {
		return nil, err
	}
	arrays = append(arrays, tVal, tCol, tRow, tB, tC)

	if me == 0 {
		for q := range T {
			lo, hi := p.nz[q], p.nz[q+1]
			if err := tVal.PutRange(ctx, int64(q)*bNZ, s.Val[lo:hi]); err != nil {
				return nil, err
			}
			if err := tCol.PutRange(ctx, int64(q)*bNZ, s.ColInd[lo:hi]); err != nil {
				return nil, err
			}
			if err := tRow.PutRange(ctx, int64(q)*bRow, s.RowPtr[p.rows[q]:p.rows[q+1]+1]); err != nil {
				return nil, err
			}
		}
		if err := tB.PutRange(ctx, 0, b[:k*n]); err != nil {
			return nil, err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}
	rows, nnz := p.myRows(me), p.myNNZ(me)
	myVal := tVal.Local()[:nnz] // privatised: my block
	myCol := tCol.Local()[:nnz]
	myRow := make([]int, rows+1)
	for i, v := range tRow.Local()[:rows+1] {
		myRow[i] = v - p.nz[me]
	}
	myB := make([]float64, k*n)
	if err := tB.GetRange(ctx, myB, 0); err != nil {
		return nil, err
	}
	csrRows(tC.Local()[:rows*n], myRow, myCol, myVal, myB, rows, n)
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}
	var c []float64
	if me == 0 {
		c = make([]float64, m*n)
		for q := range T {
			lo := p.rows[q] * n
			if err := tC.GetRange(ctx, c[lo:lo+p.myRows(q)*n], int64(q)*bC); err != nil {
				return nil, err
			}
		}
	}
	// The barrier of the first AllFree keeps tC alive until rank 0 has read it.
	for _, a := range arrays {
		if err := a.AllFree(ctx); err != nil {
			return nil, err
		}
	}
	return c, nil
}
