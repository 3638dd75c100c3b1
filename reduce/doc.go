// Package reduce holds a rank's intermediate pairs between the map and the
// reduce functions: the pair containers, how values of one key combine,
// how keys and values encode, and the vocabulary of the reduce stage's
// data movement. It is private, sequential data structures only: it
// imports nothing of the PGAS runtime, and the movement itself (which
// rank's pairs go where, over which collective) is package
// reduce/shuffle's.
//
// # Containers
//
// A Store is one rank's container, made once per job:
//
//	st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
//	st, err := reduce.NewArrayStore[uint8, int64](256, reduce.Sum[int64]())
//
// NewHashStore (or NewHashStoreFunc, for keys ordered by a function) suits
// any key space; NewArrayStore suits the small dense integer keys
// [0, size) of a histogram. The Combiner decides what a key keeps: Sum,
// Min, Max or Func fold values as they are emitted, one value per key
// (Phoenix++'s combiners); KeepAll keeps every value with a Tag that
// orders it by (map call, input index or rank, emit order), so that the
// values a reduce function sees are in the same order at every rank count.
//
// The kind is chosen once: a store is one of five containers (hash or
// array, combined or keeping all, and an int64-summing array whose
// addition is inlined) behind one interface, and Emitter hands out the
// chosen container's emit method for the map functions' hot path.
//
// A store drains into a Run, keys ascending; runs from several ranks merge
// into one with Store.Merge (equal keys combined in run order, or kept
// values ordered by tag); a Run's Pairs is what a reduce function gets.
//
// # Codecs
//
// Keys and values cross ranks encoded by a Codec: raw memory for
// fixed-size, pointer-free types (RawCodec), msgpack records for strings
// and byte slices, or one made with NewCodec for anything else. CodecFor
// picks the default; WithKeyCodec and WithValueCodec override it. A codec
// with state (msgpack's encoder) is instantiated per store, so one Codec
// value can be shared by the in-process ranks of a job.
//
// # Data movement
//
// Options (Gather, Root, Transfer, Merge) say how a rank's pairs reach the
// ranks that reduce them; Stats counts the work. GatherDefault resolves to
// GatherPartitioned (Gather.Resolve), the default of package mr and of
// shuffle.Collect.
//
// CountTable is a combining table of string keys and int64 counts fed
// byte slices, for maps that count over their rank's input before they
// emit (wordcount, the MapReduce-MPI baseline). Under a budget (OnFull,
// Store.SinkBudget) it hands its colder keys over as it goes (TakeCold)
// to the store, whose Sink (the node's table of package reduce/shuffle)
// takes them.
package reduce
