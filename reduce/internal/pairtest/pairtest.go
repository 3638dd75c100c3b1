// Package pairtest holds the naive oracles that the tests of reduce and
// reduce/shuffle check stores and transfers against: a list of Emit calls,
// played into a store, and what a store must hold after them, computed
// without its code (a Go map, an insertion sort).
package pairtest

import "slices"

// Emission is one Emit call, after SetTag(Idx) when SetTag is true.
type Emission[K, V any] struct {
	SetTag bool
	Idx    int64
	K      K
	V      V
}

// Emitter is what Play feeds: a reduce.Store.
type Emitter[K, V any] interface {
	SetTag(idx int64)
	Emit(k K, v V)
}

// Play makes the calls of ems on s.
func Play[K, V any](s Emitter[K, V], ems []Emission[K, V]) {
	for _, e := range ems {
		if e.SetTag {
			s.SetTag(e.Idx)
		}
		s.Emit(e.K, e.V)
	}
}

// Combined folds the values of each key in emit order with f and returns
// the keys sorted by compare with their values.
func Combined[K comparable, V any](ems []Emission[K, V], f func(a, b V) V, compare func(a, b K) int) ([]K, []V) {
	acc := map[K]V{}
	for _, e := range ems {
		if a, ok := acc[e.K]; ok {
			acc[e.K] = f(a, e.V)
		} else {
			acc[e.K] = e.V
		}
	}
	keys := make([]K, 0, len(acc))
	for k := range acc {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	vals := make([]V, len(keys))
	for i, k := range keys {
		vals[i] = acc[k]
	}
	return keys, vals
}

// All groups every value by key, ordered by (tag index, emit sequence),
// the sequence counting every emit of the store.
func All[K comparable, V any](ems []Emission[K, V], compare func(a, b K) int) ([]K, [][]V) {
	type tv struct {
		idx, seq int64
		v        V
	}
	var idx, seq int64
	by := map[K][]tv{}
	for _, e := range ems {
		if e.SetTag {
			idx = e.Idx
		}
		by[e.K] = append(by[e.K], tv{idx, seq, e.V})
		seq++
	}
	keys := make([]K, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	vals := make([][]V, len(keys))
	for i, k := range keys {
		xs := by[k]
		// Naive insertion sort: stable, independent of the store's sort.
		for a := 1; a < len(xs); a++ {
			for b := a; b > 0 && (xs[b].idx < xs[b-1].idx || xs[b].idx == xs[b-1].idx && xs[b].seq < xs[b-1].seq); b-- {
				xs[b], xs[b-1] = xs[b-1], xs[b]
			}
		}
		for _, x := range xs {
			vals[i] = append(vals[i], x.v)
		}
	}
	return keys, vals
}
