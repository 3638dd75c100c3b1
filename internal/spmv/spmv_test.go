package spmv

import (
	"context"
	"fmt"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
)

func TestStrategiesMatchOracle(t *testing.T) {
	p := Params{N: 1000, RNZ: 16, Far: 0.1, Seed: 7}
	const iters = 3
	want := Sequential(p, iters)
	for _, ranks := range []int{1, 2, 3, 4} {
		for _, blk := range []int64{64, 100} {
			for s := Naive; s <= V3; s++ {
				t.Run(fmt.Sprintf("ranks=%d/blk=%d/%v", ranks, blk, s), func(t *testing.T) {
					worst := make([]float64, ranks)
					err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
						sv, err := NewSolver(ctx, r, p, blk, s)
						if err != nil {
							return err
						}
						for range iters {
							if err := sv.Step(ctx, s); err != nil {
								return err
							}
						}
						worst[r.ID()] = sv.Compare(want)
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					for rk, w := range worst {
						// Every strategy sums in the same order as the oracle.
						if w != 0 {
							t.Errorf("rank %d: max |x - oracle| = %g; want 0", rk, w)
						}
					}
				})
			}
		}
	}
}

func TestParseStrategy(t *testing.T) {
	for s := Naive; s <= V3; s++ {
		if got, err := ParseStrategy(s.String()); err != nil || got != s {
			t.Errorf("ParseStrategy(%q) = %v, %v", s.String(), got, err)
		}
	}
	if _, err := ParseStrategy("v4"); err == nil {
		t.Error("ParseStrategy(v4) succeeded")
	}
}
