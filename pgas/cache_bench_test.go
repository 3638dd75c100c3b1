package pgas_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/internal/kernels"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// clusterLink is the emulated cluster of the cache benchmarks: 2 ranks
// per node, 5 us and 5 GB/s between nodes (seeds/000's Abel is 3.4 us).
var clusterLink = wrap.NodeLink{RanksPerNode: 2, Latency: 5 * time.Microsecond, BytesPerSec: 5e9}

// cacheBenchConfig is a job of ranks in-process ranks with the cache cc,
// on one node or on the emulated cluster.
func cacheBenchConfig(ranks int, cluster bool, cc pgas.CacheConfig) pgas.Config {
	cfg := pgas.Config{Ranks: ranks, SegmentBytes: 8 << 20, Cache: cc}
	if cluster {
		cfg.RanksPerNode = clusterLink.RanksPerNode
		cfg.Transport = wrap.NewNodeLatency(inproc.New(), clusterLink)
	}
	return cfg
}

// BenchmarkCacheElemGet: rank 0 reads another rank's int64s one
// Array.Get at a time (ranktest.ElemGets: stride 1 or random over 512
// KiB), cache off and on (MuPC's defaults), in-process and on the
// emulated cluster (rank 1 is then on the same node: the read goes to
// rank 2 on the other node).
func BenchmarkCacheElemGet(b *testing.B) {
	for _, cluster := range []bool{false, true} {
		for _, random := range []bool{false, true} {
			for _, cc := range []pgas.CacheConfig{{}, {Lines: pgas.DefaultCacheLines}} {
				name := fmt.Sprintf("%s/%s/cache=%v", map[bool]string{false: "inproc", true: "cluster"}[cluster],
					map[bool]string{false: "stride1", true: "random"}[random], cc.On())
				b.Run(name, func(b *testing.B) {
					ranks := 2
					if cluster {
						ranks = 4
					}
					b.SetBytes(8)
					runBench(b, cacheBenchConfig(ranks, cluster, cc), func(ctx context.Context, r *pgas.Rank) (func() error, error) {
						op, err := ranktest.ElemGets(ctx, r, random, ranks-1)
						if op == nil {
							return func() error { return nil }, err
						}
						return op, err
					})
				})
			}
		}
	}
}

// BenchmarkCacheFineMM: the naive fine-grained matrix multiply
// (kernels.FineMM, 128x128 on 4 ranks) with the cache off and on (64
// lines of 1 KiB), in-process and on the emulated cluster. Rank 0's
// rows are timed; the seed reports 73x for the cache on its cluster.
func BenchmarkCacheFineMM(b *testing.B) {
	for _, cluster := range []bool{false, true} {
		for _, cc := range []pgas.CacheConfig{{}, {Lines: 64, LineBytes: 1024}} {
			name := fmt.Sprintf("%s/cache=%v", map[bool]string{false: "inproc", true: "cluster"}[cluster], cc.On())
			b.Run(name, func(b *testing.B) {
				runBench(b, cacheBenchConfig(4, cluster, cc), func(ctx context.Context, r *pgas.Rank) (func() error, error) {
					m, err := kernels.NewFineMM(ctx, r, 128)
					if err != nil {
						return nil, err
					}
					return func() error { return m.Naive(ctx, r) }, nil
				})
			})
		}
	}
}
