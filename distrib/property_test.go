package distrib

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// Naive oracles: obviously correct, O(n*N) where that is simplest.

// naiveBlock deals sizes rank by rank: the first n mod N ranks get one more.
func naiveBlock(n int64, ranks int) []int {
	owner := make([]int, 0, n)
	for k := range ranks {
		size := n / int64(ranks)
		if int64(k) < n%int64(ranks) {
			size++
		}
		for range size {
			owner = append(owner, k)
		}
	}
	return owner
}

func naiveCyclic(n int64, ranks int) []int {
	owner := make([]int, n)
	for i := range owner {
		owner[i] = i % ranks
	}
	return owner
}

// naiveBalanced scans every rank for each element: lowest load, then
// lowest rank.
func naiveBalanced(weights []float64, ranks int) []int {
	loads := make([]float64, ranks)
	owner := make([]int, len(weights))
	for i, w := range weights {
		best := 0
		for k := 1; k < ranks; k++ {
			if loads[k] < loads[best] {
				best = k
			}
		}
		owner[i] = best
		loads[best] += w
	}
	return owner
}

// naiveLoads sums weights (nil: 1 each) per owner in element order.
func naiveLoads(owner []int, weights []float64, ranks int) []float64 {
	loads := make([]float64, ranks)
	for i, k := range owner {
		if weights == nil {
			loads[k]++
		} else {
			loads[k] += weights[i]
		}
	}
	return loads
}

func naiveDiff(loads []float64) float64 {
	return slices.Max(loads) - slices.Min(loads)
}

// naiveBestFit returns the kind and owners best fit should pick.
func naiveBestFit(n int64, weights []float64, ranks int, threshold float64) (Kind, []int) {
	if b := naiveBlock(n, ranks); naiveDiff(naiveLoads(b, weights, ranks)) < threshold {
		return Block, b
	}
	if c := naiveCyclic(n, ranks); naiveDiff(naiveLoads(c, weights, ranks)) < threshold {
		return Cyclic, c
	}
	if weights == nil {
		weights = make([]float64, n)
		for i := range weights {
			weights[i] = 1
		}
	}
	return Balanced, naiveBalanced(weights, ranks)
}

// randWeights draws n weights of one of several shapes: small integers
// (many ties), zeros, uniform floats, and heavy-tailed sizes.
func randWeights(rng *rand.Rand, n int) []float64 {
	w := make([]float64, n)
	mode := rng.IntN(4)
	for i := range w {
		switch mode {
		case 0:
			w[i] = float64(rng.IntN(10))
		case 1:
			if rng.IntN(3) == 0 {
				w[i] = float64(rng.IntN(3))
			}
		case 2:
			w[i] = rng.Float64() * 100
		default:
			w[i] = float64(int64(1) << rng.IntN(40))
		}
	}
	return w
}

// checkPlan verifies a plan's invariants against the expected owners and
// weights (nil: unit loads).
func checkPlan(t *testing.T, name string, p *Plan, kind Kind, owner []int, weights []float64) {
	t.Helper()
	n, ranks := int64(len(owner)), p.Ranks()
	if p.Kind() != kind || p.Len() != n {
		t.Fatalf("%s: Kind() = %v, Len() = %d; want %v, %d", name, p.Kind(), p.Len(), kind, n)
	}
	seen := make([]bool, n)
	var total int64
	for k := range ranks {
		var count int64
		var load float64
		prev := int64(-1)
		for i := range p.Elements(k) {
			if i <= prev || i >= n {
				t.Fatalf("%s: Elements(%d) yields %d after %d (n=%d)", name, k, i, prev, n)
			}
			if seen[i] {
				t.Fatalf("%s: element %d listed twice", name, i)
			}
			if got := p.Owner(i); got != k || owner[i] != k {
				t.Fatalf("%s: Elements(%d) has %d but Owner(%d) = %d, oracle %d", name, k, i, i, got, owner[i])
			}
			seen[i], prev = true, i
			count++
			if weights == nil {
				load++
			} else {
				load += weights[i]
			}
		}
		if p.Count(k) != count {
			t.Fatalf("%s: Count(%d) = %d; Elements has %d", name, k, p.Count(k), count)
		}
		if p.Load(k) != load {
			t.Fatalf("%s: Load(%d) = %v; sum over Elements %v", name, k, p.Load(k), load)
		}
		total += count
	}
	if total != n {
		t.Fatalf("%s: counts sum to %d; want %d", name, total, n)
	}
	loads := p.Loads()
	if want := naiveLoads(owner, weights, ranks); !slices.Equal(loads, want) {
		t.Fatalf("%s: Loads() = %v; want %v", name, loads, want)
	}
	if d := naiveDiff(loads); p.MaxDiff() != d {
		t.Fatalf("%s: MaxDiff() = %v; want max-min %v", name, p.MaxDiff(), d)
	}
	// An early break stops the sequence.
	for k := range ranks {
		for range p.Elements(k) {
			break
		}
	}
}

func TestProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 1000 {
		n := rng.IntN(60)
		if iter%10 == 0 {
			n = rng.IntN(3000)
		}
		ranks := 1 + rng.IntN(12)
		if iter%7 == 0 {
			ranks = 1 + rng.IntN(70)
		}
		w := randWeights(rng, n)
		n64 := int64(n)
		name := fmt.Sprintf("iter=%d/n=%d/ranks=%d", iter, n, ranks)

		block, cyclic := naiveBlock(n64, ranks), naiveCyclic(n64, ranks)
		checkPlan(t, name+"/block", NewBlock(n64, ranks), Block, block, nil)
		checkPlan(t, name+"/block-w", NewBlock(n64, ranks).Weighted(w), Block, block, w)
		checkPlan(t, name+"/cyclic", NewCyclic(n64, ranks), Cyclic, cyclic, nil)
		checkPlan(t, name+"/cyclic-w", NewCyclic(n64, ranks).Weighted(w), Cyclic, cyclic, w)
		checkPlan(t, name+"/balanced", NewBalanced(w, ranks), Balanced, naiveBalanced(w, ranks), w)

		for k := range ranks {
			lo, hi := BlockRange(n64, ranks, k)
			if got := slices.Collect(NewBlock(n64, ranks).Elements(k)); int64(len(got)) != hi-lo || len(got) > 0 && got[0] != lo {
				t.Fatalf("%s: BlockRange(%d) = [%d,%d); block Elements = %v", name, k, lo, hi, got)
			}
		}

		// Thresholds around the block and cyclic differences hit every
		// branch and the strict comparison.
		bd, cd := naiveDiff(naiveLoads(block, w, ranks)), naiveDiff(naiveLoads(cyclic, w, ranks))
		for _, th := range []float64{0, bd, cd, bd + 0.5, cd + 0.5, rng.Float64() * 2 * max(bd, cd, 1)} {
			kind, owner := naiveBestFit(n64, w, ranks, th)
			checkPlan(t, fmt.Sprintf("%s/bestfit-w/%v", name, th), NewBestFit(n64, w, ranks, th), kind, owner, w)
			kind, owner = naiveBestFit(n64, nil, ranks, th/10)
			checkPlan(t, fmt.Sprintf("%s/bestfit/%v", name, th/10), NewBestFit(n64, nil, ranks, th/10), kind, owner, nil)
		}

		owner := make([]int, n)
		for i := range owner {
			owner[i] = rng.IntN(ranks)
		}
		p, err := NewCustom(owner, ranks)
		if err != nil {
			t.Fatalf("%s: NewCustom error: %v", name, err)
		}
		checkPlan(t, name+"/custom", p, Custom, owner, nil)
		checkPlan(t, name+"/custom-w", p.Weighted(w), Custom, owner, w)
		q, err := NewCustomFunc(n64, ranks, func(i int64) int { return owner[i] })
		if err != nil {
			t.Fatalf("%s: NewCustomFunc error: %v", name, err)
		}
		checkPlan(t, name+"/customfunc", q, Custom, owner, nil)
		// Re-weighting a balanced plan keeps its owners.
		w2 := randWeights(rng, n)
		checkPlan(t, name+"/balanced-rew", NewBalanced(w, ranks).Weighted(w2), Balanced, naiveBalanced(w, ranks), w2)
	}
}
