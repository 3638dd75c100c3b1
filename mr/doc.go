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
//		res, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (int, error) {
//			return p.Len(), nil // distinct words this rank reduced
//		}, mr.Gather(reduce.GatherAll))
//		...
//	})
//
// # Calls and rules
//
// ApplyMap, ApplyMapArray and ApplyReduce are collective: every rank calls
// them, with the same input list (the same Len and elements) and options.
// With pgas.Config.Check, ApplyMap compares the list's length and (for
// inputs that can hash themselves) a hash across ranks.
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
