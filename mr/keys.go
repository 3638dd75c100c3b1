package mr

import (
	"context"
	"fmt"
	"slices"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/reduce"
)

// KV is a key with its reduced value.
type KV[K, R any] struct {
	Key   K
	Value R
}

// KeyFunc reduces one key's values: one combined value, or all of them
// in the order (input index, emit order) when the store keeps all. vs
// belongs to the function.
type KeyFunc[K, V, R any] func(ctx context.Context, k K, vs []V) (R, error)

// ReduceKeys is ApplyReduce with a function called once per key, in
// ascending key order, on every rank that reduces: its Result holds the
// rank's (key, value) results in that order (by default every key, on
// every rank: see Gather). An error names the key. The keys come as a
// stream (ApplyReduceStream): under a memory budget the rank holds one
// key's values at a time, and the results. A store that combines its
// values (reduce.Sum, Min, Max, Func) gives f one value per key; Collect
// returns them without a function.
func ReduceKeys[K comparable, V, R any](ctx context.Context, r *pgas.Rank, st *reduce.Store[K, V], f KeyFunc[K, V, R], opts ...ReduceOption) (Result[[]KV[K, R]], error) {
	return reduceStream(ctx, r, "ReduceKeys", st, func(ctx context.Context, rd reduce.RunReader[K, V]) ([]KV[K, R], error) {
		var out []KV[K, R]
		for k, vs := range reduce.All(rd) {
			if len(out)&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			v, err := f(ctx, k, slices.Clone(vs))
			if err != nil {
				return nil, fmt.Errorf("key %v: %w", k, err)
			}
			out = append(out, KV[K, R]{k, v})
		}
		return out, nil
	}, opts)
}

// Collect is the reduce of a store that combines its values (reduce.Sum,
// Min, Max, Func): its Result holds each key with its combined value, keys
// ascending (by default every key, on every rank: see Gather), with no
// reduce function to write. A store that keeps all values
// (reduce.KeepAll) is an error: reduce those with ReduceKeys.
func Collect[K comparable, V any](ctx context.Context, r *pgas.Rank, st *reduce.Store[K, V], opts ...ReduceOption) (Result[[]KV[K, V]], error) {
	if st.Combiner().KeepsAll() {
		var zero V
		return Result[[]KV[K, V]]{}, fmt.Errorf("mr: Collect of a store that keeps all values of %T (reduce.KeepAll): reduce them with ReduceKeys", zero)
	}
	return reduceStream(ctx, r, "Collect", st, func(ctx context.Context, rd reduce.RunReader[K, V]) ([]KV[K, V], error) {
		var out []KV[K, V]
		for k, vs := range reduce.All(rd) {
			if len(out)&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			if len(vs) != 1 {
				return nil, fmt.Errorf("key %v has %d values in a combining store", k, len(vs))
			}
			out = append(out, KV[K, V]{k, vs[0]})
		}
		return out, nil
	}, opts)
}

// Dense returns the values of kvs, whose keys are in [0, n), as a slice of
// n indexed by key: the result of a job whose keys are dense (a
// histogram's bins, k-means' centres), with the zero V for a key that has
// no value. A key outside [0, n), or one given twice, is an error naming
// it.
func Dense[K reduce.Integer, V any](kvs []KV[K, V], n int) ([]V, error) {
	if n < 0 {
		return nil, fmt.Errorf("mr: Dense of %d values, want n >= 0", n)
	}
	out := make([]V, n)
	seen := make([]bool, n)
	for _, kv := range kvs {
		if uint64(kv.Key) >= uint64(n) { // a negative key too
			return nil, fmt.Errorf("mr: Dense: key %v is not in [0, %d)", kv.Key, n)
		}
		k := int(kv.Key)
		if seen[k] {
			return nil, fmt.Errorf("mr: Dense: key %v given twice", kv.Key)
		}
		seen[k] = true
		out[k] = kv.Value
	}
	return out, nil
}

// TopK is collective: every rank passes its own results and root gets the
// k first of all of them in the order cmp gives, in that order; the other
// ranks get nil. Each rank sends only its own k first, so a rank moves at
// most k results, whatever it holds: after a partitioned reduce, where
// every key is on one rank, that is the global top k without gathering
// every pair. A list that every rank passes alike, such as the whole
// result that a reduce without a Gather option gives every rank, counts
// once. cmp must be a total order (break ties by key) for the result not
// to depend on the rank count. local is not modified. T moves as
// GatherValues moves it.
func TopK[T any](ctx context.Context, r *pgas.Rank, local []T, k int, cmp func(a, b T) int, root int) ([]T, error) {
	if k < 0 {
		return nil, fmt.Errorf("mr: TopK: k = %d, want >= 0", k)
	}
	local, err := once(ctx, r, local)
	if err != nil {
		return nil, err
	}
	parts, err := GatherValues(ctx, r, firstK(local, k, cmp), root)
	if err != nil || parts == nil {
		return nil, err
	}
	all := slices.Concat(parts...)
	slices.SortStableFunc(all, cmp)
	return all[:min(k, len(all))], nil
}

// replicated is collective: it reports whether every rank passed the same
// list (the same length and the same elements where a slice input's hash
// samples them, see Hasher): the whole result that a reduce without a
// Gather option gives every rank, rather than each rank's part of it. A
// function that combines the ranks' lists (TopK, Sort) takes a replicated
// one once. Partitioned parts hold different keys, so they never look
// alike, unless all are empty. With one rank it returns true.
func replicated[T any](ctx context.Context, r *pgas.Rank, local []T) (bool, error) {
	if r.N() == 1 {
		return true, nil
	}
	h := (&sliceInput[T]{xs: local}).Hash()
	hs := make([]uint64, r.N())
	if err := coll.Allgather(ctx, r.World(), coll.Private(hs), coll.Private([]uint64{h}), 1); err != nil {
		return false, fmt.Errorf("mr: comparing the ranks' lists: %w", err)
	}
	for _, x := range hs {
		if x != hs[0] {
			return false, nil
		}
	}
	return true, nil
}

// firstK returns the k first of xs in the order cmp gives, ties in the
// order of xs (what a stable sort's first k are), without sorting or
// copying all of xs: a heap of the k best so far, O(len(xs) log k).
func firstK[T any](xs []T, k int, cmp func(a, b T) int) []T {
	if k >= len(xs) {
		out := slices.Clone(xs)
		slices.SortStableFunc(out, cmp)
		return out
	}
	if k == 0 {
		return []T{}
	}
	type item struct {
		v T
		i int
	}
	// before reports whether a comes before b: by cmp, then by position.
	before := func(a, b item) bool {
		if c := cmp(a.v, b.v); c != 0 {
			return c < 0
		}
		return a.i < b.i
	}
	// h is a heap whose root is the last of the k kept: the one a better
	// element replaces.
	h := make([]item, 0, k)
	down := func(j int) {
		for {
			l := 2*j + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && before(h[l], h[r]) {
				l = r
			}
			if !before(h[j], h[l]) {
				return
			}
			h[j], h[l] = h[l], h[j]
			j = l
		}
	}
	for i, x := range xs {
		it := item{x, i}
		if len(h) < k {
			h = append(h, it)
			for j := len(h) - 1; j > 0; {
				p := (j - 1) / 2
				if !before(h[p], h[j]) {
					break
				}
				h[p], h[j] = h[j], h[p]
				j = p
			}
			continue
		}
		if before(it, h[0]) {
			h[0] = it
			down(0)
		}
	}
	slices.SortFunc(h, func(a, b item) int {
		if before(a, b) {
			return -1
		}
		if before(b, a) {
			return 1
		}
		return 0
	})
	out := make([]T, len(h))
	for i, it := range h {
		out[i] = it.v
	}
	return out
}
