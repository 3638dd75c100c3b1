package distrib_test

import (
	"errors"
	"fmt"

	"github.com/pgasmr/pgasmr/distrib"
)

// The nine weighted elements of UPC-MR's Figure 4.1 on three ranks: block
// and cyclic leave a load difference of 11 and 13, the balanced heuristic
// of 1, so best fit with a threshold of 5 picks balanced.
func ExampleNewBestFit() {
	weights := []float64{2, 9, 3, 1, 8, 7, 9, 8, 8}
	n := int64(len(weights))
	for _, p := range []*distrib.Plan{
		distrib.NewBlock(n, 3).Weighted(weights),
		distrib.NewCyclic(n, 3).Weighted(weights),
		distrib.NewBalanced(weights, 3),
		distrib.NewBestFit(n, weights, 3, 5),
	} {
		fmt.Printf("%-8v loads %v maxdiff %v:", p.Kind(), p.Loads(), p.MaxDiff())
		for rank := range p.Ranks() {
			fmt.Print(" [")
			sep := ""
			for i := range p.Elements(rank) {
				fmt.Print(sep, weights[i])
				sep = " "
			}
			fmt.Print("]")
		}
		fmt.Println()
	}
	// Output:
	// block    loads [14 16 25] maxdiff 11: [2 9 3] [1 8 7] [9 8 8]
	// cyclic   loads [12 25 18] maxdiff 13: [2 1 9] [9 8 8] [3 7 8]
	// balanced loads [19 18 18] maxdiff 1: [2 1 8 8] [9 9] [3 7 8]
	// balanced loads [19 18 18] maxdiff 1: [2 1 8 8] [9 9] [3 7 8]
}

// A block plan is arithmetic, so it covers any number of elements in O(1)
// memory; the first n mod N ranks get one element more.
func ExampleNewBlock() {
	p := distrib.NewBlock(1_000_000_000, 3)
	for rank := range p.Ranks() {
		lo, hi := distrib.BlockRange(p.Len(), p.Ranks(), rank)
		fmt.Printf("rank %d: [%d,%d) count %d\n", rank, lo, hi, p.Count(rank))
	}
	fmt.Println("owner of 999999999:", p.Owner(999_999_999), "maxdiff:", p.MaxDiff())
	// Output:
	// rank 0: [0,333333334) count 333333334
	// rank 1: [333333334,666666667) count 333333333
	// rank 2: [666666667,1000000000) count 333333333
	// owner of 999999999: 2 maxdiff: 1
}

// A custom plan comes from an owner slice or function; an owner that is not
// a rank is reported as an error naming the element.
func ExampleNewCustom() {
	p, err := distrib.NewCustom([]int{1, 1, 0, 2}, 3)
	fmt.Println(p, err)
	for i := range p.Elements(1) {
		fmt.Println("rank 1 has", i)
	}
	_, err = distrib.NewCustom([]int{0, 3}, 3)
	fmt.Println(err, errors.Is(err, distrib.ErrOwner))
	// Output:
	// custom n=4 ranks=3 maxdiff=1 <nil>
	// rank 1 has 0
	// rank 1 has 1
	// distrib: owner out of range: owner[1] = 3, want [0,3) true
}
