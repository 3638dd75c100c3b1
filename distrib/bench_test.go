package distrib

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

const benchN = 1 << 20

func benchPlans() (weights []float64, plans []*Plan) {
	rng := rand.New(rand.NewPCG(3, 4))
	weights = make([]float64, benchN)
	for i := range weights {
		weights[i] = float64(1 + rng.IntN(1000))
	}
	return weights, []*Plan{NewBlock(benchN, 16), NewCyclic(benchN, 16), NewBalanced(weights, 16)}
}

// BenchmarkOwner looks up every element's owner; the naive baseline reads
// a precomputed owner table.
func BenchmarkOwner(b *testing.B) {
	_, plans := benchPlans()
	for _, p := range plans {
		b.Run(fmt.Sprintf("ranks=%d/size=%d/%v", p.Ranks(), p.Len(), p.Kind()), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(p.Len() * 8)
			var s int
			for b.Loop() {
				for i := range p.Len() {
					s += p.Owner(i)
				}
			}
			sinkInt = s
		})
	}
	b.Run(fmt.Sprintf("ranks=16/size=%d/naive-table", benchN), func(b *testing.B) {
		table := naiveCyclic(benchN, 16)
		b.ReportAllocs()
		b.SetBytes(benchN * 8)
		var s int
		for b.Loop() {
			for _, k := range table {
				s += k
			}
		}
		sinkInt = s
	})
}

// BenchmarkElements iterates every rank's elements; the naive baseline
// scans an owner table once per rank.
func BenchmarkElements(b *testing.B) {
	_, plans := benchPlans()
	for _, p := range plans {
		b.Run(fmt.Sprintf("ranks=%d/size=%d/%v", p.Ranks(), p.Len(), p.Kind()), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(p.Len() * 8)
			var s int64
			for b.Loop() {
				for k := range p.Ranks() {
					for i := range p.Elements(k) {
						s += i
					}
				}
			}
			sinkInt64 = s
		})
	}
	b.Run(fmt.Sprintf("ranks=16/size=%d/naive-scan", benchN), func(b *testing.B) {
		table := naiveCyclic(benchN, 16)
		b.ReportAllocs()
		b.SetBytes(benchN * 8)
		var s int64
		for b.Loop() {
			for k := range 16 {
				for i, o := range table {
					if o == k {
						s += int64(i)
					}
				}
			}
		}
		sinkInt64 = s
	})
}

// BenchmarkNewBalanced builds a balanced plan with the heap against the
// naive O(n*N) scan of the tests' oracle.
func BenchmarkNewBalanced(b *testing.B) {
	weights, _ := benchPlans()
	for _, ranks := range []int{4, 64, 1024} {
		b.Run(fmt.Sprintf("ranks=%d/size=%d/heap", ranks, benchN), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(benchN * 8)
			for b.Loop() {
				sinkPlan = NewBalanced(weights, ranks)
			}
		})
		b.Run(fmt.Sprintf("ranks=%d/size=%d/naive", ranks, benchN), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(benchN * 8)
			for b.Loop() {
				sinkInt = naiveBalanced(weights, ranks)[0]
			}
		})
	}
}

var (
	sinkInt   int
	sinkInt64 int64
	sinkPlan  *Plan
)
