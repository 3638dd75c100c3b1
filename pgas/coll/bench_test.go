package coll_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// Benchmarks after seeds/002 §3.5: each extended collective beside a base
// version a UPC programmer would write with GetRange/PutRange and
// barriers, on 2 ranks of the in-process transport. b.SetBytes is the data
// one rank ends up with per call, so MB/s compare directly with copy().

var benchSizes = []int64{4 << 10, 64 << 10, 1 << 20, 4 << 20, 8 << 20}

func runColl(b *testing.B, ranks int, setup func(ctx context.Context, r *pgas.Rank) (func() error, error)) {
	b.Helper()
	seg := int64(0)
	for _, s := range benchSizes {
		seg = max(seg, 8*s*int64(ranks)+(16<<20))
	}
	runCollCfg(b, pgas.Config{Ranks: ranks, SegmentBytes: seg}, setup)
}

// runCollCfg runs setup's operation b.N times on every rank of a job of
// cfg, after one untimed call; rank 0 owns the timer.
func runCollCfg(b *testing.B, cfg pgas.Config, setup func(ctx context.Context, r *pgas.Rank) (func() error, error)) {
	b.Helper()
	err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		op, err := setup(ctx, r)
		if err != nil {
			return err
		}
		if err := op(); err != nil { // warm up: staging allocation
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

func BenchmarkAllgatherVPriv(b *testing.B) {
	const ranks = 2
	for _, size := range benchSizes {
		n := int(size / 8)
		b.Run(fmt.Sprintf("size=%d/extended", size), func(b *testing.B) {
			b.SetBytes(size * ranks)
			runColl(b, ranks, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				mine := make([]float64, n)
				all := make([]float64, n*ranks)
				counts := []int{n, n}
				return func() error {
					return coll.AllgatherV(ctx, r.World(), coll.Private(all), coll.Private(mine), counts, nil, nil)
				}, nil
			})
		})
		b.Run(fmt.Sprintf("size=%d/base", size), func(b *testing.B) {
			b.SetBytes(size * ranks)
			runColl(b, ranks, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				a, err := pgas.AllAllocArray[float64](ctx, r, int64(n*ranks), int64(n))
				if err != nil {
					return nil, err
				}
				mine := make([]float64, n)
				all := make([]float64, n*ranks)
				return func() error {
					if err := a.PutRange(ctx, int64(r.ID()*n), mine); err != nil {
						return err
					}
					if err := r.Barrier(ctx); err != nil {
						return err
					}
					if err := a.GetRange(ctx, all, 0); err != nil {
						return err
					}
					return r.Barrier(ctx)
				}, nil
			})
		})
		b.Run(fmt.Sprintf("size=%d/copy", size), func(b *testing.B) {
			b.SetBytes(size * ranks)
			src := make([]float64, n*ranks)
			dst := make([]float64, n*ranks)
			for b.Loop() {
				copy(dst, src)
			}
		})
	}
}

func BenchmarkBroadcastInPlace(b *testing.B) {
	const ranks = 2
	for _, size := range benchSizes {
		n := int(size / 8)
		b.Run(fmt.Sprintf("size=%d/priv", size), func(b *testing.B) {
			b.SetBytes(size)
			runColl(b, ranks, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				buf := make([]float64, n)
				return func() error { return coll.BroadcastInPlace(ctx, r.World(), coll.Private(buf), n) }, nil
			})
		})
		b.Run(fmt.Sprintf("size=%d/shared", size), func(b *testing.B) {
			b.SetBytes(size)
			runColl(b, ranks, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				a, err := pgas.AllAllocArray[float64](ctx, r, int64(n*ranks), int64(n))
				if err != nil {
					return nil, err
				}
				return func() error { return coll.BroadcastInPlace(ctx, r.World(), coll.Shared(a, 0), n) }, nil
			})
		})
		b.Run(fmt.Sprintf("size=%d/base", size), func(b *testing.B) {
			b.SetBytes(size)
			runColl(b, ranks, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				a, err := pgas.AllAllocArray[float64](ctx, r, int64(n*ranks), int64(n))
				if err != nil {
					return nil, err
				}
				return func() error {
					if err := r.Barrier(ctx); err != nil {
						return err
					}
					if r.ID() != 0 {
						if err := a.GetRange(ctx, a.Local(), 0); err != nil {
							return err
						}
					}
					return r.Barrier(ctx)
				}, nil
			})
		})
	}
}

func BenchmarkExchangeInPlace(b *testing.B) {
	const ranks = 2
	for _, size := range benchSizes {
		n := int(size / 8 / ranks) // size bytes per rank's region
		b.Run(fmt.Sprintf("size=%d/priv", size), func(b *testing.B) {
			b.SetBytes(size)
			runColl(b, ranks, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				buf := make([]float64, n*ranks)
				return func() error { return coll.ExchangeInPlace(ctx, r.World(), coll.Private(buf), n) }, nil
			})
		})
		b.Run(fmt.Sprintf("size=%d/shared", size), func(b *testing.B) {
			b.SetBytes(size)
			runColl(b, ranks, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				a, err := pgas.AllAllocArray[float64](ctx, r, int64(n*ranks*ranks), int64(n*ranks))
				if err != nil {
					return nil, err
				}
				return func() error { return coll.ExchangeInPlace(ctx, r.World(), coll.Shared(a, 0), n) }, nil
			})
		})
		b.Run(fmt.Sprintf("size=%d/base", size), func(b *testing.B) {
			b.SetBytes(size)
			runColl(b, ranks, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				a, err := pgas.AllAllocArray[float64](ctx, r, int64(n*ranks*ranks), int64(n*ranks))
				if err != nil {
					return nil, err
				}
				tmp := make([]float64, n)
				me := r.ID()
				return func() error {
					if err := r.Barrier(ctx); err != nil {
						return err
					}
					// Read what others hold for me, then write it into my
					// region after everybody has read.
					got := make([][]float64, ranks)
					for j := range ranks {
						if j == me {
							continue
						}
						got[j] = tmp
						if err := a.GetRange(ctx, got[j], int64((j*ranks+me)*n)); err != nil {
							return err
						}
					}
					if err := r.Barrier(ctx); err != nil {
						return err
					}
					for j := range ranks {
						if j != me {
							copy(a.Local()[j*n:(j+1)*n], got[j])
						}
					}
					return r.Barrier(ctx)
				}, nil
			})
		})
	}
}

func BenchmarkScatterV(b *testing.B) {
	const ranks = 2
	for _, size := range benchSizes {
		n := int(size / 8) // elements per rank
		counts := []int{n, n}
		b.Run(fmt.Sprintf("size=%d/priv", size), func(b *testing.B) {
			b.SetBytes(size)
			runColl(b, ranks, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				var src []float64
				if r.ID() == 0 {
					src = make([]float64, n*ranks)
				}
				dst := make([]float64, n)
				return func() error {
					return coll.ScatterV(ctx, r.World(), coll.Private(dst), coll.Private(src), counts, nil, nil)
				}, nil
			})
		})
		b.Run(fmt.Sprintf("size=%d/shared", size), func(b *testing.B) {
			b.SetBytes(size)
			runColl(b, ranks, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				src, err := pgas.AllAllocArray[float64](ctx, r, int64(n*ranks), pgas.Indefinite)
				if err != nil {
					return nil, err
				}
				dst, err := pgas.AllAllocArray[float64](ctx, r, int64(n*ranks), int64(n))
				if err != nil {
					return nil, err
				}
				return func() error {
					return coll.ScatterV(ctx, r.World(), coll.Shared(dst, 0), coll.Shared(src, 0), counts, nil, nil)
				}, nil
			})
		})
		b.Run(fmt.Sprintf("size=%d/base", size), func(b *testing.B) {
			b.SetBytes(size)
			runColl(b, ranks, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
				// The root puts each rank's chunk into that rank's block,
				// then everyone copies its block out after a barrier.
				tmp, err := pgas.AllAllocArray[float64](ctx, r, int64(n*ranks), int64(n))
				if err != nil {
					return nil, err
				}
				var src []float64
				if r.ID() == 0 {
					src = make([]float64, n*ranks)
				}
				dst := make([]float64, n)
				return func() error {
					if r.ID() == 0 {
						if err := tmp.PutRange(ctx, 0, src); err != nil {
							return err
						}
					}
					if err := r.Barrier(ctx); err != nil {
						return err
					}
					copy(dst, tmp.Local())
					return r.Barrier(ctx)
				}, nil
			})
		})
	}
}
