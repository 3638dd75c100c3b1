package pgas_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
)

// runBench runs body on every rank of a job; rank 0 owns the timer, which
// is reset after setup returns on every rank.
func runBench(b *testing.B, cfg pgas.Config, setup func(ctx context.Context, r *pgas.Rank) (func() error, error)) {
	b.Helper()
	err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		op, err := setup(ctx, r)
		if err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == 0 {
			b.ResetTimer()
		}
		for range b.N {
			if err := op(); err != nil {
				return err
			}
		}
		if r.ID() == 0 {
			b.StopTimer()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

var sink int64

// BenchmarkPrivatisation sums a rank's own elements of a shared array three
// ways: upc_forall-style affinity iteration with element Get (naive),
// element Get over the owned indices, and indexing the privatised slice.
// seeds/000 table 2 reports 3.3x between naive and privatised UPC.
func BenchmarkPrivatisation(b *testing.B) {
	const n = 1 << 20
	for _, mode := range []string{"forall-get", "get", "local"} {
		b.Run(fmt.Sprintf("ranks=2/n=%d/%s", n, mode), func(b *testing.B) {
			b.SetBytes(n / 2 * 8)
			b.ReportAllocs()
			runBench(b, pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				a, err := pgas.AllAllocArray[int64](ctx, r, n, 4096)
				if err != nil {
					return nil, err
				}
				for i := range a.Local() {
					a.Local()[i] = int64(i)
				}
				var s int64
				switch mode {
				case "forall-get":
					return func() error {
						for i := range a.ForAll() {
							v, err := a.Get(ctx, i)
							if err != nil {
								return err
							}
							s += v
						}
						sink = s
						return nil
					}, nil
				case "get":
					return func() error {
						for g, blk := range a.MyBlocks() {
							for j := range int64(len(blk)) {
								v, err := a.Get(ctx, g+j)
								if err != nil {
									return err
								}
								s += v
							}
						}
						sink = s
						return nil
					}, nil
				default:
					return func() error {
						for _, v := range a.Local() {
							s += v
						}
						sink = s
						return nil
					}, nil
				}
			})
		})
	}
}

// BenchmarkGetRange measures a bulk get from another rank against copy()
// between private slices of the same size (the memcpy ceiling).
func BenchmarkGetRange(b *testing.B) {
	for _, size := range []int64{4 << 10, 64 << 10, 1 << 20, 16 << 20} {
		n := size / 8
		b.Run(fmt.Sprintf("size=%d/getrange", size), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			runBench(b, pgas.Config{Ranks: 2, SegmentBytes: 2*size + 1<<20}, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				a, err := pgas.AllAllocArray[int64](ctx, r, 2*n, n)
				if err != nil {
					return nil, err
				}
				dst := make([]int64, n)
				if r.ID() != 0 {
					return func() error { return nil }, nil
				}
				return func() error { return a.GetRange(ctx, dst, n) }, nil // block 1, on rank 1
			})
		})
		b.Run(fmt.Sprintf("size=%d/copy", size), func(b *testing.B) {
			b.SetBytes(size)
			src := make([]int64, n)
			dst := make([]int64, n)
			for b.Loop() {
				copy(dst, src)
			}
		})
	}
}

// BenchmarkGatherPlan measures one Execute of a plan in which every rank
// needs k random elements of a block-distributed array.
func BenchmarkGatherPlan(b *testing.B) {
	const n, k = 1 << 18, 1 << 14
	for _, ranks := range []int{2, 4} {
		b.Run(fmt.Sprintf("ranks=%d/n=%d/k=%d", ranks, n, k), func(b *testing.B) {
			b.SetBytes(k * 8)
			b.ReportAllocs()
			runBench(b, pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				a, err := pgas.AllAllocArray[float64](ctx, r, n, pgas.Star)
				if err != nil {
					return nil, err
				}
				plan, err := pgas.NewGatherPlan(ctx, a, needs(r.ID(), n, k, 3))
				if err != nil {
					return nil, err
				}
				dst := make([]float64, k)
				return func() error { return plan.Execute(ctx, a, dst) }, nil
			})
		})
	}
}

// BenchmarkBarrierOversubscribed times one barrier of an in-process job
// with far more ranks than cores, the runtime's (world) and that of the
// team of every rank, which the collectives use. Waiting ranks must block
// or back off, not spin, so that a barrier of 1,024 goroutine ranks on 2
// cores costs microseconds to milliseconds (issue 18).
func BenchmarkBarrierOversubscribed(b *testing.B) {
	for _, ranks := range []int{2, 64, 256, 1024} {
		cfg := pgas.Config{Ranks: ranks, SegmentBytes: pgas.MinSegmentBytes + 64<<10}
		b.Run(fmt.Sprintf("world/ranks=%d", ranks), func(b *testing.B) {
			runBench(b, cfg, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				return func() error { return r.Barrier(ctx) }, nil
			})
		})
		b.Run(fmt.Sprintf("team/ranks=%d", ranks), func(b *testing.B) {
			runBench(b, cfg, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				t := r.World()
				return func() error { return t.Barrier(ctx) }, nil
			})
		})
	}
}
