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
// keys. The runs must come from stores of the same kind as s.
func (s *Store[K, V]) Merge(runs []Run[K, V]) Run[K, V] {
	if len(runs) == 1 {
		return runs[0]
	}
	all := s.comb.KeepsAll()
	type ref struct{ run, i int }
	var refs []ref
	for ri, e := range runs {
		for i := range e.Keys {
			refs = append(refs, ref{ri, i})
		}
	}
	key := func(r ref) K { return runs[r.run].Keys[r.i] }
	slices.SortStableFunc(refs, func(a, b ref) int { return s.cmp(key(a), key(b)) })
	var out Run[K, V]
	if all {
		out.Off = []int{0}
	}
	var group []val[V]
	for j := 0; j < len(refs); {
		k := key(refs[j])
		out.Keys = append(out.Keys, k)
		if !all {
			acc := runs[refs[j].run].Vals[refs[j].i]
			for j++; j < len(refs) && s.cmp(key(refs[j]), k) == 0; j++ {
				acc = s.comb.f(acc, runs[refs[j].run].Vals[refs[j].i])
			}
			out.Vals = append(out.Vals, acc)
			continue
		}
		group = group[:0]
		for ; j < len(refs) && s.cmp(key(refs[j]), k) == 0; j++ {
			e := runs[refs[j].run]
			for v := e.Off[refs[j].i]; v < e.Off[refs[j].i+1]; v++ {
				group = append(group, val[V]{e.Vals[v], e.Tags[v]})
			}
		}
		out.appendGroup(group)
	}
	return out
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
