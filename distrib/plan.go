package distrib

import (
	"fmt"
	"iter"
)

// shape is how a Plan stores its assignment.
type shape uint8

const (
	shapeBlock  shape = iota // arithmetic: BlockRange
	shapeCyclic              // arithmetic: i mod ranks
	shapeList                // owner per element and per-rank element lists
)

// A Plan assigns the elements 0..Len()-1 to Ranks() ranks. Plans are made
// by NewBlock, NewCyclic, NewBalanced, NewBestFit, NewCustom and
// NewCustomFunc; they are immutable and safe for concurrent use.
type Plan struct {
	kind  Kind
	shape shape
	n     int64
	ranks int

	// shapeBlock: n = q*ranks + r; ranks below r own q+1 elements.
	q, r int64

	// shapeList: owner[i] is element i's rank; idx[off[k]:off[k+1]] are
	// rank k's elements in increasing order.
	owner []int32
	off   []int64
	idx   []int64

	// loads is nil for unit weights (the load is the count); maxDiff is
	// always set.
	loads   []float64
	maxDiff float64
}

// Kind returns the plan's algorithm; for a best-fit plan, the one it
// picked (Block, Cyclic or Balanced).
func (p *Plan) Kind() Kind { return p.kind }

// Len returns the number of elements n.
func (p *Plan) Len() int64 { return p.n }

// Ranks returns the number of ranks N.
func (p *Plan) Ranks() int { return p.ranks }

// Owner returns the rank element i is assigned to, in O(1).
// It panics if i is not in [0, Len()).
func (p *Plan) Owner(i int64) int {
	if uint64(i) >= uint64(p.n) {
		elementOutOfRange(i, p.n)
	}
	switch p.shape {
	case shapeBlock:
		if b := p.r * (p.q + 1); i >= b {
			return int(p.r + (i-b)/p.q)
		}
		return int(i / (p.q + 1))
	case shapeCyclic:
		return int(i % int64(p.ranks))
	}
	return int(p.owner[i])
}

func elementOutOfRange(i, n int64) {
	panic(fmt.Sprintf("distrib: element %d out of range [0,%d)", i, n))
}

// Count returns the number of elements assigned to rank.
// It panics if rank is not in [0, Ranks()).
func (p *Plan) Count(rank int) int64 {
	p.checkRank(rank)
	switch p.shape {
	case shapeBlock:
		lo, hi := p.blockRange(rank)
		return hi - lo
	case shapeCyclic:
		return cyclicCount(p.n, p.ranks, rank)
	default:
		return p.off[rank+1] - p.off[rank]
	}
}

// Elements returns rank's elements in increasing order. The sequence is
// lazy: for block and cyclic plans it is a range or a stride and allocates
// nothing per element. It panics if rank is not in [0, Ranks()).
func (p *Plan) Elements(rank int) iter.Seq[int64] {
	p.checkRank(rank)
	switch p.shape {
	case shapeBlock:
		lo, hi := p.blockRange(rank)
		return func(yield func(int64) bool) {
			for i := lo; i < hi; i++ {
				if !yield(i) {
					return
				}
			}
		}
	case shapeCyclic:
		n, step := p.n, int64(p.ranks)
		return func(yield func(int64) bool) {
			for i := int64(rank); i < n; i += step {
				if !yield(i) {
					return
				}
			}
		}
	default:
		list := p.idx[p.off[rank]:p.off[rank+1]]
		return func(yield func(int64) bool) {
			for _, i := range list {
				if !yield(i) {
					return
				}
			}
		}
	}
}

// Load returns rank's load: the sum of its elements' weights, or its
// element count if the plan has no weights.
// It panics if rank is not in [0, Ranks()).
func (p *Plan) Load(rank int) float64 {
	p.checkRank(rank)
	if p.loads == nil {
		return float64(p.Count(rank))
	}
	return p.loads[rank]
}

// Loads returns the loads of ranks 0..Ranks()-1 in a new slice.
func (p *Plan) Loads() []float64 {
	if p.loads != nil {
		return append([]float64(nil), p.loads...)
	}
	loads := make([]float64, p.ranks)
	for k := range loads {
		loads[k] = float64(p.Count(k))
	}
	return loads
}

// MaxDiff returns the largest load difference: the largest load minus the
// smallest.
func (p *Plan) MaxDiff() float64 { return p.maxDiff }

// Weighted returns a plan with p's assignment and kind whose loads are the
// sums of weights: rank k's load is the sum of weights[i] over its
// elements i. It takes O(n) time and O(N) extra memory and does not retain
// weights. It panics if len(weights) != Len() or a weight is negative, NaN
// or infinite.
func (p *Plan) Weighted(weights []float64) *Plan {
	if int64(len(weights)) != p.n {
		panic(fmt.Sprintf("distrib: Weighted: len(weights) = %d, plan has %d elements", len(weights), p.n))
	}
	mustWeights(weights)
	q := *p
	switch p.shape {
	case shapeBlock:
		q.loads = blockLoads(weights, p.ranks)
	case shapeCyclic:
		q.loads = cyclicLoads(weights, p.ranks)
	default:
		q.loads = make([]float64, p.ranks)
		for i, w := range weights {
			q.loads[p.owner[i]] += w
		}
	}
	q.maxDiff = spread(q.loads)
	return &q
}

// String describes the plan briefly, e.g. "block n=10 ranks=4 maxdiff=1".
func (p *Plan) String() string {
	return fmt.Sprintf("%v n=%d ranks=%d maxdiff=%g", p.kind, p.n, p.ranks, p.maxDiff)
}

func (p *Plan) checkRank(rank int) {
	if uint(rank) >= uint(p.ranks) {
		panic(fmt.Sprintf("distrib: rank %d out of range [0,%d)", rank, p.ranks))
	}
}

func (p *Plan) blockRange(rank int) (lo, hi int64) {
	k := int64(rank)
	lo = k*p.q + min(k, p.r)
	hi = lo + p.q
	if k < p.r {
		hi++
	}
	return lo, hi
}

// BlockRange returns rank's contiguous share [lo, hi) of n elements under
// the block distribution, the same range NewBlock(n, ranks) assigns: the
// first n mod ranks ranks get one element more than the others. It is for
// array-based maps that split their input themselves.
// It panics if n < 0, ranks < 1 or rank is not in [0, ranks).
func BlockRange(n int64, ranks, rank int) (lo, hi int64) {
	checkArgs(n, ranks)
	if uint(rank) >= uint(ranks) {
		panic(fmt.Sprintf("distrib: rank %d out of range [0,%d)", rank, ranks))
	}
	p := Plan{n: n, ranks: ranks, q: n / int64(ranks), r: n % int64(ranks)}
	return p.blockRange(rank)
}

func cyclicCount(n int64, ranks, rank int) int64 {
	c := n / int64(ranks)
	if int64(rank) < n%int64(ranks) {
		c++
	}
	return c
}

// spread returns max(loads) - min(loads); loads has one entry per rank,
// so it is never empty.
func spread(loads []float64) float64 {
	lo, hi := loads[0], loads[0]
	for _, l := range loads[1:] {
		lo, hi = min(lo, l), max(hi, l)
	}
	return hi - lo
}
