package reduce

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"unsafe"

	"github.com/pgasmr/pgasmr/internal/elem"
)

// Integer is the set of integer key types an array container accepts.
type Integer = elem.Integer

// Number is the set of value types Sum adds.
type Number = elem.Number

// Store holds one rank's intermediate pairs in its private memory. It is
// filled by Emit (from the map functions, through package mr) and drained
// by the reduce stage. A hash container suits any key space; an array
// container suits small dense integer keys (histograms). With a combiner,
// values are folded as they are emitted; with KeepAll every value is kept
// with its order tag. A Store belongs to one rank's goroutine.
//
// The kind of container is chosen once, when the store is made: each is
// its own type behind the container interface, and Emitter hands out the
// chosen one's emit method, so the hot path tests nothing per pair.
//
// Under a memory budget (SetSpill) a store writes sorted runs of its
// pairs to temporary files and merges them back when drained.
type Store[K comparable, V any] struct {
	comb Combiner[V]
	cmp  func(a, b K) int
	kc   Codec[K]
	vc   Codec[V]
	enc  func([]byte, K) []byte // keys ordered by this encoding (NewEncodedHashStore), or nil
	strs bool                   // keys are strings in bytewise order (NewHashStore)
	size int                    // NewArrayStore's keys, or -1

	c     container[K, V]
	emit  func(K, V)  // raw, or raw charging the spill budget (SetSpill)
	raw   func(K, V)  // c's emit, bound on its concrete type once
	sp    spilling    // SetSpill
	runs  []Run[K, V] // combined runs added whole (AddRun)
	loose []Run[K, V] // combined pairs added whole in no order (AddPairs)
	state
	sink     Sink[K, V]
	budget   int // pairs held loose before the sink takes them
	held     int // pairs in loose
	sinkFull bool
	sinkErr  error // the sink's first error: no pair goes to it after one
}

// A Sink takes a store's combined pairs away while the map runs, so that a
// rank holds at most a budget of them: the reduce stage's node-level
// table (package reduce/shuffle, set up by mr.ApplyMap when it knows the
// reduce that follows). A store hands its loose pairs (AddPairs) to its
// sink when they pass the budget.
type Sink[K comparable, V any] interface {
	// Take folds e's pairs (combined, in no order) away and returns those
	// it could not take, which stay in the store; after it has returned
	// some, the store stops handing pairs to it until Drain.
	Take(e Run[K, V]) (left Run[K, V], err error)
}

// SetSink makes sink take the store's loose pairs whenever half a budget
// of them are held (a map's table hands over at least half its keys at a
// time: CountTable.TakeCold); a nil sink removes it. Reset keeps the sink.
func (s *Store[K, V]) SetSink(sink Sink[K, V], budget int) {
	s.sink, s.budget, s.sinkFull, s.sinkErr = sink, max(budget, 1), false, nil
}

// Sink returns the store's sink, or nil.
func (s *Store[K, V]) Sink() Sink[K, V] { return s.sink }

// SinkBudget is the number of distinct keys a map's own combining table
// (a CountTable) should hand over at, with AddPairs, and start again: the
// store's budget while a sink takes its pairs; for a store that spills
// (SetSpill), at most the keys that take its budget of bytes at
// tableKeyBytes a key (the table's slots at half load and the spare ones
// TakeCold keeps, its arena, and the strings it hands over); else 0 (keep
// every key to the end). It bounds the map's memory by the budget, not by
// the keys of the rank's input.
func (s *Store[K, V]) SinkBudget() int {
	spill := 0
	if s.sp.sp != nil && !s.sp.failed {
		spill = int(max(s.sp.budget/tableKeyBytes, minTableKeys))
	}
	if s.sink != nil && !s.sinkFull && s.sinkErr == nil {
		if spill > 0 {
			return min(s.budget, spill)
		}
		return s.budget
	}
	return spill
}

// What a map's table holds under a spilling store (SinkBudget): about
// tableKeyBytes a key, and never fewer than minTableKeys keys, so that a
// tiny budget still hands over in batches rather than key by key.
const (
	tableKeyBytes = 128
	minTableKeys  = 64
)

// state is what every container shares with its store: the tag of the
// next kept value, the pairs emitted, and the first error.
type state struct {
	cur     Tag
	emitted int64
	err     error
}

// container is one kind of pair container.
type container[K comparable, V any] interface {
	emit(k K, v V)
	keys() int         // distinct keys held
	sorted() Run[K, V] // the pairs as a sorted run (Drain resets the container after)
	// pairs returns the pairs in any order (DrainCombined): a hash
	// container skips the sort.
	pairs() Run[K, V]
	reset()
	// charged returns an emit that also calls charge for each pair that
	// grows the container: a new key (fresh), or, keeping all values,
	// any value it keeps.
	charged(charge func(k K, v V, fresh bool)) func(K, V)
}

// Option configures a Store.
type Option[K comparable, V any] func(*Store[K, V])

// WithKeyCodec sets the codec keys move with (default CodecFor[K]).
func WithKeyCodec[K comparable, V any](c Codec[K]) Option[K, V] {
	return func(s *Store[K, V]) { s.kc = c }
}

// WithValueCodec sets the codec values move with (default CodecFor[V]).
func WithValueCodec[K comparable, V any](c Codec[V]) Option[K, V] {
	return func(s *Store[K, V]) { s.vc = c }
}

// NewHashStore returns a hash container for ordered keys.
func NewHashStore[K cmp.Ordered, V any](comb Combiner[V], opts ...Option[K, V]) (*Store[K, V], error) {
	s, err := NewHashStoreFunc(cmp.Compare[K], comb, opts...)
	if err == nil && isString[K]() {
		// Strings in their natural order sort by prefix (stringOrder).
		s.strs = true
		switch c := s.c.(type) {
		case *hashCombined[K, V]:
			c.strs = true
		case *hashAll[K, V]:
			c.strs = true
		}
	}
	return s, err
}

// NewHashStoreFunc returns a hash container for keys ordered by compare.
func NewHashStoreFunc[K comparable, V any](compare func(a, b K) int, comb Combiner[V], opts ...Option[K, V]) (*Store[K, V], error) {
	s := &Store[K, V]{comb: comb, cmp: compare, size: -1}
	if comb.KeepsAll() {
		c := &hashAll[K, V]{st: &s.state, ha: map[K][]val[V]{}, cmp: compare}
		s.c, s.emit = c, c.emit
	} else {
		c := &hashCombined[K, V]{st: &s.state, f: comb.f, h: map[K]int32{}, cmp: compare}
		s.c, s.emit = c, c.emit
	}
	return s.finish(opts)
}

// NewEncodedHashStore returns a hash container for any comparable keys
// (structs of a bigram, say), without a compare function: keys are
// ordered by the bytes of their encoding with the store's key codec. That
// order is deterministic, the same on every rank and run, but it is not
// the keys' natural one (msgpack sorts by encoded bytes: a longer string
// field may come first); for a natural order use NewHashStoreFunc.
func NewEncodedHashStore[K comparable, V any](comb Combiner[V], opts ...Option[K, V]) (*Store[K, V], error) {
	var s *Store[K, V]
	var ea, eb []byte
	byBytes := func(a, b K) int {
		ea, eb = s.kc.Append(ea[:0], a), s.kc.Append(eb[:0], b)
		return bytes.Compare(ea, eb)
	}
	s, err := NewHashStoreFunc(byBytes, comb, opts...)
	if err != nil {
		return nil, err
	}
	// Sorting encodes each key once (sortKeys), not twice a comparison:
	// a store of 785,541 bigrams sorted in 18 s the other way.
	s.enc = s.kc.Append
	switch c := s.c.(type) {
	case *hashCombined[K, V]:
		c.enc = s.enc
	case *hashAll[K, V]:
		c.enc = s.enc
	}
	return s, nil
}

// encoded holds keys' encodings one after another.
type encoded struct {
	arena []byte
	ends  []int
}

func encodeKeys[K any](keys []K, enc func([]byte, K) []byte) encoded {
	e := encoded{ends: make([]int, len(keys))}
	for i, k := range keys {
		e.arena = enc(e.arena, k)
		e.ends[i] = len(e.arena)
	}
	return e
}

func (e *encoded) key(i int32) []byte {
	start := 0
	if i > 0 {
		start = e.ends[i-1]
	}
	return e.arena[start:e.ends[i]]
}

// order returns the indices of the keys e holds in ascending order of
// their encodings.
func (e *encoded) order() []int32 {
	idx := make([]int32, len(e.ends))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return bytes.Compare(e.key(a), e.key(b)) })
	return idx
}

// sortKeys sorts keys with cmp, or, if enc is not nil, by their
// encodings, each key encoded once, or, if strs (keys of a string type
// ordered bytewise), by their prefixes (stringOrder).
func sortKeys[K any](keys []K, cmp func(a, b K) int, enc func([]byte, K) []byte, strs bool) {
	if strs {
		sortStrings(asStrings(keys))
		return
	}
	if enc == nil || len(keys) < 2 {
		slices.SortFunc(keys, cmp)
		return
	}
	e := encodeKeys(keys, enc)
	sorted := make([]K, len(keys))
	for i, j := range e.order() {
		sorted[i] = keys[j]
	}
	copy(keys, sorted)
}

// NewArrayStore returns an array container for the integer keys
// [0, size): the dense key space of a histogram. Emitting a key outside it
// is an error reported by Err.
func NewArrayStore[K Integer, V any](size int, comb Combiner[V], opts ...Option[K, V]) (*Store[K, V], error) {
	if size < 0 {
		panic(fmt.Sprintf("reduce: NewArrayStore(%d)", size))
	}
	s := &Store[K, V]{comb: comb, cmp: cmp.Compare[K], size: size}
	a := arrayBase[K]{st: &s.state, has: make([]bool, size)}
	var z V
	_, isInt64 := any(z).(int64)
	switch {
	case comb.KeepsAll():
		c := &arrayAll[K, V]{arrayBase: a, vals: make([][]val[V], size)}
		s.c, s.emit = c, c.emit
	case isInt64 && comb.sum && size > 0:
		arr := make([]V, size)
		c := &arraySum[K, V]{arrayCombined: arrayCombined[K, V]{arrayBase: a, f: comb.f, vals: arr},
			dense: unsafe.Slice((*int64)(unsafe.Pointer(&arr[0])), size)}
		s.c, s.emit = c, c.emit
	default:
		c := &arrayCombined[K, V]{arrayBase: a, f: comb.f, vals: make([]V, size)}
		s.c, s.emit = c, c.emit
	}
	return s.finish(opts)
}

func (s *Store[K, V]) finish(opts []Option[K, V]) (*Store[K, V], error) {
	s.raw = s.emit
	for _, o := range opts {
		o(s)
	}
	var err error
	if !s.kc.valid() {
		if s.kc, err = CodecFor[K](); err != nil {
			return nil, err
		}
	}
	if !s.vc.valid() {
		if s.vc, err = CodecFor[V](); err != nil {
			return nil, err
		}
	}
	s.kc, s.vc = s.kc.instance(), s.vc.instance()
	return s, nil
}

// ArrayKeys returns the number of keys of an array store (NewArrayStore's
// size, keys 0 to size-1), or -1 for a hash store, whose keys are any.
func (s *Store[K, V]) ArrayKeys() int { return s.size }

// Combiner returns the store's combiner.
func (s *Store[K, V]) Combiner() Combiner[V] { return s.comb }

// KeyCodec returns the codec keys move with (the store's own instance).
func (s *Store[K, V]) KeyCodec() Codec[K] { return s.kc }

// ValueCodec returns the codec values move with (the store's own
// instance).
func (s *Store[K, V]) ValueCodec() Codec[V] { return s.vc }

// Compare orders keys as the store sorts them.
func (s *Store[K, V]) Compare(a, b K) int { return s.cmp(a, b) }

// BeginMap starts a new map call: values it emits order after those of
// earlier calls. Package mr calls it once per ApplyMap.
func (s *Store[K, V]) BeginMap() { s.cur.Call++ }

// EndMap ends a map call: a sink that holds something while a map runs
// lets it go (MapEnder). Package mr calls it when a rank's map ends.
func (s *Store[K, V]) EndMap() {
	if e, ok := s.sink.(MapEnder); ok {
		e.EndMap()
	}
}

// A MapEnder is a Sink that holds something while a rank maps (a stripe
// of its node's table, package reduce/shuffle) and lets it go when the
// map ends (Store.EndMap).
type MapEnder interface {
	EndMap()
}

// SetTag sets the input index (or, for array-based maps, the rank) of the
// values emitted next. Package mr calls it.
func (s *Store[K, V]) SetTag(idx int64) { s.cur.Idx = idx }

// Emit adds the pair (k, v).
func (s *Store[K, V]) Emit(k K, v V) { s.emit(k, v) }

// Emitter returns the emit function of the store's container: Emit
// without the store's indirection, the function package mr hands to map
// functions. It stays valid across Reset; SetSpill replaces it.
func (s *Store[K, V]) Emitter() func(K, V) { return s.emit }

// Err returns the first error Emit recorded (a key outside an array
// container, a spill that failed), or nil. After Drain or DrainCombined of
// a store that spilled, it returns the error reading a spilled run back
// (what Drain returned is then short of that run's pairs), or nil.
func (s *Store[K, V]) Err() error { return s.err }

// Emitted returns the number of pairs emitted since the store was made or
// reset.
func (s *Store[K, V]) Emitted() int64 { return s.emitted }

// Keys returns the number of distinct keys held; a key of a run added
// with AddRun counts once per run it is in, and a spilled key once per
// spilled run.
func (s *Store[K, V]) Keys() int {
	n := s.c.keys()
	for _, e := range s.runs {
		n += len(e.Keys)
	}
	for _, fs := range s.sp.files {
		for _, f := range fs {
			n += int(f.keys)
		}
	}
	return n
}

// AddRun adds a combined run whole: keys ascending in the store's order,
// each once, with one value (a map's own combining table drained, such as
// CountTable.Run), as if each pair were emitted, without the store's
// container. At Drain the values of a key combine in this order: those
// emitted one by one first, then each run's in the order added. A store
// that keeps all values takes runs of kept values (each key's values in
// tag order, with their tags and offsets, as Drain gives them), whose
// values Drain orders by tag with the others. The run's slices belong to
// the store. If the run takes the store past its spill budget (SetSpill),
// the store spills, and returns the spill's error.
func (s *Store[K, V]) AddRun(e Run[K, V]) error {
	if s.comb.KeepsAll() {
		if len(e.Tags) != len(e.Vals) || len(e.Off) != len(e.Keys)+1 || e.Off[0] != 0 || e.Off[len(e.Keys)] != len(e.Vals) {
			return fmt.Errorf("reduce: AddRun of a run with %d keys, %d values, %d tags and %d offsets to a store that keeps all values: want a tag a value and an offset a key and one more", len(e.Keys), len(e.Vals), len(e.Tags), len(e.Off))
		}
		if len(e.Keys) == 0 {
			return nil
		}
	} else if e.Off != nil || e.Tags != nil || len(e.Vals) != len(e.Keys) {
		return fmt.Errorf("reduce: AddRun of a run with %d keys, %d values, offsets or tags: want one value a key", len(e.Keys), len(e.Vals))
	}
	for i := 1; i < len(e.Keys); i++ {
		if s.cmp(e.Keys[i-1], e.Keys[i]) >= 0 {
			return fmt.Errorf("reduce: AddRun: key %d (%v) does not follow key %d (%v) in ascending order", i, e.Keys[i], i-1, e.Keys[i-1])
		}
	}
	s.emitted += int64(len(e.Keys))
	if len(e.Keys) > 0 {
		s.runs = append(s.runs, e)
		if s.sp.sp != nil {
			s.sp.mem[partRuns] += s.runBytes(e)
		}
	}
	if s.overBudget() {
		return s.spill()
	}
	return nil
}

// AddPairs adds combined pairs whole, in any order, each key at most
// once (a map's own combining table, such as CountTable.Pairs), as if each
// pair were emitted. Drain sorts them, and combines their values after
// those of the emitted pairs and of the runs; DrainCombined, which the reduce
// stage uses when the ranks of a node combine their pairs in a node-level
// table, does not. The slices belong to the store. A store that keeps all
// values takes no pairs this way. If the pairs take the store past its
// spill budget (SetSpill), the store spills, and returns the spill's
// error.
func (s *Store[K, V]) AddPairs(keys []K, vals []V) error {
	if s.comb.KeepsAll() {
		return fmt.Errorf("reduce: AddPairs on a store that keeps all values")
	}
	if len(vals) != len(keys) {
		return fmt.Errorf("reduce: AddPairs of %d keys and %d values", len(keys), len(vals))
	}
	s.emitted += int64(len(keys))
	if len(keys) > 0 {
		e := Run[K, V]{Keys: keys, Vals: vals}
		s.loose = append(s.loose, e)
		s.held += len(keys)
		if s.sp.sp != nil {
			s.sp.mem[partLoose] += s.runBytes(e)
		}
	}
	if s.sinkErr != nil {
		return s.sinkErr // the job is failing: stop at once, wait on nothing
	}
	if s.sink != nil && !s.sinkFull && 2*s.held >= s.budget {
		if err := s.toSink(); err != nil {
			return err
		}
	}
	if s.overBudget() {
		return s.spill()
	}
	return nil
}

// toSink hands the loose pairs to the sink and keeps what it leaves.
func (s *Store[K, V]) toSink() error {
	e := concat(s.loose)
	s.loose, s.held, s.sp.mem[partLoose] = nil, 0, 0
	left, err := s.sink.Take(e)
	if err != nil {
		s.sinkErr = err
		return err
	}
	if len(left.Keys) > 0 {
		s.loose, s.held, s.sinkFull = []Run[K, V]{left}, len(left.Keys), true
		if s.sp.sp != nil {
			s.sp.mem[partLoose] = s.runBytes(left)
		}
	}
	return nil
}

// Reset empties the store, keeping its kind, combiner, codecs, sink and
// spill settings; it removes the runs it spilled.
func (s *Store[K, V]) Reset() {
	s.c.reset()
	s.runs = nil
	s.loose, s.held, s.sinkFull = nil, 0, false
	s.state = state{}
	s.removeSpilled()
	s.sp.failed = false
}

// DrainCombined returns the store's pairs, each combined within the part
// of the store that holds it (the container, each run, each AddPairs, each
// spilled run), in no particular order, and empties the store: a key may
// appear once per part. A store that keeps all values drains sorted
// (Drain). A spilled run that cannot be read back is recorded in Err.
func (s *Store[K, V]) DrainCombined() Run[K, V] {
	if s.comb.KeepsAll() {
		return s.Drain()
	}
	if s.spilled() {
		return s.drainCombinedSpilled()
	}
	e := concat(append(append([]Run[K, V]{s.c.pairs()}, s.runs...), s.loose...))
	s.Reset()
	return e
}

// concat appends the pairs of runs (combined, without offsets or tags)
// into the first that has any, which belongs to the store.
func concat[K comparable, V any](runs []Run[K, V]) Run[K, V] {
	var e Run[K, V]
	for _, r := range runs {
		if len(e.Keys) == 0 {
			e = r
			continue
		}
		e.Keys = append(e.Keys, r.Keys...)
		e.Vals = append(e.Vals, r.Vals...)
	}
	return e
}

// SortCombined sorts pairs in no order, whose values are combined but
// whose keys may repeat (DrainCombined's), into a run, combining the
// values of equal keys with the store's combiner in no particular order:
// for commutative combiners only.
func (s *Store[K, V]) SortCombined(e Run[K, V]) Run[K, V] {
	var idx []int32
	var pre []uint64 // string keys: their prefixes in idx's order
	same := func(prev, i int32) bool { return s.cmp(e.Keys[prev], e.Keys[i]) == 0 }
	if s.enc != nil {
		enc := encodeKeys(e.Keys, s.enc)
		idx = enc.order()
		same = func(prev, i int32) bool { return bytes.Equal(enc.key(prev), enc.key(i)) }
	} else if s.strs {
		idx, pre = stringOrderPrefixes(asStrings(e.Keys))
	} else {
		idx = make([]int32, len(e.Keys))
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortFunc(idx, func(a, b int32) int { return s.cmp(e.Keys[a], e.Keys[b]) })
	}
	out := Run[K, V]{Keys: make([]K, 0, len(idx)), Vals: make([]V, 0, len(idx))}
	prev := int32(-1)
	var prevP uint64 // prev's prefix, for string keys
	for j, i := range idx {
		// Keys whose prefixes differ differ: most strings are never read.
		if n := len(out.Keys); n > 0 && (pre == nil || pre[j] == prevP) && same(prev, i) {
			out.Vals[n-1] = s.comb.Combine(out.Vals[n-1], e.Vals[i])
			continue
		}
		out.Keys = append(out.Keys, e.Keys[i])
		out.Vals = append(out.Vals, e.Vals[i])
		prev = i
		if pre != nil {
			prevP = pre[j]
		}
	}
	return out
}

// Drain returns the store's pairs as a sorted run and empties the store.
// A store that spilled (SetSpill) merges its spilled runs with the pairs
// in memory (DrainStream), removes their files, and returns the same run
// as if it had not spilled, for every combiner exactly associative (not a
// floating-point Sum, whose additions regroup). A spilled run that cannot
// be read back is recorded in Err.
func (s *Store[K, V]) Drain() Run[K, V] {
	if s.spilled() {
		return s.drainSpilled()
	}
	for _, l := range s.loose {
		s.runs = append(s.runs, s.SortCombined(l))
	}
	e := s.c.sorted()
	if len(s.runs) > 0 {
		if len(e.Keys) == 0 && len(s.runs) == 1 {
			e = s.runs[0]
		} else {
			e = s.Merge(append([]Run[K, V]{e}, s.runs...))
		}
	}
	s.Reset()
	return e
}

// hashCombined is a hash container folding values with a combiner: one
// map lookup per pair, values in a slice the map indexes.
type hashCombined[K comparable, V any] struct {
	st   *state
	f    func(acc, v V) V
	h    map[K]int32
	hv   []V
	cmp  func(a, b K) int
	enc  func([]byte, K) []byte
	strs bool // keys of a string type in bytewise order: sortKeys
}

func (c *hashCombined[K, V]) emit(k K, v V) {
	c.st.emitted++
	if i, ok := c.h[k]; ok {
		c.hv[i] = c.f(c.hv[i], v)
		return
	}
	if len(c.hv) >= 1<<31-1 {
		panic("reduce: more than 2^31-1 distinct keys in one store")
	}
	c.h[k] = int32(len(c.hv))
	c.hv = append(c.hv, v)
}

func (c *hashCombined[K, V]) keys() int { return len(c.h) }

func (c *hashCombined[K, V]) charged(charge func(K, V, bool)) func(K, V) {
	return func(k K, v V) {
		n := len(c.h)
		c.emit(k, v)
		if len(c.h) != n {
			charge(k, v, true)
		}
	}
}

// reset drops the map and values rather than clearing them: a drained
// store's memory goes back to the collector while the pairs move on.
func (c *hashCombined[K, V]) reset() {
	c.h = map[K]int32{}
	c.hv = nil
}

func (c *hashCombined[K, V]) pairs() Run[K, V] {
	e := Run[K, V]{Keys: make([]K, 0, len(c.h)), Vals: make([]V, 0, len(c.h))}
	for k, i := range c.h {
		e.Keys = append(e.Keys, k)
		e.Vals = append(e.Vals, c.hv[i])
	}
	return e
}

func (c *hashCombined[K, V]) sorted() Run[K, V] {
	e := Run[K, V]{Keys: make([]K, 0, len(c.h))}
	for k := range c.h {
		e.Keys = append(e.Keys, k)
	}
	sortKeys(e.Keys, c.cmp, c.enc, c.strs)
	e.Vals = make([]V, len(e.Keys))
	for i, k := range e.Keys {
		e.Vals[i] = c.hv[c.h[k]]
	}
	return e
}

// hashAll is a hash container keeping every value with its tag.
type hashAll[K comparable, V any] struct {
	st   *state
	ha   map[K][]val[V]
	cmp  func(a, b K) int
	enc  func([]byte, K) []byte
	strs bool // keys of a string type in bytewise order: sortKeys
}

func (c *hashAll[K, V]) emit(k K, v V) {
	c.st.emitted++
	c.ha[k] = append(c.ha[k], val[V]{v, c.st.cur})
	c.st.cur.Seq++
}

func (c *hashAll[K, V]) keys() int { return len(c.ha) }

func (c *hashAll[K, V]) charged(charge func(K, V, bool)) func(K, V) {
	return func(k K, v V) {
		n := len(c.ha)
		c.emit(k, v)
		charge(k, v, len(c.ha) != n)
	}
}

func (c *hashAll[K, V]) reset() { c.ha = map[K][]val[V]{} }

func (c *hashAll[K, V]) pairs() Run[K, V] { return c.sorted() }

func (c *hashAll[K, V]) sorted() Run[K, V] {
	keys := make([]K, 0, len(c.ha))
	for k := range c.ha {
		keys = append(keys, k)
	}
	sortKeys(keys, c.cmp, c.enc, c.strs)
	e := Run[K, V]{Off: []int{0}}
	for _, k := range keys {
		e.Keys = append(e.Keys, k)
		e.appendGroup(c.ha[k])
	}
	return e
}

// arrayBase is what the array containers share: the slots that hold a
// value, and the range check.
type arrayBase[K Integer] struct {
	st  *state
	has []bool
}

// slot returns k's slot, or -1 (recording the error) if k is outside
// [0, len(has)).
func (a *arrayBase[K]) slot(k K) int {
	// Negative keys wrap to huge values, as do unsigned ones past MaxInt64.
	if i := uint64(int64(k)); i < uint64(len(a.has)) {
		return int(i)
	}
	if a.st.err == nil {
		a.st.err = fmt.Errorf("reduce: key %v outside the array container's keys [0,%d)", k, len(a.has))
	}
	return -1
}

// held reports whether k is in range and whether its slot holds a value.
func (a *arrayBase[K]) held(k K) (in, has bool) {
	if i := uint64(int64(k)); i < uint64(len(a.has)) {
		return true, a.has[i]
	}
	return false, false
}

// chargedArray is charged for an array container whose emit is emit.
func chargedArray[K Integer, V any](a *arrayBase[K], emit func(K, V), all bool, charge func(K, V, bool)) func(K, V) {
	return func(k K, v V) {
		in, has := a.held(k)
		emit(k, v)
		if in && (all || !has) {
			charge(k, v, !has)
		}
	}
}

func (a *arrayBase[K]) keys() int {
	n := 0
	for _, h := range a.has {
		if h {
			n++
		}
	}
	return n
}

// arrayCombined is an array container folding values with a combiner.
type arrayCombined[K Integer, V any] struct {
	arrayBase[K]
	f    func(acc, v V) V
	vals []V
}

func (c *arrayCombined[K, V]) emit(k K, v V) {
	c.st.emitted++
	i := c.slot(k)
	if i < 0 {
		return
	}
	if c.has[i] {
		c.vals[i] = c.f(c.vals[i], v)
	} else {
		c.vals[i], c.has[i] = v, true
	}
}

func (c *arrayCombined[K, V]) charged(charge func(K, V, bool)) func(K, V) {
	return chargedArray(&c.arrayBase, c.emit, false, charge)
}

func (c *arrayCombined[K, V]) reset() {
	clear(c.vals)
	clear(c.has)
}

func (c *arrayCombined[K, V]) pairs() Run[K, V] { return c.sorted() }

func (c *arrayCombined[K, V]) sorted() Run[K, V] {
	var e Run[K, V]
	for i, h := range c.has {
		if h {
			e.Keys = append(e.Keys, K(i))
			e.Vals = append(e.Vals, c.vals[i])
		}
	}
	return e
}

// arraySum is the array container of a histogram: int64 values summed
// in place (the built-in Sum only, whose addition it inlines).
type arraySum[K Integer, V any] struct {
	arrayCombined[K, V]
	dense []int64 // aliases vals
}

func (c *arraySum[K, V]) emit(k K, v V) {
	c.st.emitted++
	if i := uint64(int64(k)); i < uint64(len(c.dense)) {
		c.dense[i] += *(*int64)(unsafe.Pointer(&v))
		c.has[i] = true
		return
	}
	c.slot(k) // records the error
}

func (c *arraySum[K, V]) charged(charge func(K, V, bool)) func(K, V) {
	return chargedArray(&c.arrayBase, c.emit, false, charge)
}

// arrayAll is an array container keeping every value with its tag.
type arrayAll[K Integer, V any] struct {
	arrayBase[K]
	vals [][]val[V]
}

func (c *arrayAll[K, V]) emit(k K, v V) {
	c.st.emitted++
	i := c.slot(k)
	if i < 0 {
		return
	}
	c.vals[i] = append(c.vals[i], val[V]{v, c.st.cur})
	c.has[i] = true
	c.st.cur.Seq++
}

func (c *arrayAll[K, V]) charged(charge func(K, V, bool)) func(K, V) {
	return chargedArray(&c.arrayBase, c.emit, true, charge)
}

func (c *arrayAll[K, V]) reset() {
	clear(c.vals)
	clear(c.has)
}

func (c *arrayAll[K, V]) pairs() Run[K, V] { return c.sorted() }

func (c *arrayAll[K, V]) sorted() Run[K, V] {
	e := Run[K, V]{Off: []int{0}}
	for i, vs := range c.vals {
		if len(vs) > 0 {
			e.Keys = append(e.Keys, K(i))
			e.appendGroup(vs)
		}
	}
	return e
}
