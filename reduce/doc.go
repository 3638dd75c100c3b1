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
// # Spilling
//
// A store given a Spill and a budget of bytes (SetSpill) keeps about that
// many bytes of pairs in memory and writes the rest to temporary files
// (issue 13's memory bound; this is its store side):
//
//	sp := &reduce.Spill{Dir: "/scratch"} // "" means os.TempDir()
//	defer sp.Close()                     // every exit path
//	st.SetSpill(sp, 64<<20)              // before st.Emitter()
//	...
//	e := st.Drain() // the same run as without spilling
//	if err := st.Err(); err != nil { ... } // a spilled run unreadable
//
// The budget counts an estimate, cheap and deterministic (the same pairs
// give the same spills on every run): a held key costs its encoded size
// with the store's key codec plus 32 bytes for its slot, a value its
// encoded size, plus 24 bytes for its tag if all values are kept; a
// combined key is charged once, with the first value emitted. For a
// million 12-byte string keys summing int64 counts, the estimate was 1.17
// times the heap the pairs took (Go 1.26, amd64). Container overhead
// beyond that (a map growing) is not counted, and an array store's slots,
// allocated for its whole key range, are not given back by spilling.
//
// When a pair, or a run or pairs added whole, takes the estimate past the
// budget, the store writes what it holds as sorted runs, combined as
// Drain combines them, one file for each part that holds pairs (the
// emitted pairs, the runs of AddRun, the pairs of AddPairs), and empties
// those parts. The parts are spilled apart, and merged back in the order
// Drain combines them in, so that Drain's run is the same, value for
// value, as without spilling for every combiner that is exactly
// associative (integer Sum, Min, Max, an associative Func, commutative or
// not), and for KeepAll, whose values keep their tags in the files; a
// floating-point Sum regroups its additions, as it does across rank
// counts. When a part holds 64 files of one level, they are merged into
// one file of the next (so at most 63 a level, and each pair is written
// once a level: log64 of the spills).
//
// A spill file holds one sorted run, written through a bufio.Writer
// with no fsync: a header (magic "PGMRSPIL", version, whether values are
// kept with tags), one length-prefixed record per key (the key, then its
// value, or its count of values each with its tag as three varints,
// encoded with the store's codecs), an end record, and a trailer with the
// key and value counts and a CRC-32C of every byte before it. A file cut
// short or changed is an error naming the file and the record, wrapping
// ErrCorruptSpill; the reader checks lengths against the file's size
// before it allocates, and the key order as it goes.
//
// Reading back is a stream: a RunReader yields one key and its values at
// a time, from a Run in memory (ReadRun), a spilled file, or a k-way merge
// of readers (MergeReaders, combining as Merge does). DrainStream merges
// the spilled runs with the pairs in memory without materialising them
// and removes each file once read; Drain materialises that merge, and
// DrainCombined returns each spilled run's pairs after the ones in
// memory; both record a run they cannot read back in Err. A file open for reading costs a 64 KiB buffer, outside the budget.
//
// Lifecycle: a job's files live in one directory, made at its first spill
// in Spill.Dir and named for the process (pgasmr-spill-<pid>-<start
// time>-<pid namespace>-<random>, see internal/tmpdir). Drain removes
// each file it reads, Reset those not drained, and Spill.Close the
// directory: defer it where the job starts, so that an error or a
// SIGINT the program turns into a cancelled context (returning through
// its defers) removes it too. A process killed outright leaves its
// directory; the next job's first spill removes the directories of
// processes it can prove dead (CleanStale: the pid is gone, a zombie, or
// reused by a process with another start time) and never a live one's.
// A spill that fails (the directory cannot be made, the disk is full) is
// an error naming the directory or file and the store's budget, reported
// by Err, AddRun and AddPairs; the store then keeps its pairs in memory
// and spills no more, and no pair is lost.
//
// The reduce stage's moves are bounded too: once a rank has spilled,
// package reduce/shuffle moves every rank's pairs in rounds from
// DrainStream into the receiving stores, which spill what they cannot
// hold, and hands the reduce a stream (shuffle.CollectStream,
// mr.ApplyReduceStream). Store.Stream reads a store without draining it,
// for a result read more than once. Not bounded: a reduce function that
// takes Pairs (mr.ApplyReduce) holds them, and what it returns.
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
// takes them; a sink that takes counts one key at a time (CountSink,
// HandOver) gets the keys the table does not hold as they come, with the
// table's hash if it shares its seed (HashedCountSink); a sink that can
// lend the table a CountArea (AreaSink: a counting table laid out in the
// shared memory of the ranks that take turns) has the table count every
// key there instead of in its own slots. Store.EndMap lets a sink release
// what it held for a rank's map (MapEnder).
package reduce
