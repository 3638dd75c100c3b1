package reduce

import (
	"cmp"
	"fmt"
	"slices"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas/coll"
)

// tag orders the values of a key when all are kept: (map call, input
// index, emit sequence) for element-by-element maps, (map call, rank, emit
// sequence) for array-based ones. The sequence never restarts, so values
// of one element keep their emit order.
type tag struct{ call, idx, seq int64 }

func cmpTag(a, b tag) int {
	if c := cmp.Compare(a.call, b.call); c != 0 {
		return c
	}
	if c := cmp.Compare(a.idx, b.idx); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// Store holds one rank's intermediate pairs in its private memory. It is
// filled by Emit (from the map functions, through package mr) and drained by
// the reduce stage. A hash container suits any key space; an array
// container suits small dense integer keys (histograms). With a combiner,
// values are folded as they are emitted; with KeepAll every value is kept
// with its order tag. A Store belongs to one rank's goroutine.
type Store[K comparable, V any] struct {
	comb Combiner[V]
	cmp  func(a, b K) int
	kc   Codec[K]
	vc   Codec[V]

	h  map[K]int32 // hash, combined: index into hv
	hv []V
	ha map[K][]val[V] // hash, all values

	toIdx   func(K) int // array: slot of a key, or -1
	fromIdx func(int) K
	arr     []V
	has     []bool
	arrAll  [][]val[V]
	size    int

	cur     tag
	emitted int64
	err     error

	// Fast path of an array container summing int64 values: dense aliases
	// arr, and keys are read as integers of ksize bytes.
	dense  []int64
	ksize  uintptr
	signed bool
}

type val[V any] struct {
	v V
	t tag
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
	return NewHashStoreFunc(cmp.Compare[K], comb, opts...)
}

// NewHashStoreFunc returns a hash container for keys ordered by compare.
func NewHashStoreFunc[K comparable, V any](compare func(a, b K) int, comb Combiner[V], opts ...Option[K, V]) (*Store[K, V], error) {
	s := &Store[K, V]{comb: comb, cmp: compare}
	if comb.KeepsAll() {
		s.ha = map[K][]val[V]{}
	} else {
		s.h = map[K]int32{}
	}
	return s.finish(opts)
}

// NewArrayStore returns an array container for the integer keys
// [0, size): the dense key space of a histogram. Emitting a key outside it
// is an error reported by Err.
func NewArrayStore[K coll.Integer, V any](size int, comb Combiner[V], opts ...Option[K, V]) (*Store[K, V], error) {
	if size < 0 {
		panic(fmt.Sprintf("reduce: NewArrayStore(%d)", size))
	}
	s := &Store[K, V]{comb: comb, cmp: cmp.Compare[K], size: size}
	s.toIdx = func(k K) int {
		if k < 0 || uint64(k) >= uint64(size) {
			return -1
		}
		return int(k)
	}
	s.fromIdx = func(i int) K { return K(i) }
	if comb.KeepsAll() {
		s.arrAll = make([][]val[V], size)
	} else {
		s.arr = make([]V, size)
		s.has = make([]bool, size)
		var z V
		if _, ok := any(z).(int64); ok && comb.sum && size > 0 {
			s.dense = unsafe.Slice((*int64)(unsafe.Pointer(&s.arr[0])), size)
			var k K
			s.ksize = unsafe.Sizeof(k)
			s.signed = K(0)-1 < 0
		}
	}
	return s.finish(opts)
}

// denseIndex reads key k as an integer (array containers only).
func (s *Store[K, V]) denseIndex(k K) int64 {
	p := unsafe.Pointer(&k)
	switch s.ksize {
	case 1:
		if s.signed {
			return int64(*(*int8)(p))
		}
		return int64(*(*uint8)(p))
	case 2:
		if s.signed {
			return int64(*(*int16)(p))
		}
		return int64(*(*uint16)(p))
	case 4:
		if s.signed {
			return int64(*(*int32)(p))
		}
		return int64(*(*uint32)(p))
	}
	return *(*int64)(p) // int, uint, uintptr and 64-bit kinds; huge uint64 keys go negative and fail the range check
}

func (s *Store[K, V]) finish(opts []Option[K, V]) (*Store[K, V], error) {
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

// Combiner returns the store's combiner.
func (s *Store[K, V]) Combiner() Combiner[V] { return s.comb }

// BeginMap starts a new map call: values it emits order after those of
// earlier calls. Package mr calls it once per ApplyMap.
func (s *Store[K, V]) BeginMap() { s.cur.call++ }

// SetTag sets the input index (or, for array-based maps, the rank) of the
// values emitted next. Package mr calls it.
func (s *Store[K, V]) SetTag(idx int64) { s.cur.idx = idx }

// Emit adds the pair (k, v). It is the hot path of every map function.
func (s *Store[K, V]) Emit(k K, v V) {
	s.emitted++
	if s.dense != nil {
		if i := s.denseIndex(k); uint64(i) < uint64(len(s.dense)) {
			s.dense[i] += *(*int64)(unsafe.Pointer(&v))
			s.has[i] = true
			return
		}
	}
	if s.toIdx != nil {
		i := s.toIdx(k)
		if i < 0 {
			if s.err == nil {
				s.err = fmt.Errorf("reduce: key %v outside the array container's keys [0,%d)", k, s.size)
			}
			return
		}
		if s.arr != nil {
			if s.has[i] {
				s.arr[i] = s.comb.f(s.arr[i], v)
			} else {
				s.arr[i], s.has[i] = v, true
			}
			return
		}
		s.arrAll[i] = append(s.arrAll[i], val[V]{v, s.cur})
		s.cur.seq++
		return
	}
	if s.h != nil {
		// One hash lookup for a key already present.
		if i, ok := s.h[k]; ok {
			s.hv[i] = s.comb.f(s.hv[i], v)
		} else {
			if len(s.hv) >= 1<<31-1 {
				panic("reduce: more than 2^31-1 distinct keys in one store")
			}
			s.h[k] = int32(len(s.hv))
			s.hv = append(s.hv, v)
		}
		return
	}
	s.ha[k] = append(s.ha[k], val[V]{v, s.cur})
	s.cur.seq++
}

// Err returns the first error Emit recorded (a key outside an array
// container), or nil.
func (s *Store[K, V]) Err() error { return s.err }

// Emitted returns the number of pairs emitted.
func (s *Store[K, V]) Emitted() int64 { return s.emitted }

// Keys returns the number of distinct keys held.
func (s *Store[K, V]) Keys() int {
	switch {
	case s.h != nil:
		return len(s.h)
	case s.ha != nil:
		return len(s.ha)
	case s.arr != nil:
		n := 0
		for _, h := range s.has {
			if h {
				n++
			}
		}
		return n
	}
	n := 0
	for _, vs := range s.arrAll {
		if len(vs) > 0 {
			n++
		}
	}
	return n
}

// Reset empties the store, keeping its kind, combiner and codecs.
func (s *Store[K, V]) Reset() {
	clear(s.h)
	s.hv = s.hv[:0]
	clear(s.ha)
	clear(s.arr)
	clear(s.has)
	for i := range s.arrAll {
		s.arrAll[i] = nil
	}
	s.cur, s.emitted, s.err = tag{}, 0, nil
}

// entries is a sorted run of pairs: keys ascending; one value per key when
// combined, else values with tags grouped by key (off).
type entries[K, V any] struct {
	keys []K
	vals []V
	tags []tag // all-values mode, parallel to vals
	off  []int // all-values mode: vals[off[i]:off[i+1]] belong to keys[i]
}

// sorted drains the store into a sorted run.
func (s *Store[K, V]) sorted() entries[K, V] {
	var e entries[K, V]
	all := s.comb.KeepsAll()
	if all {
		e.off = []int{0}
	}
	add := func(k K, vs []val[V]) {
		e.keys = append(e.keys, k)
		slices.SortStableFunc(vs, func(a, b val[V]) int { return cmpTag(a.t, b.t) })
		for _, x := range vs {
			e.vals = append(e.vals, x.v)
			e.tags = append(e.tags, x.t)
		}
		e.off = append(e.off, len(e.vals))
	}
	switch {
	case s.arr != nil:
		for i, h := range s.has {
			if h {
				e.keys = append(e.keys, s.fromIdx(i))
				e.vals = append(e.vals, s.arr[i])
			}
		}
	case s.arrAll != nil:
		for i, vs := range s.arrAll {
			if len(vs) > 0 {
				add(s.fromIdx(i), vs)
			}
		}
	case s.h != nil:
		e.keys = make([]K, 0, len(s.h))
		for k := range s.h {
			e.keys = append(e.keys, k)
		}
		slices.SortFunc(e.keys, s.cmp)
		e.vals = make([]V, len(e.keys))
		for i, k := range e.keys {
			e.vals[i] = s.hv[s.h[k]]
		}
	default:
		keys := make([]K, 0, len(s.ha))
		for k := range s.ha {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, s.cmp)
		for _, k := range keys {
			add(k, s.ha[k])
		}
	}
	return e
}

// pairs turns a run into what the reduce function gets.
func (e entries[K, V]) pairs() *Pairs[K, V] {
	return &Pairs[K, V]{Keys: e.keys, Vals: e.vals, Off: e.off}
}
