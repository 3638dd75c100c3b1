package model_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/pgas/model"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }

// handProblem is 4 ranks on 2 nodes with counts chosen so that each
// equation's terms are told apart; the expected totals below are worked by
// hand from eqs. 6-18.
func handProblem() model.Problem {
	return model.Problem{RNZ: 2, ValueBytes: 8, IndexBytes: 4, Ranks: []model.RankCounts{
		{Rank: 0, Node: 0, Rows: 100, Indv: model.Classes{Local: 10, Remote: 5}, Blocks: model.Classes{Local: 3, Remote: 2}, OwnBlocks: 1,
			BlockElems: model.Classes{Local: 30, Remote: 20}, Send: model.Classes{Local: 7, Remote: 4},
			SendMsgs: model.Classes{Local: 1, Remote: 2}, Recv: model.Classes{Local: 6, Remote: 3}},
		{Rank: 1, Node: 0, Rows: 200, Blocks: model.Classes{Local: 1}, OwnBlocks: 1, BlockElems: model.Classes{Local: 10}},
		{Rank: 2, Node: 1, Rows: 50, Indv: model.Classes{Local: 1, Remote: 20}, Blocks: model.Classes{Local: 1, Remote: 1}, OwnBlocks: 1,
			BlockElems: model.Classes{Local: 10, Remote: 10}, Send: model.Classes{Local: 2, Remote: 8},
			SendMsgs: model.Classes{Local: 1, Remote: 1}, Recv: model.Classes{Local: 1, Remote: 9}},
		{Rank: 3, Node: 1, Rows: 50, Blocks: model.Classes{Local: 1}, OwnBlocks: 1, BlockElems: model.Classes{Local: 10}},
	}}
}

func TestPredictByHand(t *testing.T) {
	paper := model.Params{WPriv: 1e9, CacheLine: 64, WRem: 1e8, Tau: 1e-6}
	ext := paper
	ext.WLocal, ext.TauLocal, ext.MsgLocal, ext.MsgRemote, ext.Barrier = 2e9, 2e-7, 1e-7, 5e-7, 1e-6
	extOwn := ext
	extOwn.TauOwn = 1e-7
	pr := handProblem()
	prb := handProblem()
	prb.StepBarriers = 1
	if got := pr.Dmin(); got != 48 {
		t.Fatalf("Dmin() = %d; want 2*(8+4)+3*8 = 48", got)
	}
	tests := []struct {
		name       string
		p          model.Params
		pr         model.Problem
		s          model.Strategy
		total      float64
		rank, node int
	}{
		// v1, eq. 16: rank 2 = 50*48/1e9 + 1*64/1e9 + 20*1e-6.
		{"paper/v1", paper, pr, model.V1, 22.464e-6, 2, 1},
		// v2, eq. 17: node 0 = 200*48/1e9 + 2*30*8/1e9 + (2*1e-6 + 20*8/1e8).
		{"paper/v2", paper, pr, model.V2, 13.68e-6, 1, 0},
		// v3, eq. 18: node 0 before the barrier (11*20/1e9 + 2*7*8/1e9 +
		// 2*1e-6 + 4*8/1e8) + rank 1 after it (200*(16+48)/1e9).
		{"paper/v3", paper, pr, model.V3, 2.652e-6 + 12.8e-6, 1, 0},
		// Extensions: TauLocal replaces CL/W (eq. 9), one step barrier.
		{"ext/v1", ext, prb, model.V1, 23.6e-6, 2, 1},
		// TauOwn prices the other reads, of the rank's own elements: rank
		// 1's 200*2 of them now make it the slowest, 200*48/1e9 +
		// 400*1e-7 + the barrier.
		{"own/v1", extOwn, prb, model.V1, 9.6e-6 + 40e-6 + 1e-6, 1, 0},
		// W_local = 2e9, MsgLocal per non-own local block, MsgRemote per block.
		{"ext/v2", ext, prb, model.V2, 9.6e-6 + (0.24e-6 + 2*0.1e-6) + (2*0.5e-6 + 1.6e-6) + 1e-6, 1, 0},
		// Exchange barrier + step barrier.
		{"ext/v3", ext, prb, model.V3, (0.22e-6 + 0.056e-6 + 0.1e-6 + 2*0.5e-6 + 0.32e-6) + 12.8e-6 + 2e-6, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := model.Predict(tc.p, tc.pr, tc.s)
			if !near(got.Total, tc.total) || got.Rank != tc.rank || got.Node != tc.node {
				t.Errorf("Predict(%v) = %g s at rank %d node %d; want %g s at rank %d node %d",
					tc.s, got.Total, got.Rank, got.Node, tc.total, tc.rank, tc.node)
			}
			if !near(got.Terms.Sum(), got.Total) {
				t.Errorf("Terms %+v sum to %g; Total %g", got.Terms, got.Terms.Sum(), got.Total)
			}
			if len(got.PerRank) != len(tc.pr.Ranks) {
				t.Errorf("len(PerRank) = %d; want %d", len(got.PerRank), len(tc.pr.Ranks))
			}
		})
	}
}

// TestPredictV1Cache: hits are priced as own accesses, misses as line
// transfers by node class (worked by hand).
func TestPredictV1Cache(t *testing.T) {
	p := model.Params{WPriv: 1e9, CacheLine: 64, WRem: 1e8, Tau: 1e-6, WLocal: 2e9, MsgLocal: 1e-7, TauOwn: 1e-8, Barrier: 1e-6}
	pr := handProblem()
	pr.StepBarriers = 1
	cache := []model.CacheCounts{
		{Hits: 14, Fetches: model.Classes{Local: 1}, FetchBytes: model.Classes{Local: 1024}},
		{},
		// Rank 2: 50*48/1e9 + (100-21+18)*1e-8 + 3*(1e-6) + 3072/1e8 + 1e-6.
		{Hits: 18, Fetches: model.Classes{Remote: 3}, FetchBytes: model.Classes{Remote: 3072}},
		{},
	}
	got := model.PredictV1Cache(p, pr, cache)
	want := 2.4e-6 + 97e-8 + 3e-6 + 30.72e-6 + 1e-6
	if !near(got.Total, want) || got.Rank != 2 {
		t.Errorf("PredictV1Cache = %g s at rank %d; want %g at rank 2", got.Total, got.Rank, want)
	}
	// Rank 0: 100*48/1e9 + (200-15+14)*1e-8 + 1e-7 + 2*1024/2e9 + 1e-6.
	if r0, w := got.PerRank[0].Sum(), 4.8e-6+199e-8+1e-7+1.024e-6+1e-6; !near(r0, w) {
		t.Errorf("rank 0: %g s; want %g", r0, w)
	}
}

// TestPredictFallbacks: the zero extensions are the paper's equations.
func TestPredictFallbacks(t *testing.T) {
	p := model.Params{WPriv: 3e9, CacheLine: 128, WRem: 1e9, Tau: 2e-6}
	pr := model.Problem{RNZ: 0, ValueBytes: 8, IndexBytes: 4, Ranks: []model.RankCounts{{Indv: model.Classes{Local: 1000}}}}
	if got, want := model.PredictV1(p, pr).Total, 1000*128/3e9; !near(got, want) { // eq. 9
		t.Errorf("v1 with TauLocal = 0: %g; want 1000*CL/W_priv = %g", got, want)
	}
	pr.Ranks[0] = model.RankCounts{Blocks: model.Classes{Remote: 3}, BlockElems: model.Classes{Remote: 300}}
	if got, want := model.PredictV2(p, pr).Total, 3*2e-6+300*8/1e9; !near(got, want) { // τ as start-up
		t.Errorf("v2 with MsgRemote = 0: %g; want 3τ + 2400/W_rem = %g", got, want)
	}
}

// TestPredictSingleNodeNeedsNoRemote: with one node and no remote counts,
// an uncalibrated (zero) W_rem and τ give finite predictions.
func TestPredictSingleNodeNeedsNoRemote(t *testing.T) {
	p := model.Params{WPriv: 1e9, CacheLine: 64}
	pr := handProblem()
	for i := range pr.Ranks {
		c := &pr.Ranks[i]
		c.Node = 0
		c.Indv.Local += c.Indv.Remote
		c.Blocks.Local += c.Blocks.Remote
		c.BlockElems.Local += c.BlockElems.Remote
		c.Send.Local += c.Send.Remote
		c.SendMsgs.Local += c.SendMsgs.Remote
		c.Recv.Local += c.Recv.Remote
		c.Indv.Remote, c.Blocks.Remote, c.BlockElems.Remote, c.Send.Remote, c.SendMsgs.Remote, c.Recv.Remote = 0, 0, 0, 0, 0, 0
	}
	for _, s := range model.Strategies {
		if got := model.Predict(p, pr, s).Total; math.IsNaN(got) || math.IsInf(got, 0) || got <= 0 {
			t.Errorf("Predict(%v) on one node = %g; want finite and positive", s, got)
		}
	}
}

func TestParamsValidate(t *testing.T) {
	if err := model.PaperParams(64).Validate(); err != nil {
		t.Errorf("PaperParams(64).Validate() = %v; want nil", err)
	}
	bad := model.Params{WPriv: -1, CacheLine: 0, Tau: math.NaN(), Barrier: math.Inf(1)}
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate of a bad Params = nil; want every problem")
	}
	for _, want := range []string{"WPriv", "CacheLine", "Tau", "Barrier"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %q; want it to name %s", err, want)
		}
	}
}

func TestProblemValidate(t *testing.T) {
	if err := handProblem().Validate(); err != nil {
		t.Errorf("handProblem().Validate() = %v", err)
	}
	pr := handProblem()
	pr.Ranks[1].Rank = 7
	pr.Ranks[2].Send.Local = -1
	pr.Ranks[3].OwnBlocks = 5
	err := pr.Validate()
	if err == nil {
		t.Fatal("Validate of a bad Problem = nil")
	}
	for _, want := range []string{"Ranks[1].Rank = 7", "rank 2 has a negative count", "rank 3: OwnBlocks 5"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %q; want it to contain %q", err, want)
		}
	}
}

func TestPredictPanicsOnUnknownStrategy(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Predict(Strategy(9)) did not panic")
		}
	}()
	model.Predict(model.PaperParams(64), handProblem(), model.Strategy(9))
}

func TestParamsString(t *testing.T) {
	got := model.PaperParams(64).String()
	want := "W_priv 4.92 GB/s x16 workers, CL 64 B, W_rem 6.29 GB/s, tau 3.4µs"
	if got != want {
		t.Errorf("PaperParams(64).String() = %q; want %q", got, want)
	}
}
