package reduce

import (
	"cmp"
	"slices"
)

// Tag orders the values of a key when all are kept: (map call, input
// index, emit sequence) for element-by-element maps, (map call, rank, emit
// sequence) for array-based ones. The sequence never restarts, so values
// of one element keep their emit order.
type Tag struct{ Call, Idx, Seq int64 }

// CompareTags orders tags by call, then index, then sequence.
func CompareTags(a, b Tag) int {
	if c := cmp.Compare(a.Call, b.Call); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Idx, b.Idx); c != 0 {
		return c
	}
	return cmp.Compare(a.Seq, b.Seq)
}

// Run is a sorted run of pairs: keys ascending, each once. Combined, Vals
// holds one value per key and Tags and Off are nil; keeping all values,
// Vals[Off[i]:Off[i+1]] are key i's values in tag order, Tags parallel to
// Vals. A store drains into a run; runs from several ranks merge into one
// (Store.Merge); the reduce function gets a run's Pairs.
type Run[K, V any] struct {
	Keys []K
	Vals []V
	Tags []Tag
	Off  []int
}

// Pairs turns a run into what the reduce function gets; the slices are
// shared.
func (e Run[K, V]) Pairs() *Pairs[K, V] {
	return &Pairs[K, V]{Keys: e.Keys, Vals: e.Vals, Off: e.Off}
}

// val is a kept value with its tag.
type val[V any] struct {
	v V
	t Tag
}

// Merge merges runs given in rank order into one sorted run, combining
// (with the store's combiner) or grouping (by tag) the values of equal
// keys; equal keys of different runs combine in run order. The runs must
// come from stores of the same kind as s. It is a k-way merge over a heap
// of the runs' heads: O(n log k) for n keys in k runs.
func (s *Store[K, V]) Merge(runs []Run[K, V]) Run[K, V] {
	if len(runs) == 1 {
		return runs[0]
	}
	all := s.comb.KeepsAll()
	m := merger[K, V]{runs: runs, cmp: s.cmp, pos: make([]int, len(runs))}
	if s.strs {
		// String keys: the heap compares the heads' prefixes, each read
		// once as the head moves, and the strings only where they tie.
		m.head = make([]uint64, len(runs))
	}
	n, nv := 0, 0 // the longest run: the fewest keys and values out
	for ri, e := range runs {
		n = max(n, len(e.Keys))
		nv = max(nv, len(e.Vals))
		if len(e.Keys) > 0 {
			m.heap = append(m.heap, ri)
			m.setHead(ri)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	out := Run[K, V]{Keys: make([]K, 0, n), Vals: make([]V, 0, nv)}
	if all {
		out.Off = []int{0}
		out.Tags = make([]Tag, 0, nv)
	}
	var group []val[V]
	for len(m.heap) > 0 {
		ri, i := m.top()
		k := runs[ri].Keys[i]
		m.key = m.headOf(ri)
		out.Keys = append(out.Keys, k)
		if !all {
			acc := runs[ri].Vals[i]
			for m.advance(); m.topIs(k); m.advance() {
				rj, j := m.top()
				acc = s.comb.f(acc, runs[rj].Vals[j])
			}
			out.Vals = append(out.Vals, acc)
			continue
		}
		group = group[:0]
		for ok := true; ok; ok = m.topIs(k) {
			rj, j := m.top()
			e := runs[rj]
			for v := e.Off[j]; v < e.Off[j+1]; v++ {
				group = append(group, val[V]{e.Vals[v], e.Tags[v]})
			}
			m.advance()
		}
		out.appendGroup(group)
	}
	return out
}

// merger is a min-heap of the runs that have keys left, ordered by their
// next key and then by run index.
type merger[K, V any] struct {
	runs []Run[K, V]
	cmp  func(a, b K) int
	pos  []int // next key of each run
	heap []int // run indices
	// head, for keys of a string type in bytewise order, holds each
	// run's next key's StringPrefix, and key the prefix of the key being
	// merged (topIs's k); nil otherwise.
	head []uint64
	key  uint64
}

// setHead notes run ri's next key's prefix, for string keys.
func (m *merger[K, V]) setHead(ri int) {
	if m.head != nil {
		m.head[ri] = StringPrefix(asStrings(m.runs[ri].Keys)[m.pos[ri]])
	}
}

// headOf returns run ri's next key's prefix (0 for other keys).
func (m *merger[K, V]) headOf(ri int) uint64 {
	if m.head == nil {
		return 0
	}
	return m.head[ri]
}

// top returns the run with the smallest next key and that key's index.
func (m *merger[K, V]) top() (run, i int) { return m.heap[0], m.pos[m.heap[0]] }

// topIs reports whether a run has keys left and the smallest next key is
// k.
func (m *merger[K, V]) topIs(k K) bool {
	if len(m.heap) == 0 {
		return false
	}
	ri, i := m.top()
	if m.head != nil && m.head[ri] != m.key {
		return false
	}
	return m.cmp(m.runs[ri].Keys[i], k) == 0
}

func (m *merger[K, V]) less(a, b int) bool {
	if m.head != nil && m.head[a] != m.head[b] {
		return m.head[a] < m.head[b]
	}
	if c := m.cmp(m.runs[a].Keys[m.pos[a]], m.runs[b].Keys[m.pos[b]]); c != 0 {
		return c < 0
	}
	return a < b
}

// advance moves the top run past its key and restores the heap.
func (m *merger[K, V]) advance() {
	ri := m.heap[0]
	m.pos[ri]++
	if m.pos[ri] == len(m.runs[ri].Keys) {
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap = m.heap[:last]
	} else {
		m.setHead(ri)
	}
	if len(m.heap) > 0 {
		m.down(0)
	}
}

func (m *merger[K, V]) down(i int) { siftDown(m.heap, i, m.less) }

// siftDown restores the heap order of h (less: the top comes first) below
// i: the k-way merges' heap of runs.
func siftDown(h []int, i int, less func(a, b int) bool) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			c = r
		}
		if !less(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// appendGroup appends one key's kept values, sorted by tag, and closes the
// key's range.
func (e *Run[K, V]) appendGroup(vs []val[V]) {
	slices.SortStableFunc(vs, func(a, b val[V]) int { return CompareTags(a.t, b.t) })
	for _, x := range vs {
		e.Vals = append(e.Vals, x.v)
		e.Tags = append(e.Tags, x.t)
	}
	e.Off = append(e.Off, len(e.Vals))
}
