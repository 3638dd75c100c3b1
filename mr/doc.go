// Package mr is the MapReduce API of pgasmr, after UPC-MR (seeds/002
// chapter 4): users write sequential map and reduce functions; ApplyMap
// runs the map over an input list distributed over the ranks, with pairs
// kept in each rank's private store (combined as they are emitted), and
// ApplyReduce moves the pairs with the extended collectives and calls the
// reduce function once per rank with all the keys it holds.
//
//	err := pgas.Run(ctx, pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
//		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
//		if err != nil {
//			return err
//		}
//		in := mr.Slice(lines) // the same list on every rank
//		if _, err := mr.ApplyMap(ctx, r, in, func(ctx context.Context, line string, emit func(string, int64)) error {
//			for _, w := range strings.Fields(line) {
//				emit(w, 1)
//			}
//			return nil
//		}, st, mr.WithDistribution(distrib.Cyclic)); err != nil {
//			return err
//		}
//		counts, err := mr.Collect(ctx, r, st) // every word with its count, on every rank
//		...
//	})
//
// # Calls and rules
//
// ApplyMap, ApplyMapArray and the reduce calls are collective: every rank
// calls them, with the same options, and with the same input list unless
// the input is Local. Each call compares its options and its input (the
// length and a hash of up to 4096 sampled elements) across the ranks, and
// a mismatch is an error naming the ranks and the call, not a wrong
// result; pgas.Config.NoCheck turns the checks off.
//
// Where the data lies: an input made by Slice (or WeightedSlice, Files,
// AllFiles) is one list that every rank holds, and the ranks share its
// elements out by the distribution; an input made by Local is each rank's
// own list, mapped where it lies (an SPMD program's own data, or a
// partitioned result from the stage before).
//
// Where the result lies: a reduce call without a Gather option gives every
// rank the whole result, so that any rank reads it and a next stage maps it
// with Slice. Gather(reduce.GatherRoot) reduces on the root only (Root);
// Gather(reduce.GatherPartitioned) reduces each key once on the rank that
// owns it and leaves each rank its part (Result.Part), which a next stage
// maps with Local and TopK or Sort combine. Stages chain:
//
//	words, err := mr.Collect(ctx, r, st1)  // whole, on every rank
//	_, err = mr.ApplyMap(ctx, r, mr.Slice(words.Value), byCount, st2)
//
//	part, err := mr.Collect(ctx, r, st1, mr.Gather(reduce.GatherPartitioned))
//	_, err = mr.ApplyMap(ctx, r, mr.Local(part.Value), byCount, st2)
//
// A store that combines its values (reduce.Sum, Min, Max, Func) is read
// with Collect, one value per key, and dense integer keys as a slice with
// Dense; a store that keeps every value (reduce.KeepAll) with ReduceKeys,
// a key's values in input order; ApplyReduce and ApplyReduceStream give
// the reduce function every pair of the rank at once.
//
// Element-by-element maps (ApplyMap) get one element at a time; the
// framework distributes elements with distrib (block, cyclic, balanced,
// best-fit) and reads them lazily by index, so an input of file splits
// never has to be in memory at once. Array-based maps (ApplyMapArray) get
// the rank and the whole list and distribute work themselves
// (distrib.BlockRange gives a rank its contiguous share).
//
// Inputs named on a command line go through ListFiles, the one directory
// walker of every app: paths in the order given, each directory walked in
// lexical order, links to files followed, FIFOs and devices inside a
// directory passed over and given as an input refused (StatInput), and
// what cannot be listed an error naming it or, on request, a Skip.
//
// The reduce function receives keys in ascending order with one combined
// value each, or all values in the order (input index, emit order) when the
// store keeps all values. Results are identical for every rank count,
// distribution, map mode, gather mode and transfer mode when the combiner
// is commutative and associative (integer sums, min, max); floating-point
// sums may differ in the last bits with the rank count.
//
// An error or panic in a user function ends the job with an error naming
// the rank and the input element.
//
// # Job options
//
// A job run by mr/job.Run gets its options (-mode) through the context
// (WithJobOptions): every map and reduce call applies them before its own.
//
// Options holds the settings every job has, whatever its functions: the
// map mode, the distribution, the gather mode, the root and the transfer.
// A job declares what its zero fields mean once, as Defaults (whether it
// has an array map, its gather mode); Resolve applies them, Validate
// checks them, MapOptions and ReduceOptions turn them into the options of
// ApplyMap and ApplyReduce (ReduceOptions adds Merge where the gather
// leaves the pairs spread, so that Root gets the whole result). The
// applications embed Options in their own options type, and mrrun parses
// them once. Options print, and parse back, in a one-word form:
//
//	o, err := mr.ParseOptions("cyclic+no-collectives+gather-root+root=1")
//	fmt.Println(o)                     // cyclic+gather-root+no-collectives+root=1
//	fmt.Println(mr.Options{}.String()) // default
package mr
