package coll_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// BenchmarkOversubscribed times small collectives of in-process jobs with
// far more ranks than cores (issue 18): one int64 broadcast, allreduced
// and allgathered per rank, at 64, 256 and 1,024 ranks. Waiting ranks
// must not spin the core away from the rank they wait for. The allgather
// is planned flat (every member enumerates every rank pair), which is
// what grows fastest with the rank count.
func BenchmarkOversubscribed(b *testing.B) {
	for _, ranks := range []int{64, 256, 1024} {
		cfg := pgas.Config{Ranks: ranks, SegmentBytes: pgas.MinSegmentBytes + 256<<10}
		run := func(b *testing.B, op func(ctx context.Context, r *pgas.Rank, dst, src []int64) error) {
			runCollCfg(b, cfg, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				src, dst := []int64{int64(r.ID())}, make([]int64, ranks)
				return func() error { return op(ctx, r, dst, src) }, nil
			})
		}
		b.Run(fmt.Sprintf("broadcast/ranks=%d", ranks), func(b *testing.B) {
			run(b, func(ctx context.Context, r *pgas.Rank, dst, src []int64) error {
				return coll.Broadcast(ctx, r.World(), coll.Private(dst[:1]), coll.Private(src), 1)
			})
		})
		b.Run(fmt.Sprintf("allreduce/ranks=%d", ranks), func(b *testing.B) {
			run(b, func(ctx context.Context, r *pgas.Rank, dst, src []int64) error {
				return coll.Allreduce(ctx, r.World(), coll.Private(dst[:1]), coll.Private(src), 1, coll.Add[int64]())
			})
		})
		if ranks <= 256 {
			b.Run(fmt.Sprintf("allgather/ranks=%d", ranks), func(b *testing.B) {
				run(b, func(ctx context.Context, r *pgas.Rank, dst, src []int64) error {
					return coll.Allgather(ctx, r.World(), coll.Private(dst), coll.Private(src), 1)
				})
			})
		}
	}
}
