package reduce

import "iter"

// Pairs is what a rank's reduce function receives: keys in ascending order,
// each with one combined value (Off == nil) or all its values
// (Vals[Off[i]:Off[i+1]] for key i, in the order (input index, emit
// order)). The slices belong to the reduce function.
type Pairs[K, V any] struct {
	Keys []K
	Vals []V
	Off  []int
}

// Len returns the number of keys.
func (p *Pairs[K, V]) Len() int { return len(p.Keys) }

// Value returns key i's combined value. It panics in all-values mode.
func (p *Pairs[K, V]) Value(i int) V {
	if p.Off != nil {
		panic("reduce: Pairs.Value on pairs that keep all values; use Values")
	}
	return p.Vals[i]
}

// Values returns key i's values: one in combined mode, all in all-values
// mode.
func (p *Pairs[K, V]) Values(i int) []V {
	if p.Off == nil {
		return p.Vals[i : i+1]
	}
	return p.Vals[p.Off[i]:p.Off[i+1]]
}

// All yields every key with its values (as Values gives them), in key
// order.
func (p *Pairs[K, V]) All() iter.Seq2[K, []V] {
	return func(yield func(K, []V) bool) {
		for i, k := range p.Keys {
			if !yield(k, p.Values(i)) {
				return
			}
		}
	}
}
