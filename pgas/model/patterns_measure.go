package model

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
)

// MeasurePatterns is collective: seeds/001 §6.4's microbenchmarks. For each
// N of sizes, every rank at once makes N reads (Array.Get), then N writes
// (Array.Put and a Fence) of each pattern on a shared float64 array, and N
// private reads and writes; the cost per access is the best of reps runs,
// averaged over ranks. Vector and Coalesce read the next rank's block;
// Baseline reads uniformly from every other rank. With one rank the remote
// patterns are left empty.
func MeasurePatterns(ctx context.Context, r *pgas.Rank, sizes []int64, reps int, seed uint64) (PatternRates, error) {
	var out PatternRates
	if len(sizes) == 0 {
		return out, nil
	}
	n, me := r.N(), r.ID()
	span := 4*slices.Max(sizes) + 8 // coalesce strides are 1..4
	x, err := pgas.AllAllocArray[float64](ctx, r, int64(n)*span, span)
	if err != nil {
		return out, err
	}
	priv := make([]float64, span)
	rng := rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, uint64(me)))
	next := (me + 1) % n
	indices := func(p Pattern, cnt int64) []int64 {
		idx := make([]int64, cnt)
		switch p {
		case Baseline:
			for i := range idx {
				q := rng.IntN(n - 1)
				if q >= me {
					q++
				}
				idx[i] = int64(q)*span + rng.Int64N(span)
			}
		case Vector:
			g := int64(next)*span + rng.Int64N(span-cnt+1)
			for i := range idx {
				idx[i] = g + int64(i)
			}
		case Coalesce:
			g := int64(next)*span + rng.Int64N(span-4*cnt+1)
			for i := range idx {
				idx[i] = g
				g += 1 + rng.Int64N(4)
			}
		case Local:
			for i := range idx {
				idx[i] = int64(me)*span + rng.Int64N(span)
			}
		case Private:
			for i := range idx {
				idx[i] = rng.Int64N(span)
			}
		}
		return idx
	}
	type key struct {
		p  Pattern
		op Op
	}
	var keys []key
	for _, op := range []Op{Read, Write} { // all reads before any write
		for p := range numPatterns {
			keys = append(keys, key{p, op})
		}
	}
	costs := make([]float64, 0, len(keys)*len(sizes))
	for _, k := range keys {
		remote := k.p == Baseline || k.p == Vector || k.p == Coalesce
		for _, cnt := range sizes {
			best := math.NaN()
			var idx []int64
			if !remote || n > 1 {
				idx = indices(k.p, cnt)
				best = math.Inf(1)
			}
			for range max(reps, 1) {
				if err := r.Barrier(ctx); err != nil {
					return out, err
				}
				if idx == nil {
					continue
				}
				t, err := accessRun(ctx, r, x, priv, k.p, k.op, idx)
				if err != nil {
					return out, err
				}
				best = min(best, t/float64(cnt))
			}
			costs = append(costs, best)
		}
	}
	all, err := allgather(ctx, r, costs)
	if err != nil {
		return out, err
	}
	if err := x.AllFree(ctx); err != nil {
		return out, err
	}
	w := len(costs)
	i := 0
	for _, k := range keys {
		var c RateCurve
		for _, cnt := range sizes {
			var sum float64
			for q := range n {
				sum += all[q*w+i]
			}
			i++
			if v := sum / float64(n); !math.IsNaN(v) {
				c = append(c, RatePoint{N: cnt, Sec: v})
			}
		}
		out.SetCurve(k.p, k.op, c)
	}
	return out, nil
}

// accessRun makes one timed run of accesses and returns its seconds.
func accessRun(ctx context.Context, r *pgas.Rank, x *pgas.Array[float64], priv []float64, p Pattern, op Op, idx []int64) (float64, error) {
	var sum float64
	t0 := time.Now()
	switch {
	case p == Private && op == Read:
		for _, i := range idx {
			sum += priv[i]
		}
	case p == Private:
		for k, i := range idx {
			priv[i] = float64(k)
		}
	case op == Read:
		for _, g := range idx {
			v, err := x.Get(ctx, g)
			if err != nil {
				return 0, fmt.Errorf("model: %v read: %w", p, err)
			}
			sum += v
		}
	default:
		for k, g := range idx {
			if err := x.Put(ctx, g, float64(k)); err != nil {
				return 0, fmt.Errorf("model: %v write: %w", p, err)
			}
		}
		if err := r.Fence(ctx); err != nil {
			return 0, fmt.Errorf("model: %v write: %w", p, err)
		}
	}
	t := time.Since(t0).Seconds()
	runtime.KeepAlive(sum)
	return t, nil
}
