// Package shuffle moves a rank's intermediate pairs (a reduce.Store) to the
// ranks that reduce them, over the PGAS runtime: the reduce stage's data
// movement of UPC-MR (seeds/002), after the map and before the reduce
// function.
//
// Collect drains the store into a sorted run and moves it as
// reduce.Options say:
//
//   - GatherPartitioned: every pair to rank xxhash(encoded key) mod N, with
//     one ExchangeV (all-to-all) of private buffers; each key is encoded
//     once and each pair moves once.
//   - GatherAll: every rank's pairs to every rank (AllgatherV).
//   - GatherRoot: every pair to the root (GatherV).
//   - GatherNone: pairs stay where they are.
//
// With Transfer ElementByElement, records move with one put each through a
// bounded, double-buffered receive window in the segment instead (UPC-MR's
// no-collectives baseline), in rounds, so a transfer of any size fits.
// Merge then gathers the (combined) result to the root.
//
// On the wire a buffer is records (key, value, and for KeepAll the three
// words of the value's tag) followed, when either codec is variable-size,
// by an index: each record's offset and the record count. The receiver
// checks the index against what it decodes, so a corrupt buffer is an
// error naming the sending rank, never a panic.
//
// Before it moves pairs, with a commutative combiner and reduce.Options.Node
// (on, or auto where the transport maps every segment), the ranks of a
// node fold their pairs into one hash table per node, partitioned over
// the node's ranks, so that what moves is a pair per key and node. Begin,
// called before the map (mr.WithReduce), sets the table up as the store's
// sink (reduce.Sink), and ranks fold into it while they map, each holding
// at most its share of Options.NodeBudget; Collect folds the rest. A
// partition lives in its rank's segment and is reached under its lock,
// through pgas.Rank.Cast where the segment is mapped in the process and
// with one-sided gets and puts elsewhere; every access is counted. A job
// that sums int64 values counts into the table without locks (counting
// partitions, nodecount.go), and where the node's ranks take turns
// (pgas.Rank.TakeTurn: more in-process ranks than processors) each turn
// has a stripe, a whole table that the rank holding it counts into with
// the hash its own table computed (nodestripe.go).
//
// Once a rank's store has spilled under a memory budget, every move goes
// in bounded rounds instead, and the pairs come back as a stream
// (CollectStream; see bounded.go).
//
// Received runs merge in rank order (reduce.Store.Merge), so results are
// identical for every rank count when the combiner is commutative, and
// kept values are in tag order always.
package shuffle
