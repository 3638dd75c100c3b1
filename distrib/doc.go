// Package distrib assigns the input elements 0..n-1 of a map stage to N
// ranks. It implements the work distributions of UPC-MR's ApplyMap:
//
//   - Block: contiguous ranges; the first n mod N ranks get one extra element.
//   - Cyclic: element i goes to rank i mod N.
//   - Balanced: each element, in input order, goes to the rank with the
//     lowest current load (the sum of the weights assigned to it so far),
//     ties to the lowest rank.
//   - BestFit: Block if its largest load difference is strictly below a
//     threshold, else Cyclic if its difference is, else Balanced.
//   - Custom: an explicit owner per element, from a slice or a function.
//
// A Plan answers who owns an element (Owner), what a rank owns (Count,
// Elements), and how much work each rank has (Load, Loads, MaxDiff):
//
//	weights := []float64{2, 9, 3, 1, 8, 7, 9, 8, 8} // e.g. file sizes
//	p := distrib.NewBestFit(int64(len(weights)), weights, 3, 5)
//	fmt.Println(p.Kind(), p.Loads(), p.MaxDiff()) // balanced [19 18 18] 1
//	for i := range p.Elements(myRank) {           // increasing order
//		mapFn(items[i])
//	}
//
// An array-based map that splits its input itself takes its share with
// BlockRange, which agrees with NewBlock:
//
//	lo, hi := distrib.BlockRange(n, ranks, myRank)
//	mapChunk(items[lo:hi])
//
// # Cost
//
// Block and cyclic plans are arithmetic: creating one and calling Owner,
// Count, Load and Elements costs O(1) time and memory, whatever n is (a
// plan over 10^9 elements is a few hundred bytes); only Weighted and Loads
// take O(n) and O(N). Balanced and custom plans store an owner per element
// and each rank's element list, about 12 bytes per element; Balanced is
// built in O(n log N) time. With unit weights the balanced rule deals the
// elements round-robin, so NewBestFit without weights never stores more
// than O(N).
//
// # Loads and exactness
//
// Loads are float64. Without weights (NewBlock, NewCyclic, NewCustom) a
// rank's load is its element count. With weights, a rank's load is the sum
// of its elements' weights added in increasing element order, so it equals
// a sequential sum over Elements bit for bit; sums of integer weights are
// exact while they stay below 2^53. MaxDiff is the largest load minus the
// smallest.
//
// # Errors, ownership and concurrency
//
// Programming errors panic with a message saying what is wrong: ranks < 1
// (or at least 2^31 for plans that store owners), n < 0, a weights slice
// whose length is not n, a weight that is negative, NaN or infinite, a NaN
// threshold, an element or rank out of range. Callers holding untrusted
// weights check them first with CheckWeights. An owner out of range in a
// custom plan is bad data: NewCustom and NewCustomFunc return an error
// wrapping ErrOwner that names the element and the value.
//
// No constructor retains the slices it is given. A Plan is immutable and
// safe for concurrent use; Loads returns a fresh slice owned by the caller.
package distrib
