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
// rank's (key, value) results in that order. An error names the key.
func ReduceKeys[K comparable, V, R any](ctx context.Context, r *pgas.Rank, st *reduce.Store[K, V], f KeyFunc[K, V, R], opts ...ReduceOption) (Result[[]KV[K, R]], error) {
	return ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[K, V]) ([]KV[K, R], error) {
		out := make([]KV[K, R], 0, p.Len())
		for k, vs := range p.All() {
			if len(out)&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			v, err := f(ctx, k, vs)
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
// GatherValues moves it.
func TopK[T any](ctx context.Context, r *pgas.Rank, local []T, k int, cmp func(a, b T) int, root int) ([]T, error) {
	if k < 0 {
		return nil, fmt.Errorf("mr: TopK: k = %d, want >= 0", k)
	}
	mine := slices.Clone(local)
	slices.SortStableFunc(mine, cmp)
	mine = mine[:min(k, len(mine))]
	parts, err := GatherValues(ctx, r, mine, root)
	if err != nil || parts == nil {
		return nil, err
	}
	all := slices.Concat(parts...)
	slices.SortStableFunc(all, cmp)
	return all[:min(k, len(all))], nil
}
