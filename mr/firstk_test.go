package mr

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFirstK: the heap selection gives what a stable sort's first k are,
// ties included, for every k, and leaves its input alone.
func TestFirstK(t *testing.T) {
	type rec struct{ score, id int }
	byScore := func(a, b rec) int { return cmp.Compare(b.score, a.score) } // ties: not a total order
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 7, 100, 1000} {
		xs := make([]rec, n)
		for i := range xs {
			xs[i] = rec{rng.IntN(20), i}
		}
		orig := slices.Clone(xs)
		want := slices.Clone(xs)
		slices.SortStableFunc(want, byScore)
		for _, k := range []int{0, 1, 3, n / 2, n - 1, n, n + 5} {
			if k < 0 {
				continue
			}
			got := firstK(xs, k, byScore)
			if w := want[:min(k, n)]; !slices.Equal(got, w) {
				t.Fatalf("n=%d k=%d: %v, want %v", n, k, got, w)
			}
			if !slices.Equal(xs, orig) {
				t.Fatalf("n=%d k=%d: the input changed", n, k)
			}
		}
	}
}

func BenchmarkFirstK(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	xs := make([]int, 1<<20)
	for i := range xs {
		xs[i] = rng.Int()
	}
	for b.Loop() {
		firstK(xs, 20, cmp.Compare[int])
	}
}
