package distrib

import (
	"errors"
	"fmt"
	"math"
)

// ErrOwner is wrapped by the errors NewCustom and NewCustomFunc return for
// an owner that is not a rank.
var ErrOwner = errors.New("distrib: owner out of range")

// ErrWeight is wrapped by the errors CheckWeights returns for a weight that
// is negative, NaN or infinite.
var ErrWeight = errors.New("distrib: invalid weight")

// NewBlock returns the block distribution of n elements over ranks ranks:
// rank k owns the contiguous range BlockRange(n, ranks, k), and the first
// n mod ranks ranks own one element more than the others. Loads are
// element counts. It costs O(1) time and memory.
// It panics if n < 0 or ranks < 1.
func NewBlock(n int64, ranks int) *Plan {
	checkArgs(n, ranks)
	q, r := n/int64(ranks), n%int64(ranks)
	return &Plan{kind: Block, shape: shapeBlock, n: n, ranks: ranks, q: q, r: r, maxDiff: unitDiff(r)}
}

// NewCyclic returns the cyclic (round-robin) distribution of n elements
// over ranks ranks: element i goes to rank i mod ranks. Loads are element
// counts. It costs O(1) time and memory.
// It panics if n < 0 or ranks < 1.
func NewCyclic(n int64, ranks int) *Plan {
	checkArgs(n, ranks)
	return &Plan{kind: Cyclic, shape: shapeCyclic, n: n, ranks: ranks, maxDiff: unitDiff(n % int64(ranks))}
}

// unitDiff is the largest count difference when rem = n mod ranks ranks
// own one element more than the rest.
func unitDiff(rem int64) float64 {
	if rem == 0 {
		return 0
	}
	return 1
}

// NewBalanced returns the balanced distribution of len(weights) elements
// over ranks ranks: each element, in input order, goes to the rank with the
// lowest load so far (the sum of the weights assigned to it), ties to the
// lowest rank. It takes O(n log N) time and about 12 bytes per element,
// and does not retain weights.
// It panics if ranks < 1 or ranks >= 2^31, or a weight is negative, NaN or
// infinite.
func NewBalanced(weights []float64, ranks int) *Plan {
	checkListArgs(int64(len(weights)), ranks)
	mustWeights(weights)
	return balanced(weights, ranks)
}

// NewBestFit returns the first acceptable of the block, cyclic and
// balanced distributions of n elements over ranks ranks: the block plan if
// its MaxDiff under weights is strictly below threshold, else the cyclic
// plan if its MaxDiff is, else the balanced plan. Block wins when both
// pass. Kind reports the pick, and Loads are weighted. A nil weights means
// weight 1 for every element; then the balanced rule deals round-robin and
// the plan, whatever it picks, costs O(1) memory. Otherwise it takes O(n)
// time to score block and cyclic, and NewBalanced's cost if neither passes.
// It panics if n < 0, ranks < 1, threshold is NaN, or weights is not nil and
// its length is not n or a weight is negative, NaN or infinite; if it
// picks Balanced with weights, also if ranks >= 2^31.
func NewBestFit(n int64, weights []float64, ranks int, threshold float64) *Plan {
	checkArgs(n, ranks)
	if math.IsNaN(threshold) {
		panic("distrib: NewBestFit: threshold is NaN")
	}
	if weights == nil {
		if p := NewBlock(n, ranks); p.maxDiff < threshold {
			return p
		}
		p := NewCyclic(n, ranks)
		if p.maxDiff >= threshold {
			// Unit weights: the least loaded rank is always the next one
			// round-robin, so balanced is cyclic.
			p.kind = Balanced
		}
		return p
	}
	if int64(len(weights)) != n {
		panic(fmt.Sprintf("distrib: NewBestFit: len(weights) = %d, n = %d", len(weights), n))
	}
	mustWeights(weights)
	if loads := blockLoads(weights, ranks); spread(loads) < threshold {
		p := NewBlock(n, ranks)
		p.loads, p.maxDiff = loads, spread(loads)
		return p
	}
	if loads := cyclicLoads(weights, ranks); spread(loads) < threshold {
		p := NewCyclic(n, ranks)
		p.loads, p.maxDiff = loads, spread(loads)
		return p
	}
	checkListArgs(n, ranks)
	return balanced(weights, ranks)
}

// NewCustom returns the plan that assigns element i to rank owner[i]. Loads
// are element counts (see Weighted). It does not retain owner.
// It returns an error wrapping ErrOwner, naming the first element whose
// owner is not in [0, ranks). It panics if ranks < 1 or ranks >= 2^31.
func NewCustom(owner []int, ranks int) (*Plan, error) {
	checkListArgs(int64(len(owner)), ranks)
	own := make([]int32, len(owner))
	for i, k := range owner {
		if uint(k) >= uint(ranks) {
			return nil, fmt.Errorf("%w: owner[%d] = %d, want [0,%d)", ErrOwner, i, k, ranks)
		}
		own[i] = int32(k)
	}
	return listPlan(Custom, own, ranks, nil), nil
}

// NewCustomFunc returns the plan that assigns element i to rank owner(i).
// It calls owner once for each i in increasing order. Loads are element
// counts (see Weighted).
// It returns an error wrapping ErrOwner, naming the first element whose
// owner is not in [0, ranks). It panics if n < 0, ranks < 1 or ranks >= 2^31.
func NewCustomFunc(n int64, ranks int, owner func(i int64) int) (*Plan, error) {
	checkListArgs(n, ranks)
	own := make([]int32, n)
	for i := range own {
		k := owner(int64(i))
		if uint(k) >= uint(ranks) {
			return nil, fmt.Errorf("%w: owner(%d) = %d, want [0,%d)", ErrOwner, i, k, ranks)
		}
		own[i] = int32(k)
	}
	return listPlan(Custom, own, ranks, nil), nil
}

// CheckWeights returns an error wrapping ErrWeight that names the first
// weight that is negative, NaN or infinite, or nil if all are valid.
func CheckWeights(weights []float64) error {
	for i, w := range weights {
		if !(w >= 0) || math.IsInf(w, 1) {
			return fmt.Errorf("%w: weights[%d] = %g, want finite and >= 0", ErrWeight, i, w)
		}
	}
	return nil
}

func mustWeights(weights []float64) {
	if err := CheckWeights(weights); err != nil {
		panic(err.Error())
	}
}

func checkArgs(n int64, ranks int) {
	if n < 0 || ranks < 1 {
		panic(fmt.Sprintf("distrib: invalid plan n=%d ranks=%d (want n >= 0, ranks >= 1)", n, ranks))
	}
}

// checkListArgs is checkArgs for plans that store an int32 owner per element.
func checkListArgs(n int64, ranks int) {
	checkArgs(n, ranks)
	if ranks > math.MaxInt32 {
		panic(fmt.Sprintf("distrib: ranks=%d too large for a stored plan (want < 2^31)", ranks))
	}
}

// listPlan builds a shapeList plan from owners, grouping each rank's
// elements by a counting sort. loads nil means counts.
func listPlan(kind Kind, owner []int32, ranks int, loads []float64) *Plan {
	off := make([]int64, ranks+1)
	for _, k := range owner {
		off[k+1]++
	}
	for k := range ranks {
		off[k+1] += off[k]
	}
	idx := make([]int64, len(owner))
	next := append([]int64(nil), off[:ranks]...)
	for i, k := range owner {
		idx[next[k]] = int64(i)
		next[k]++
	}
	p := &Plan{kind: kind, shape: shapeList, n: int64(len(owner)), ranks: ranks, owner: owner, off: off, idx: idx, loads: loads}
	if loads == nil {
		lo, hi := off[1]-off[0], off[1]-off[0]
		for k := 1; k < ranks; k++ {
			c := off[k+1] - off[k]
			lo, hi = min(lo, c), max(hi, c)
		}
		p.maxDiff = float64(hi - lo)
	} else {
		p.maxDiff = spread(loads)
	}
	return p
}

// balanced runs the greedy rule with a min-heap of ranks ordered by
// (load, rank), so ties go to the lowest rank.
func balanced(weights []float64, ranks int) *Plan {
	loads := make([]float64, ranks)
	heap := make([]int32, ranks) // all loads 0: rank order is a heap
	for k := range heap {
		heap[k] = int32(k)
	}
	less := func(a, b int32) bool {
		return loads[a] < loads[b] || loads[a] == loads[b] && a < b
	}
	owner := make([]int32, len(weights))
	for i, w := range weights {
		k := heap[0]
		owner[i] = k
		loads[k] += w
		// Sift the root down: its load only grew.
		for j := 0; ; {
			c := 2*j + 1
			if c >= ranks {
				break
			}
			if c+1 < ranks && less(heap[c+1], heap[c]) {
				c++
			}
			if !less(heap[c], k) {
				break
			}
			heap[j] = heap[c]
			j = c
			heap[j] = k
		}
	}
	return listPlan(Balanced, owner, ranks, loads)
}

// blockLoads returns the block plan's loads under weights.
func blockLoads(weights []float64, ranks int) []float64 {
	n := int64(len(weights))
	p := Plan{n: n, ranks: ranks, q: n / int64(ranks), r: n % int64(ranks)}
	loads := make([]float64, ranks)
	for k := range loads {
		lo, hi := p.blockRange(k)
		var s float64
		for _, w := range weights[lo:hi] {
			s += w
		}
		loads[k] = s
	}
	return loads
}

// cyclicLoads returns the cyclic plan's loads under weights.
func cyclicLoads(weights []float64, ranks int) []float64 {
	loads := make([]float64, ranks)
	k := 0
	for _, w := range weights {
		loads[k] += w
		if k++; k == ranks {
			k = 0
		}
	}
	return loads
}
