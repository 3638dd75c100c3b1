package spmv

import (
	"context"
	"fmt"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
)

// TestStrategiesMatchOracle: every strategy, at every rank count and
// block size, gives the oracle's x to the bit, with 16 entries a row (the
// paper's) and with the 2, 4 and 8 that rowsDot unrolls (and 3, which it
// does not).
func TestStrategiesMatchOracle(t *testing.T) {
	const iters = 3
	for _, rnz := range []int{16, 8, 4, 3, 2} {
		p := Params{N: 1000, RNZ: rnz, Far: 0.1, Seed: 7}
		want := Sequential(p, iters)
		for _, ranks := range []int{1, 2, 3, 4} {
			for _, blk := range []int64{64, 100} {
				for s := Naive; s <= V3; s++ {
					t.Run(fmt.Sprintf("rnz=%d/ranks=%d/blk=%d/%v", rnz, ranks, blk, s), func(t *testing.T) {
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
