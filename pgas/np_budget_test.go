package pgas_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
)

// TestNPBudget: the runtime's cost of the ranks of a node (RankCostBytes
// each) and of their pairs (PairBytes) counts against MemoryBytes beyond
// MemorySlack: a job that does not fit is Validate's *BudgetError and
// never starts a rank; one that fits in the slack keeps its whole budget
// for its data.
func TestNPBudget(t *testing.T) {
	over := pgas.Config{Ranks: 600, MemoryBytes: 16 << 10}
	err := over.Validate()
	var be *pgas.BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("Validate of 600 ranks under 16 KiB = %v, want a *BudgetError", err)
	}
	if want := pgas.RuntimeBytes(600); be.Need != want || be.Ranks != 600 || !be.AllRanks || be.MaxRanks != int((16<<10+pgas.MemorySlack)/pgas.RankCostBytes) {
		t.Errorf("BudgetError %+v, want need %d for 600 ranks and the most that fit", be, want)
	}
	for _, s := range []string{"pgas: 600 ranks need about 37.5 MiB for the runtime alone", "over the memory budget of 16 KiB"} {
		if pgas.RankCostBytes == 64<<10 && !strings.Contains(err.Error(), s) {
			t.Errorf("%q does not say %q", err, s)
		}
	}
	var started atomic.Int64
	if err := pgas.Run(t.Context(), over, func(context.Context, *pgas.Rank) error { started.Add(1); return nil }); !errors.As(err, &be) || started.Load() != 0 {
		t.Errorf("Run: %v with %d ranks started, want the BudgetError and none", err, started.Load())
	}
	// Pairs: 2,000 ranks of 64 bytes a pair need 244 MiB more.
	pairs := pgas.Config{Ranks: 2000, MemoryBytes: 256 << 20, PairBytes: 64}
	if err := pairs.Validate(); !errors.As(err, &be) || be.PairBytes != 64 || be.Need != pgas.RuntimeBytes(2000)+2000*2000*64 {
		t.Errorf("2,000 ranks of 64 B a pair under 256 MiB: %v, want a BudgetError counting the pairs", err)
	}
	if be.MaxRanks < 1 || (pgas.Config{Ranks: be.MaxRanks, MemoryBytes: 256 << 20, PairBytes: 64}).Validate() != nil ||
		(pgas.Config{Ranks: be.MaxRanks + 1, MemoryBytes: 256 << 20, PairBytes: 64}).Validate() == nil {
		t.Errorf("MaxRanks %d is not the most ranks that fit", be.MaxRanks)
	}
	// Nodes: the budget is a node's, for the ranks of a node.
	if err := (pgas.Config{Ranks: 4000, RanksPerNode: 100, MemoryBytes: 1 << 20}).Validate(); err != nil {
		t.Errorf("100 ranks a node under 1 MiB: %v, want it to fit in the slack", err)
	}
	if err := (pgas.Config{Ranks: 600, MemoryBytes: 0}).Validate(); err != nil {
		t.Errorf("no budget: %v", err)
	}
	if err := (pgas.Config{PairBytes: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "PairBytes") {
		t.Errorf("negative PairBytes: %v", err)
	}
	// Shares: a small job keeps its whole budget; one past the slack
	// leaves its data the rest.
	share := func(cfg pgas.Config) (s int64) {
		if err := pgas.Run(t.Context(), cfg, func(_ context.Context, r *pgas.Rank) error {
			if r.ID() == 0 {
				s = r.MemoryShare()
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := share(pgas.Config{Ranks: 4, MemoryBytes: 64 << 10}); s != 16<<10 {
		t.Errorf("4 ranks under 64 KiB: share %d, want 16 KiB", s)
	}
	big := pgas.Config{Ranks: 1024, MemoryBytes: 1 << 30, SegmentBytes: 1 << 20}
	if s, want := share(big), (int64(1<<30)-(pgas.RuntimeBytes(1024)-pgas.MemorySlack))/1024; s != want {
		t.Errorf("1,024 ranks under 1 GiB: share %d, want %d (the budget less the runtime past the slack, a rank)", s, want)
	}
}
