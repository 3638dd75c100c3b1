package reduce

import (
	"cmp"
	"fmt"
)

// Combiner folds the values of one key as they are emitted (Phoenix++'s
// combiners): the store keeps one value per key instead of a list. The
// zero Combiner is KeepAll: every value is kept, in order.
type Combiner[V any] struct {
	name string
	f    func(acc, v V) V
	comm bool
	sum  bool // the built-in Sum, which dense containers may inline
}

// Name names the combiner ("sum", "min", ...; "all" for KeepAll).
func (c Combiner[V]) Name() string {
	if c.f == nil {
		return "all"
	}
	return c.name
}

// IsSum reports whether this is the built-in Sum, whose values a node
// table of shared memory may add with atomic operations.
func (c Combiner[V]) IsSum() bool { return c.sum }

// KeepsAll reports whether this is KeepAll.
func (c Combiner[V]) KeepsAll() bool { return c.f == nil }

// Commutative reports whether results are independent of the order values
// are combined in (true for Sum of integers, Min, Max and Func declared
// so); then reduce results are identical for every rank count and
// distribution.
func (c Combiner[V]) Commutative() bool { return c.comm }

// Combine returns acc ⊕ v.
func (c Combiner[V]) Combine(acc, v V) V { return c.f(acc, v) }

// KeepAll keeps every value of a key, in the order (input index, emit
// order).
func KeepAll[V any]() Combiner[V] { return Combiner[V]{} }

// Sum adds values. For floating-point values the sum depends on the order
// of additions, which depends on the rank count; integer sums do not.
func Sum[V Number]() Combiner[V] {
	var z V
	exact := isInteger(z)
	return Combiner[V]{name: "sum", f: func(a, b V) V { return a + b }, comm: exact, sum: true}
}

// Min keeps the smallest value.
func Min[V cmp.Ordered]() Combiner[V] {
	return Combiner[V]{name: "min", f: func(a, b V) V { return min(a, b) }, comm: true}
}

// Max keeps the largest value.
func Max[V cmp.Ordered]() Combiner[V] {
	return Combiner[V]{name: "max", f: func(a, b V) V { return max(a, b) }, comm: true}
}

// Func combines with f, which must be associative; commutative says
// whether it is also commutative (and so order-independent).
func Func[V any](name string, f func(acc, v V) V, commutative bool) Combiner[V] {
	if f == nil {
		panic(fmt.Sprintf("reduce: Func(%q) with a nil function", name))
	}
	return Combiner[V]{name: name, f: f, comm: commutative}
}

func isInteger(v any) bool {
	switch v.(type) {
	case float32, float64:
		return false
	}
	return true
}
