package mr

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// A Source is one side of a join (CoGroup, Join): an input and the map
// that keys its elements. Make one with From; the zero Source is not
// usable.
type Source[K comparable, V any] struct {
	in   Input[thunk[K, V]]
	opts []MapOption
}

// thunk maps one input element of a source: the source's map function
// applied to the element, waiting for an emit.
type thunk[K, V any] func(ctx context.Context, emit func(K, V)) error

// From makes a join's source: f maps each element of in to (key, value)
// pairs, as in ApplyMap, with ApplyMap's options opts (the distribution,
// weights, a plan, WithFinish of f's K and V). The input is read when the
// join runs, as ApplyMap reads it; a Local input is mapped where it lies.
func From[I any, K comparable, V any](in Input[I], f MapFunc[I, K, V], opts ...MapOption) Source[K, V] {
	src := &sourceInput[I, K, V]{in: in, f: f}
	if isLocal(in) {
		return Source[K, V]{in: localSourceInput[I, K, V]{src}, opts: opts}
	}
	return Source[K, V]{in: src, opts: opts}
}

// sourceInput is a source's input seen as thunks: element i is f applied
// to in's element i. It weighs and hashes as in does.
type sourceInput[I any, K, V any] struct {
	in Input[I]
	f  MapFunc[I, K, V]
}

func (s *sourceInput[I, K, V]) Len() int64 { return s.in.Len() }

func (s *sourceInput[I, K, V]) At(ctx context.Context, i int64) (thunk[K, V], error) {
	x, err := s.in.At(ctx, i)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, emit func(K, V)) error { return s.f(ctx, x, emit) }, nil
}

func (s *sourceInput[I, K, V]) Weight(i int64) float64 {
	if w, ok := s.in.(Weighter); ok {
		return w.Weight(i)
	}
	return 1
}

func (s *sourceInput[I, K, V]) Hash() uint64 {
	if h, ok := s.in.(Hasher); ok {
		return h.Hash()
	}
	return 0
}

// localSourceInput is the sourceInput of a Local input, Local too.
type localSourceInput[I any, K, V any] struct{ *sourceInput[I, K, V] }

func (localSourceInput[I, K, V]) local() {}

// Group is one key's values of a CoGroup: the left source's values in
// input order (input index, then emit order), then the right's, each nil
// if the key has none on that side.
type Group[K, A, B any] struct {
	Key   K
	Left  []A
	Right []B
}

// CoGroup is collective: it maps both sources into one store that keeps
// every value, moves the pairs as opts say, as ApplyReduce does, and gives
// each rank that reduces one Group per key it holds.
//
// Keys come in ascending order: natural for a K of integer, float or
// string kind (named types too), else the order of their encodings' bytes
// (reduce.NewEncodedHashStore). A key's values keep their input order. The
// result is the same at every rank count and distribution; the gather mode
// says which ranks get it: every rank under GatherAll, the root under
// GatherRoot and under GatherNone or GatherPartitioned with Merge (the
// others get Result.OK false). Under GatherPartitioned without Merge each
// rank gets the groups of the keys it owns, each key on one rank
// (Result.Part). GatherNone without Merge, which would group each rank's
// pairs apart, is an error.
//
// Keys and values move with reduce's default codecs (reduce.CodecFor): a
// type they cannot carry is an error naming it. A rank holds one key's
// values at a time, and its result.
func CoGroup[K comparable, A, B any](ctx context.Context, r *pgas.Rank, left Source[K, A], right Source[K, B], opts ...ReduceOption) (Result[[]Group[K, A, B]], error) {
	return coReduce(ctx, r, "CoGroup", left, right, func(out []Group[K, A, B], k K, ls []A, rs []B) []Group[K, A, B] {
		return append(out, Group[K, A, B]{Key: k, Left: cloneOrNil(ls), Right: cloneOrNil(rs)})
	}, opts)
}

// cloneOrNil returns a copy of xs, or nil if xs is empty.
func cloneOrNil[T any](xs []T) []T {
	if len(xs) == 0 {
		return nil
	}
	return slices.Clone(xs)
}

// JoinKind says which keys a Join keeps.
type JoinKind int

// The join kinds.
const (
	// Inner keeps the keys that have values on both sides.
	Inner JoinKind = iota
	// LeftOuter keeps the keys of the left side: a left value with no
	// right value gives a Pair with HasRight false.
	LeftOuter
	// RightOuter keeps the keys of the right side: a right value with no
	// left value gives a Pair with HasLeft false.
	RightOuter
	// FullOuter keeps every key.
	FullOuter
)

func (k JoinKind) String() string {
	switch k {
	case Inner:
		return "inner"
	case LeftOuter:
		return "left-outer"
	case RightOuter:
		return "right-outer"
	case FullOuter:
		return "full-outer"
	}
	return fmt.Sprintf("JoinKind(%d)", int(k))
}

// Pair is one row of a Join: a key with a left and a right value. HasLeft
// and HasRight say which sides the row has; an outer join's row that lacks
// a side holds that side's zero value.
type Pair[K, A, B any] struct {
	Key      K
	Left     A
	Right    B
	HasLeft  bool
	HasRight bool
}

// Join is collective: it is CoGroup, with each key's group turned into
// rows as kind says: the cross product of the key's left and right values,
// in the order (left value, right value), each in input order; under an
// outer kind, a key with values on one side only gives one row per value,
// the other side missing. Rows are in ascending key order; which ranks
// get them, under which gather modes, is as in CoGroup.
//
//	orders := mr.From(mr.Slice(orderList), func(ctx context.Context, o Order, emit func(string, Order)) error {
//		emit(o.Customer, o)
//		return nil
//	})
//	customers := mr.From(mr.Slice(customerList), func(ctx context.Context, c Customer, emit func(string, Customer)) error {
//		emit(c.ID, c)
//		return nil
//	})
//	res, err := mr.Join(ctx, r, mr.Inner, orders, customers, mr.Gather(reduce.GatherRoot))
func Join[K comparable, A, B any](ctx context.Context, r *pgas.Rank, kind JoinKind, left Source[K, A], right Source[K, B], opts ...ReduceOption) (Result[[]Pair[K, A, B]], error) {
	if kind < Inner || kind > FullOuter {
		return Result[[]Pair[K, A, B]]{}, fmt.Errorf("mr: Join: %v is not a join kind", kind)
	}
	keepLeft := kind == LeftOuter || kind == FullOuter
	keepRight := kind == RightOuter || kind == FullOuter
	return coReduce(ctx, r, "Join", left, right, func(out []Pair[K, A, B], k K, ls []A, rs []B) []Pair[K, A, B] {
		switch {
		case len(ls) > 0 && len(rs) > 0:
			for _, a := range ls {
				for _, b := range rs {
					out = append(out, Pair[K, A, B]{Key: k, Left: a, Right: b, HasLeft: true, HasRight: true})
				}
			}
		case len(ls) > 0 && keepLeft:
			for _, a := range ls {
				out = append(out, Pair[K, A, B]{Key: k, Left: a, HasLeft: true})
			}
		case len(rs) > 0 && keepRight:
			for _, b := range rs {
				out = append(out, Pair[K, A, B]{Key: k, Right: b, HasRight: true})
			}
		}
		return out
	}, opts)
}

// either is a join's value in its store: a left value, or a right one.
type either[A, B any] struct {
	right bool
	l     A
	r     B
}

// coReduce maps both sources into one store keeping every value, reduces
// it, and calls group for each key with its left and right values (valid
// until group returns), collecting what it appends.
func coReduce[K comparable, A, B, R any](ctx context.Context, r *pgas.Rank, what string, left Source[K, A], right Source[K, B], group func(out []R, k K, ls []A, rs []B) []R, opts []ReduceOption) (Result[[]R], error) {
	var res Result[[]R]
	if left.in == nil || right.in == nil {
		return res, fmt.Errorf("mr: %s: a zero Source; make sources with From", what)
	}
	var ro redOpts
	for _, opt := range opts {
		opt(&ro)
	}
	if ro.o.Gather == reduce.GatherNone && !ro.o.Merge {
		return res, fmt.Errorf("mr: %s: GatherNone without Merge would group each rank's pairs apart", what)
	}
	st, err := joinStore[K, A, B]()
	if err != nil {
		return res, fmt.Errorf("mr: %s: %w", what, err)
	}
	if err := mapSource(ctx, r, st, left, func(a A) either[A, B] { return either[A, B]{l: a} }); err != nil {
		return res, fmt.Errorf("mr: %s: left source: %w", what, err)
	}
	if err := mapSource(ctx, r, st, right, func(b B) either[A, B] { return either[A, B]{right: true, r: b} }); err != nil {
		return res, fmt.Errorf("mr: %s: right source: %w", what, err)
	}
	return reduceStream(ctx, r, what, st, func(ctx context.Context, rd reduce.RunReader[K, either[A, B]]) ([]R, error) {
		var out []R
		var ls []A
		var rs []B
		n := 0
		for k, vs := range reduce.All(rd) {
			if n&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			n++
			ls, rs = ls[:0], rs[:0]
			for _, v := range vs {
				if v.right {
					rs = append(rs, v.r)
				} else {
					ls = append(ls, v.l)
				}
			}
			out = group(out, k, ls, rs)
		}
		return out, nil
	}, opts)
}

// mapSource maps src into st, its values wrapped by wrap.
func mapSource[K comparable, V, W any](ctx context.Context, r *pgas.Rank, st *reduce.Store[K, W], src Source[K, V], wrap func(V) W) error {
	opts := src.opts
	var o mapOpts
	for _, opt := range opts {
		opt(&o)
	}
	finish, err := finishOf[K, V](o)
	if err != nil {
		return err
	}
	if finish != nil {
		opts = append(slices.Clip(opts), WithFinish(func(ctx context.Context, emit func(K, W)) error {
			return finish(ctx, func(k K, v V) { emit(k, wrap(v)) })
		}))
	}
	_, err = ApplyMap(ctx, r, src.in, func(ctx context.Context, th thunk[K, V], emit func(K, W)) error {
		return th(ctx, func(k K, v V) { emit(k, wrap(v)) })
	}, st, opts...)
	return err
}

// joinStore makes the store of a join: keys in their natural order if
// they have one, else in their encoding's, every value kept.
func joinStore[K comparable, A, B any]() (*reduce.Store[K, either[A, B]], error) {
	vc, err := eitherCodec[A, B]()
	if err != nil {
		return nil, err
	}
	opt := reduce.WithValueCodec[K](vc)
	if order := naturalOrder[K](); order != nil {
		return reduce.NewHashStoreFunc(order, reduce.KeepAll[either[A, B]](), opt)
	}
	return reduce.NewEncodedHashStore(reduce.KeepAll[either[A, B]](), opt)
}

// eitherCodec encodes a join's values: a byte for the side, then the
// value with its side's default codec. Its codecs are this call's own
// instances, so the codec belongs to the store (the rank) it is made for.
func eitherCodec[A, B any]() (reduce.Codec[either[A, B]], error) {
	var zero reduce.Codec[either[A, B]]
	ca, err := reduce.CodecFor[A]()
	if err != nil {
		return zero, fmt.Errorf("left values: %w", err)
	}
	cb, err := reduce.CodecFor[B]()
	if err != nil {
		return zero, fmt.Errorf("right values: %w", err)
	}
	fixed := 0
	if ca.Fixed() > 0 && ca.Fixed() == cb.Fixed() {
		fixed = 1 + ca.Fixed()
	}
	return reduce.NewCodec("either("+ca.Name()+","+cb.Name()+")", fixed,
		func(b []byte, v either[A, B]) []byte {
			if v.right {
				return cb.Append(append(b, 1), v.r)
			}
			return ca.Append(append(b, 0), v.l)
		},
		func(b []byte) (either[A, B], int, error) {
			var v either[A, B]
			if len(b) == 0 {
				return v, 0, errors.New("mr: join value: empty record")
			}
			var n int
			var err error
			switch b[0] {
			case 0:
				v.l, n, err = ca.Decode(b[1:])
			case 1:
				v.right = true
				v.r, n, err = cb.Decode(b[1:])
			default:
				return v, 0, fmt.Errorf("mr: join value: side %d, want 0 or 1", b[0])
			}
			return v, 1 + n, err
		}), nil
}

// naturalOrder returns the order of K's values if K's kind is ordered
// (an integer, a float or a string, named or not), else nil.
func naturalOrder[K comparable]() func(a, b K) int {
	switch reflect.TypeFor[K]().Kind() {
	case reflect.Int:
		return orderAs[K, int]
	case reflect.Int8:
		return orderAs[K, int8]
	case reflect.Int16:
		return orderAs[K, int16]
	case reflect.Int32:
		return orderAs[K, int32]
	case reflect.Int64:
		return orderAs[K, int64]
	case reflect.Uint:
		return orderAs[K, uint]
	case reflect.Uint8:
		return orderAs[K, uint8]
	case reflect.Uint16:
		return orderAs[K, uint16]
	case reflect.Uint32:
		return orderAs[K, uint32]
	case reflect.Uint64:
		return orderAs[K, uint64]
	case reflect.Uintptr:
		return orderAs[K, uintptr]
	case reflect.Float32:
		return orderAs[K, float32]
	case reflect.Float64:
		return orderAs[K, float64]
	case reflect.String:
		return orderAs[K, string]
	}
	return nil
}

// orderAs compares a and b as U, the underlying type of K.
func orderAs[K any, U cmp.Ordered](a, b K) int {
	return cmp.Compare(*(*U)(unsafe.Pointer(&a)), *(*U)(unsafe.Pointer(&b)))
}
