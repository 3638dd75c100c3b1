// Package spmv is the sparse matrix-vector kernel of Lagravière et al.
// (seeds/000): y = D x + A x with A in modified EllPack form (a fixed number
// of off-diagonal entries per row), distributed block-wise over shared
// arrays, with the paper's communication strategies:
//
//   - Naive: every access through global indices and affinity tests
//     (upc_forall over all rows, element gets even for owned data).
//   - V1: privatised own blocks; x[J[k]] fetched element by element.
//   - V2: block-wise: every block of x this rank needs is fetched whole into
//     a private full-length copy with one bulk get per block.
//   - V3: condensed and consolidated: a pgas.GatherPlan built once moves
//     each needed value of x once, one message per rank pair.
//
// The matrix is synthetic: row i has RNZ off-diagonal columns, most in a
// band around i (as in a locality-reordered mesh) and a fraction Far chosen
// uniformly (long-range couplings). Rows are generated from a hash of
// (seed, row), so every rank builds only its own rows and a sequential
// oracle builds the same matrix.
package spmv

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pgasmr/pgasmr/pgas"
)

// Params describes a synthetic matrix.
type Params struct {
	N    int64   // rows and columns
	RNZ  int     // off-diagonal entries per row (16 in the paper)
	Far  float64 // fraction of off-diagonal entries with a uniform column
	Seed uint64
}

func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// Row fills col and val (length RNZ) with row i's off-diagonal entries and
// returns its diagonal entry.
func (p Params) Row(i int64, col []int64, val []float64) float64 {
	h := mix(p.Seed ^ mix(uint64(i)))
	half := p.RNZ / 2
	for k := range p.RNZ {
		hk := mix(h + uint64(k)*0x9e3779b97f4a7c15)
		var j int64
		if unit(hk) < p.Far {
			j = int64(mix(hk) % uint64(p.N))
		} else {
			d := int64(k - half)
			if d >= 0 {
				d++
			}
			j = ((i+d)%p.N + p.N) % p.N
		}
		col[k] = j
		val[k] = -unit(mix(hk^0x5555)) / float64(p.RNZ)
	}
	return 1 + unit(h)
}

// X0 is the initial vector's element i.
func X0(i int64) float64 { return 1 + float64(i%7)/7 }

// Matrix is the whole matrix in private memory, for the sequential oracle.
type Matrix struct {
	p   Params
	d   []float64
	col []int64
	val []float64
}

// NewMatrix generates the whole matrix.
func NewMatrix(p Params) *Matrix {
	rnz := int64(p.RNZ)
	m := &Matrix{p: p, d: make([]float64, p.N), col: make([]int64, p.N*rnz), val: make([]float64, p.N*rnz)}
	for i := range p.N {
		m.d[i] = p.Row(i, m.col[i*rnz:(i+1)*rnz], m.val[i*rnz:(i+1)*rnz])
	}
	return m
}

// Mul sets y = D x + A x.
func (m *Matrix) Mul(y, x []float64) {
	rnz := int64(m.p.RNZ)
	for i := range m.p.N {
		s := m.d[i] * x[i]
		for k := i * rnz; k < (i+1)*rnz; k++ {
			s += m.val[k] * x[m.col[k]]
		}
		y[i] = s
	}
}

// Sequential runs iters steps x <- D x + A x from X0 on one core and
// returns x. It is the oracle.
func Sequential(p Params, iters int) []float64 {
	m := NewMatrix(p)
	x := make([]float64, p.N)
	y := make([]float64, p.N)
	for i := range x {
		x[i] = X0(int64(i))
	}
	for range iters {
		m.Mul(y, x)
		x, y = y, x
	}
	return x
}

// Strategy selects a communication strategy.
type Strategy int

// The strategies, in the paper's order.
const (
	Naive Strategy = iota
	V1
	V2
	V3
)

func (s Strategy) String() string {
	return [...]string{"naive", "v1", "v2", "v3"}[s]
}

// ParseStrategy parses "naive", "v1", "v2" or "v3".
func ParseStrategy(s string) (Strategy, error) {
	for k := Naive; k <= V3; k++ {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("spmv: unknown strategy %q (want naive, v1, v2 or v3)", s)
}

// Solver is one rank's part of a distributed SpMV.
type Solver struct {
	r       *pgas.Rank
	p       Params
	blk     int64
	x, y    *pgas.Array[float64]
	d, a    *pgas.Array[float64]
	j       *pgas.Array[int64]
	xcopy   []float64                 // V2: private full-length copy of x
	needBlk []int64                   // V2: blocks of x this rank reads
	plan    *pgas.GatherPlan[float64] // V3
	xfull   []float64                 // V3: private full-length copy of x (needed entries only)
}

// NewSolver is collective: it allocates x, y, D, A and J with block size blk
// (rows per block), fills this rank's rows, and builds what strategy s
// needs (the block list for V2, the gather plan for V3).
func NewSolver(ctx context.Context, r *pgas.Rank, p Params, blk int64, s Strategy) (*Solver, error) {
	sv := &Solver{r: r, p: p, blk: blk}
	var err error
	rnz := int64(p.RNZ)
	if sv.x, err = pgas.AllAllocArray[float64](ctx, r, p.N, blk); err != nil {
		return nil, err
	}
	if sv.y, err = pgas.AllAllocArray[float64](ctx, r, p.N, blk); err != nil {
		return nil, err
	}
	if sv.d, err = pgas.AllAllocArray[float64](ctx, r, p.N, blk); err != nil {
		return nil, err
	}
	if sv.a, err = pgas.AllAllocArray[float64](ctx, r, p.N*rnz, blk*rnz); err != nil {
		return nil, err
	}
	if sv.j, err = pgas.AllAllocArray[int64](ctx, r, p.N*rnz, blk*rnz); err != nil {
		return nil, err
	}
	// Fill own rows through the privatised views: row i's entries are
	// elements [i*rnz, (i+1)*rnz) of A and J, in the same block index.
	xl, dl, al, jl := sv.x.Local(), sv.d.Local(), sv.a.Local(), sv.j.Local()
	lay := sv.x.Layout()
	for li := range int64(len(xl)) {
		i := lay.GlobalIndex(r.ID(), li)
		xl[li] = X0(i)
		dl[li] = p.Row(i, jl[li*rnz:(li+1)*rnz], al[li*rnz:(li+1)*rnz])
	}
	switch s {
	case V2:
		sv.xcopy = make([]float64, p.N)
		seen := make(map[int64]bool)
		for _, c := range jl {
			if b := c / blk; !seen[b] {
				seen[b] = true
				sv.needBlk = append(sv.needBlk, b)
			}
		}
		for mb := range lay.LocalBlocks(r.ID()) { // own blocks too, as in the paper
			b := mb*int64(r.N()) + int64(r.ID())
			if !seen[b] {
				seen[b] = true
				sv.needBlk = append(sv.needBlk, b)
			}
		}
	case V3:
		if sv.plan, err = pgas.NewGatherPlan(ctx, sv.x, jl); err != nil {
			return nil, err
		}
		sv.xfull = make([]float64, p.N)
	}
	return sv, r.Barrier(ctx)
}

// Free is collective: it releases the solver's shared arrays and its
// gather plan, so that a job can build solvers one after another in
// segments sized for one.
func (sv *Solver) Free(ctx context.Context) error {
	var errs []error
	if sv.plan != nil {
		errs = append(errs, sv.plan.Free(ctx))
	}
	for _, f := range []func(context.Context) error{sv.j.AllFree, sv.a.AllFree, sv.d.AllFree, sv.y.AllFree, sv.x.AllFree} {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// X returns the current solution vector array.
func (sv *Solver) X() *pgas.Array[float64] { return sv.x }

// Plan returns the V3 gather plan, or nil.
func (sv *Solver) Plan() *pgas.GatherPlan[float64] { return sv.plan }

// Step is collective: it computes y = D x + A x with strategy s and swaps x
// and y between barriers.
func (sv *Solver) Step(ctx context.Context, s Strategy) error {
	var err error
	switch s {
	case Naive:
		err = sv.stepNaive(ctx)
	case V1:
		err = sv.stepV1(ctx)
	case V2:
		err = sv.stepV2(ctx)
	case V3:
		err = sv.stepV3(ctx)
	default:
		return fmt.Errorf("spmv: unknown strategy %d", s)
	}
	if err != nil {
		return err
	}
	if err := sv.r.Barrier(ctx); err != nil {
		return err
	}
	sv.x, sv.y = sv.y, sv.x
	return nil
}

// stepNaive: upc_forall over every row with an affinity test, every
// access through a global index.
func (sv *Solver) stepNaive(ctx context.Context) error {
	rnz := int64(sv.p.RNZ)
	for i := range sv.y.ForAll() {
		d, err := sv.d.Get(ctx, i)
		if err != nil {
			return err
		}
		xi, err := sv.x.Get(ctx, i)
		if err != nil {
			return err
		}
		s := d * xi
		for k := i * rnz; k < (i+1)*rnz; k++ {
			a, err := sv.a.Get(ctx, k)
			if err != nil {
				return err
			}
			c, err := sv.j.Get(ctx, k)
			if err != nil {
				return err
			}
			xc, err := sv.x.Get(ctx, c)
			if err != nil {
				return err
			}
			s += a * xc
		}
		if err := sv.y.Put(ctx, i, s); err != nil {
			return err
		}
	}
	return nil
}

// stepV1: own blocks privatised, x[J[k]] element by element.
func (sv *Solver) stepV1(ctx context.Context) error {
	rnz := int64(sv.p.RNZ)
	yl, dl, al, jl, xl := sv.y.Local(), sv.d.Local(), sv.a.Local(), sv.j.Local(), sv.x.Local()
	for li := range yl {
		s := dl[li] * xl[li]
		for k := int64(li) * rnz; k < int64(li+1)*rnz; k++ {
			xc, err := sv.x.Get(ctx, jl[k])
			if err != nil {
				return err
			}
			s += al[k] * xc
		}
		yl[li] = s
	}
	return nil
}

// stepV2: whole needed blocks of x into a private copy, then compute.
func (sv *Solver) stepV2(ctx context.Context) error {
	n := sv.p.N
	var hs []*pgas.Handle
	for _, b := range sv.needBlk {
		lo := b * sv.blk
		hi := min(lo+sv.blk, n)
		hs = append(hs, sv.x.GetRangeAsync(ctx, sv.xcopy[lo:hi], lo))
	}
	for _, x := range hs {
		if err := x.Wait(ctx); err != nil {
			return err
		}
	}
	rnz := int64(sv.p.RNZ)
	yl, dl, al, jl, xl := sv.y.Local(), sv.d.Local(), sv.a.Local(), sv.j.Local(), sv.x.Local()
	rowsDot(yl, dl, xl, al, jl, sv.xcopy, int(rnz))
	return nil
}

// rowsDot computes y = D x_own + A x for this rank's rows: rnz entries a
// row of al and jl, x read from the private full-length vector x. It
// takes each row's entries as slices of one length, so that the loop
// needs no bounds check but x's. Rows of 2, 4 and 8 entries go through
// loops unrolled for them: with few entries a row the general loop's
// per-row work, not memory, bounds the step (2 entries a row: 10-17 GB/s
// against 30-36 GB/s unrolled, BenchmarkRowsDot). Every form adds the
// products in the same order.
func rowsDot(yl, dl, xl, al []float64, jl []int64, x []float64, rnz int) {
	switch rnz {
	case 2:
		rowsDot2(yl, dl, xl, al, jl, x)
		return
	case 4:
		rowsDot4(yl, dl, xl, al, jl, x)
		return
	case 8:
		rowsDot8(yl, dl, xl, al, jl, x)
		return
	}
	for li := range yl {
		s := dl[li] * xl[li]
		ar := al[li*rnz : (li+1)*rnz]
		jr := jl[li*rnz : (li+1)*rnz]
		jr = jr[:len(ar)]
		for t, a := range ar {
			s += a * x[jr[t]]
		}
		yl[li] = s
	}
}

func rowsDot2(yl, dl, xl, al []float64, jl []int64, x []float64) {
	n := len(yl)
	dl, xl, al, jl = dl[:n], xl[:n], al[:2*n], jl[:2*n]
	for li := range yl {
		k := 2 * li
		s := dl[li] * xl[li]
		s += al[k] * x[jl[k]]
		s += al[k+1] * x[jl[k+1]]
		yl[li] = s
	}
}

func rowsDot4(yl, dl, xl, al []float64, jl []int64, x []float64) {
	n := len(yl)
	dl, xl, al, jl = dl[:n], xl[:n], al[:4*n], jl[:4*n]
	for li := range yl {
		k := 4 * li
		s := dl[li] * xl[li]
		s += al[k] * x[jl[k]]
		s += al[k+1] * x[jl[k+1]]
		s += al[k+2] * x[jl[k+2]]
		s += al[k+3] * x[jl[k+3]]
		yl[li] = s
	}
}

func rowsDot8(yl, dl, xl, al []float64, jl []int64, x []float64) {
	n := len(yl)
	dl, xl, al, jl = dl[:n], xl[:n], al[:8*n], jl[:8*n]
	for li := range yl {
		k := 8 * li
		s := dl[li] * xl[li]
		s += al[k] * x[jl[k]]
		s += al[k+1] * x[jl[k+1]]
		s += al[k+2] * x[jl[k+2]]
		s += al[k+3] * x[jl[k+3]]
		s += al[k+4] * x[jl[k+4]]
		s += al[k+5] * x[jl[k+5]]
		s += al[k+6] * x[jl[k+6]]
		s += al[k+7] * x[jl[k+7]]
		yl[li] = s
	}
}

// stepV3: one condensed, consolidated gather, then compute.
func (sv *Solver) stepV3(ctx context.Context) error {
	if err := sv.plan.ExecuteFull(ctx, sv.x, sv.xfull); err != nil {
		return err
	}
	rnz := int64(sv.p.RNZ)
	yl, dl, al, jl, xl := sv.y.Local(), sv.d.Local(), sv.a.Local(), sv.j.Local(), sv.x.Local()
	rowsDot(yl, dl, xl, al, jl, sv.xfull, int(rnz))
	return nil
}

// Compare checks this rank's part of x against the oracle and returns the
// largest absolute difference.
func (sv *Solver) Compare(want []float64) float64 {
	var worst float64
	lay := sv.x.Layout()
	for li, v := range sv.x.Local() {
		i := lay.GlobalIndex(sv.r.ID(), int64(li))
		worst = math.Max(worst, math.Abs(v-want[i]))
	}
	return worst
}

// Cols returns the column indices of this rank's rows, row after row
// (RNZ a row): what an inspector of the step's communication counts
// (pgas/model.InspectAll). The caller must not change them.
func (sv *Solver) Cols() []int64 { return sv.j.Local() }
