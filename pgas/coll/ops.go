package coll

import (
	"cmp"
	"fmt"

	"github.com/pgasmr/pgasmr/internal/elem"
)

// Integer is the set of integer types the bitwise operators accept (the C,
// UC, S, US, I, UI, L and UL suffixes of UPC's typed reductions, and Go's
// int, uint and uintptr), including types defined on them.
type Integer = elem.Integer

// Float is the set of floating-point types (UPC's F and D suffixes; LD has
// no Go equivalent).
type Float = elem.Float

// Number is every type the arithmetic and logical operators accept.
type Number = elem.Number

// Op is a reduction operator over T (UPC's upc_op_t together with its
// user function): a name, an associative combining function, and whether
// the function is also commutative. Build one with Add, Mult, Band, Bor,
// Bxor, LogAnd, LogOr, Min, Max, Func or NonCommFunc; the zero Op is
// invalid and the reductions panic on it.
//
// The reductions (Reduce, Allreduce, PrefixReduce and their forms) combine
// a sequence x0, x1, ..., x(k-1) of elements into op(...op(op(x0, x1),
// x2)..., x(k-1)), grouping partial results as they like (the function must
// be associative). A non-commutative operator's operands are always
// combined in sequence order, a lower range on the left; a commutative
// operator's partial results may be combined in any order. A result that
// depends on the order in which a commutative (or non-associative) function
// is applied, such as rounding in a floating-point sum, is unspecified.
type Op[T any] struct {
	name    string
	combine func(a, b T) T
	comm    bool
}

// Name returns the operator's name ("add", "min", or a user function's
// name).
func (o Op[T]) Name() string { return o.name }

// Commutative reports whether the operator's operands may be combined in
// any order. Only NonCommFunc returns false.
func (o Op[T]) Commutative() bool { return o.comm }

// Combine applies the operator to a (the earlier operand in sequence
// order) and b. It panics on the zero Op.
func (o Op[T]) Combine(a, b T) T {
	o.mustValid("Combine")
	return o.combine(a, b)
}

// Valid reports whether o was built by one of the constructors.
func (o Op[T]) Valid() bool { return o.combine != nil }

func (o Op[T]) String() string {
	if !o.Valid() {
		return "invalid-op"
	}
	return o.name
}

func (o Op[T]) mustValid(where string) {
	if o.combine == nil {
		panic(fmt.Sprintf("coll: %s: zero Op (build one with Add, Min, Func, ...)", where))
	}
}

// Add returns the sum operator, a + b (UPC_ADD). Integer sums wrap around
// as Go arithmetic does.
func Add[T Number]() Op[T] {
	return Op[T]{name: "add", combine: func(a, b T) T { return a + b }, comm: true}
}

// Mult returns the product operator, a * b (UPC_MULT).
func Mult[T Number]() Op[T] {
	return Op[T]{name: "mult", combine: func(a, b T) T { return a * b }, comm: true}
}

// Band returns the bitwise and operator, a & b (UPC_AND). It is defined for
// integer types only: on a floating-point type it does not compile, where
// UPC leaves the result undefined.
func Band[T Integer]() Op[T] {
	return Op[T]{name: "band", combine: func(a, b T) T { return a & b }, comm: true}
}

// Bor returns the bitwise or operator, a | b (UPC_OR); integer types only.
func Bor[T Integer]() Op[T] {
	return Op[T]{name: "bor", combine: func(a, b T) T { return a | b }, comm: true}
}

// Bxor returns the bitwise exclusive or operator, a ^ b (UPC_XOR); integer
// types only.
func Bxor[T Integer]() Op[T] {
	return Op[T]{name: "bxor", combine: func(a, b T) T { return a ^ b }, comm: true}
}

// LogAnd returns the logical and operator (UPC_LOGAND): T(1) if both a and
// b are non-zero, else T(0), as C's a && b. A NaN is non-zero.
func LogAnd[T Number]() Op[T] {
	return Op[T]{name: "logand", combine: func(a, b T) T {
		if a != 0 && b != 0 {
			return 1
		}
		return 0
	}, comm: true}
}

// LogOr returns the logical or operator (UPC_LOGOR): T(1) if a or b is
// non-zero, else T(0), as C's a || b. A NaN is non-zero.
func LogOr[T Number]() Op[T] {
	return Op[T]{name: "logor", combine: func(a, b T) T {
		if a != 0 || b != 0 {
			return 1
		}
		return 0
	}, comm: true}
}

// Min returns the minimum operator (UPC_MIN), Go's built-in min: for
// floating-point types a NaN operand gives NaN.
func Min[T cmp.Ordered]() Op[T] {
	return Op[T]{name: "min", combine: func(a, b T) T { return min(a, b) }, comm: true}
}

// Max returns the maximum operator (UPC_MAX), Go's built-in max: for
// floating-point types a NaN operand gives NaN.
func Max[T cmp.Ordered]() Op[T] {
	return Op[T]{name: "max", combine: func(a, b T) T { return max(a, b) }, comm: true}
}

// Func returns the operator of a user function (UPC_FUNC), which must be
// associative and commutative: partial results may be combined in any
// order. f runs on the ranks that combine partial results, on private
// copies of the elements; it must not touch shared state. It panics if f is
// nil.
func Func[T any](name string, f func(a, b T) T) Op[T] {
	if f == nil {
		panic(fmt.Sprintf("coll: Func(%q) with a nil function", name))
	}
	return Op[T]{name: name, combine: f, comm: true}
}

// NonCommFunc returns the operator of an associative but not commutative
// user function (UPC_NONCOMM_FUNC): the reductions combine its operands
// strictly in sequence order, f(earlier, later), never swapping them, so the
// result equals the sequential left fold however the sequence is
// distributed. It panics if f is nil.
func NonCommFunc[T any](name string, f func(a, b T) T) Op[T] {
	if f == nil {
		panic(fmt.Sprintf("coll: NonCommFunc(%q) with a nil function", name))
	}
	return Op[T]{name: name, combine: f, comm: false}
}
