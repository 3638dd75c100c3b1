package spmv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// BenchmarkSpMV compares the strategies of seeds/000 on a synthetic EllPack
// matrix with 16 off-diagonals per row. One op is one step y = Dx + Ax.
// On inproc there is no slow remote path, so expect v3 ≈ v1 > v2 (the
// paper's one-node column), with naive far behind.
func BenchmarkSpMV(b *testing.B) {
	p := Params{N: 1 << 16, RNZ: 16, Far: 0.05, Seed: 1}
	for _, ranks := range []int{2, 4} {
		for s := Naive; s <= V3; s++ {
			b.Run(fmt.Sprintf("ranks=%d/n=%d/%v", ranks, p.N, s), func(b *testing.B) {
				benchSteps(b, pgas.Config{Ranks: ranks, SegmentBytes: 64 << 20}, p, s)
			})
		}
		b.Run(fmt.Sprintf("ranks=%d/n=%d/v1+cache", ranks, p.N), func(b *testing.B) {
			benchSteps(b, pgas.Config{Ranks: ranks, SegmentBytes: 64 << 20, Cache: pgas.CacheConfig{Lines: pgas.DefaultCacheLines}}, p, V1)
		})
	}
}

// BenchmarkSequential is one step on one core without the runtime, for
// scale.
func BenchmarkSequential(b *testing.B) {
	p := Params{N: 1 << 16, RNZ: 16, Far: 0.05, Seed: 1}
	b.SetBytes(p.N * (int64(p.RNZ)*16 + 24))
	m := NewMatrix(p)
	x := make([]float64, p.N)
	y := make([]float64, p.N)
	for i := range x {
		x[i] = X0(int64(i))
	}
	for b.Loop() {
		m.Mul(y, x)
	}
}

// BenchmarkSpMVCluster runs the strategies on an emulated cluster of 2
// nodes of 2 ranks, whose inter-node link has a 5 µs latency and 5 GB/s
// (wrap.NewNodeLatency; within a node the ranks share memory): the shape
// of seeds/000 Table 3's multi-node rows, where v1's element-wise remote
// gets pay the network on every access and v2 and v3 move whole blocks
// or condensed messages.
func BenchmarkSpMVCluster(b *testing.B) {
	p := Params{N: 1 << 16, RNZ: 16, Far: 0.05, Seed: 1}
	link := wrap.NodeLink{RanksPerNode: 2, Latency: 5 * time.Microsecond, BytesPerSec: 5e9}
	for s := V1; s <= V3; s++ {
		b.Run(fmt.Sprintf("nodes=2x2/n=%d/%v", p.N, s), func(b *testing.B) {
			benchSteps(b, pgas.Config{Ranks: 4, RanksPerNode: 2, SegmentBytes: 64 << 20, Transport: wrap.NewNodeLatency(inproc.New(), link)}, p, s)
		})
	}
	// v1 with the remote-reference cache (MuPC's defaults): its element
	// gets of x hit lines loaded once per step.
	b.Run(fmt.Sprintf("nodes=2x2/n=%d/v1+cache", p.N), func(b *testing.B) {
		benchSteps(b, pgas.Config{Ranks: 4, RanksPerNode: 2, SegmentBytes: 64 << 20, Transport: wrap.NewNodeLatency(inproc.New(), link),
			Cache: pgas.CacheConfig{Lines: pgas.DefaultCacheLines}}, p, V1)
	})
}

// benchSteps times b.N steps of strategy s on a job of cfg, from rank 0,
// after the solver is built.
func benchSteps(b *testing.B, cfg pgas.Config, p Params, s Strategy) {
	b.SetBytes(p.N * (int64(p.RNZ)*16 + 24))
	err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		sv, err := NewSolver(ctx, r, p, 4096, s)
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
			if err := sv.Step(ctx, s); err != nil {
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

// BenchmarkRowsDot is the compute of one step on one core without the
// runtime: a rank's 262,144 rows of 2 to 16 entries (0.5% far), from a
// full-length x. Bytes are the model's D_min a row (pgas/model).
func BenchmarkRowsDot(b *testing.B) {
	for _, rnz := range []int{2, 3, 4, 8, 16} {
		const rows = 1 << 18
		n := 4 * rows
		x := make([]float64, n)
		for i := range x {
			x[i] = X0(int64(i))
		}
		al := make([]float64, rows*rnz)
		jl := make([]int64, rows*rnz)
		p := Params{N: int64(n), RNZ: rnz, Far: 0.005, Seed: 1}
		dl := make([]float64, rows)
		for i := range rows {
			dl[i] = p.Row(int64(i+rows), jl[i*rnz:(i+1)*rnz], al[i*rnz:(i+1)*rnz])
		}
		xl, yl := x[rows:2*rows], make([]float64, rows)
		b.Run(fmt.Sprintf("rnz=%d", rnz), func(b *testing.B) {
			b.SetBytes(int64(rows) * int64(rnz*16+24))
			for b.Loop() {
				rowsDot(yl, dl, xl, al, jl, x, rnz)
			}
		})
	}
}
