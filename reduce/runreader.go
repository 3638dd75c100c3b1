package reduce

import (
	"errors"
	"iter"
	"slices"
)

// RunReader reads a sorted run one key at a time, keys ascending: a Run
// in memory (ReadRun), a run a store spilled to a file, or a k-way merge
// of readers (Store.MergeReaders). It is the streaming form of Run, for
// consumers that need not hold a rank's pairs at once (Store.DrainStream).
//
//	r, err := st.DrainStream()
//	...
//	defer r.Close()
//	for r.Next() {
//		use(r.Key(), r.Values())
//	}
//	if err := r.Err(); err != nil { ... }
//
// A reader belongs to one goroutine.
type RunReader[K, V any] interface {
	// Next advances to the next key and reports whether there is one; it
	// returns false at the end of the run or on an error (Err).
	Next() bool
	// Key returns the current key.
	Key() K
	// Values returns the current key's values: one if the run is
	// combined, else every value kept, in tag order. The slice is valid
	// until the next call of Next.
	Values() []V
	// Tags returns the tags of Values' values if the run keeps all
	// values, else nil; valid until the next call of Next.
	Tags() []Tag
	// Err returns the error that stopped Next, or nil at the end of the
	// run. An error of a spilled run names its file and record.
	Err() error
	// Close releases the reader: its files are closed and removed. It
	// may be called more than once, before or after the end.
	Close() error
}

// All yields r's keys with their values, for a range loop; the values
// are valid until the next key. It stops at the end of the run or at an
// error, which r.Err then returns: check it after the loop.
//
//	for k, vs := range reduce.All(r) { ... }
//	if err := r.Err(); err != nil { ... }
func All[K, V any](r RunReader[K, V]) iter.Seq2[K, []V] {
	return func(yield func(K, []V) bool) {
		for r.Next() {
			if !yield(r.Key(), r.Values()) {
				return
			}
		}
	}
}

// ReadRun returns a reader of e's pairs. It shares e's slices.
func ReadRun[K, V any](e Run[K, V]) RunReader[K, V] {
	return &runReader[K, V]{e: e, i: -1}
}

// runReader reads a Run in memory.
type runReader[K, V any] struct {
	e Run[K, V]
	i int
}

func (r *runReader[K, V]) Next() bool {
	if r.i < len(r.e.Keys) {
		r.i++
	}
	return r.i < len(r.e.Keys)
}

func (r *runReader[K, V]) Key() K { return r.e.Keys[r.i] }

func (r *runReader[K, V]) Values() []V {
	if r.e.Off == nil {
		return r.e.Vals[r.i : r.i+1]
	}
	return r.e.Vals[r.e.Off[r.i]:r.e.Off[r.i+1]]
}

func (r *runReader[K, V]) Tags() []Tag {
	if r.e.Off == nil {
		return nil
	}
	return r.e.Tags[r.e.Off[r.i]:r.e.Off[r.i+1]]
}

func (r *runReader[K, V]) Err() error { return nil }

func (r *runReader[K, V]) Close() error {
	r.i = len(r.e.Keys)
	return nil
}

// MergeReaders returns a reader of the merge of srcs, given in run order,
// as Store.Merge merges runs: equal keys' values combined with the
// store's combiner in run order, or, keeping all values, grouped and
// ordered by tag. The readers must yield runs of stores of the same kind
// as s; the merge owns them and closes them when it is closed. It holds
// one key of each reader at a time: a heap of their heads, O(n log k)
// for n keys in k runs.
func (s *Store[K, V]) MergeReaders(srcs ...RunReader[K, V]) RunReader[K, V] {
	if len(srcs) == 1 {
		return srcs[0]
	}
	m := &mergeReader[K, V]{srcs: srcs, cmp: s.cmp}
	if !s.comb.KeepsAll() {
		m.f = s.comb.f
		m.vals = make([]V, 1)
	}
	return m
}

// mergeReader is a k-way merge of readers: a min-heap of the readers that
// have keys left, ordered by their current key and then by index.
type mergeReader[K, V any] struct {
	srcs    []RunReader[K, V]
	cmp     func(a, b K) int
	f       func(acc, v V) V // nil: keep all values
	heap    []int
	started bool
	err     error

	key   K
	vals  []V
	tags  []Tag
	group []val[V]
}

func (m *mergeReader[K, V]) start() {
	m.started = true
	for i, r := range m.srcs {
		if r.Next() {
			m.heap = append(m.heap, i)
		} else if err := r.Err(); err != nil {
			m.err = err
			return
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
}

func (m *mergeReader[K, V]) Next() bool {
	if !m.started {
		m.start()
	}
	if m.err != nil || len(m.heap) == 0 {
		return false
	}
	top := m.srcs[m.heap[0]]
	m.key = top.Key()
	if m.f != nil {
		acc := top.Values()[0]
		for m.advance(); m.topIs(m.key); m.advance() {
			acc = m.f(acc, m.srcs[m.heap[0]].Values()[0])
		}
		m.vals[0] = acc
		return m.err == nil
	}
	m.group = m.group[:0]
	for ok := true; ok; ok = m.topIs(m.key) {
		r := m.srcs[m.heap[0]]
		for i, t := range r.Tags() {
			m.group = append(m.group, val[V]{r.Values()[i], t})
		}
		m.advance()
	}
	slices.SortStableFunc(m.group, func(a, b val[V]) int { return CompareTags(a.t, b.t) })
	m.vals, m.tags = m.vals[:0], m.tags[:0]
	for _, x := range m.group {
		m.vals = append(m.vals, x.v)
		m.tags = append(m.tags, x.t)
	}
	return m.err == nil
}

func (m *mergeReader[K, V]) Key() K      { return m.key }
func (m *mergeReader[K, V]) Values() []V { return m.vals }

func (m *mergeReader[K, V]) Tags() []Tag {
	if m.f != nil {
		return nil
	}
	return m.tags
}

func (m *mergeReader[K, V]) Err() error { return m.err }

func (m *mergeReader[K, V]) Close() error {
	var errs []error
	for _, r := range m.srcs {
		errs = append(errs, r.Close())
	}
	m.heap, m.started = nil, true
	return errors.Join(errs...)
}

// topIs reports whether a reader has keys left and the smallest current
// key is k.
func (m *mergeReader[K, V]) topIs(k K) bool {
	return m.err == nil && len(m.heap) > 0 && m.cmp(m.srcs[m.heap[0]].Key(), k) == 0
}

func (m *mergeReader[K, V]) less(a, b int) bool {
	if c := m.cmp(m.srcs[a].Key(), m.srcs[b].Key()); c != 0 {
		return c < 0
	}
	return a < b
}

// advance moves the top reader past its key and restores the heap.
func (m *mergeReader[K, V]) advance() {
	r := m.srcs[m.heap[0]]
	if !r.Next() {
		if err := r.Err(); err != nil {
			m.err = err
			return
		}
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap = m.heap[:last]
	}
	if len(m.heap) > 0 {
		m.down(0)
	}
}

func (m *mergeReader[K, V]) down(i int) { siftDown(m.heap, i, m.less) }

// ReadAll reads r to its end into a run, as Merge makes one (keys and
// values in slices of their own, offsets and tags if the store keeps all
// values), and closes r.
func (s *Store[K, V]) ReadAll(r RunReader[K, V]) (Run[K, V], error) {
	all := s.comb.KeepsAll()
	out := Run[K, V]{Keys: []K{}, Vals: []V{}}
	if all {
		out.Off, out.Tags = []int{0}, []Tag{}
	}
	for r.Next() {
		out.Keys = append(out.Keys, r.Key())
		out.Vals = append(out.Vals, r.Values()...)
		if all {
			out.Tags = append(out.Tags, r.Tags()...)
			out.Off = append(out.Off, len(out.Vals))
		}
	}
	return out, errors.Join(r.Err(), r.Close())
}
