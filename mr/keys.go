package mr

import (
	"context"
	"fmt"
	"slices"

	"github.com/pgasmr/pgasmr/pgas"
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
// rank's (key, value) results in that order. An error names the key. The
// keys come as a stream (ApplyReduceStream): under a memory budget the
// rank holds one key's values at a time, and the results.
func ReduceKeys[K comparable, V, R any](ctx context.Context, r *pgas.Rank, st *reduce.Store[K, V], f KeyFunc[K, V, R], opts ...ReduceOption) (Result[[]KV[K, R]], error) {
	return ApplyReduceStream(ctx, r, st, func(ctx context.Context, rd reduce.RunReader[K, V]) ([]KV[K, R], error) {
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
	}, opts...)
}

// TopK is collective: every rank passes its own results and root gets the
// k first of all of them in the order cmp gives, in that order; the other
// ranks get nil. Each rank sends only its own k first, so a rank moves at
// most k results, whatever it holds: after a partitioned reduce, where
// every key is on one rank, that is the global top k without gathering
// every pair. cmp must be a total order (break ties by key) for the result
// not to depend on the rank count. local is not modified. T moves as
// GatherValues moves it. After a reduce that gives every rank every key
// (GatherAll), pass the results on one rank only (nil elsewhere), or the
// root gets each result once per rank.
func TopK[T any](ctx context.Context, r *pgas.Rank, local []T, k int, cmp func(a, b T) int, root int) ([]T, error) {
	if k < 0 {
		return nil, fmt.Errorf("mr: TopK: k = %d, want >= 0", k)
	}
	parts, err := GatherValues(ctx, r, firstK(local, k, cmp), root)
	if err != nil || parts == nil {
		return nil, err
	}
	all := slices.Concat(parts...)
	slices.SortStableFunc(all, cmp)
	return all[:min(k, len(all))], nil
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
