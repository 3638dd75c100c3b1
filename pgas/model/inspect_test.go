package model_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/model"
)

// TestInspectByHand: shared [2] x[10] over 3 ranks, ranks 0 and 1 on node
// 0, rank 2 on node 1. Blocks: 0,3 on rank 0; 1,4 on rank 1; 2 on rank 2.
func TestInspectByHand(t *testing.T) {
	lay := pgas.NewLayout(10, 2, 3, 0)
	cols := [][]int64{
		{2, 3, 2, 4, 0, 9}, // rank 0 (rows 0,1,6,7)
		{0, 0, 5},          // rank 1 (rows 2,3,8,9)
		{1, 6, 7, 7, 4},    // rank 2 (rows 4,5)
	}
	want := []model.RankCounts{
		{Rank: 0, Node: 0, Rows: 4, Indv: model.Classes{Local: 4, Remote: 1},
			Blocks: model.Classes{Local: 4, Remote: 1}, OwnBlocks: 2, BlockElems: model.Classes{Local: 8, Remote: 2},
			Send: model.Classes{Local: 1, Remote: 3}, SendMsgs: model.Classes{Local: 1, Remote: 1}, Recv: model.Classes{Local: 3, Remote: 1}},
		{Rank: 1, Node: 0, Rows: 4, Indv: model.Classes{Local: 2, Remote: 1},
			Blocks: model.Classes{Local: 3, Remote: 1}, OwnBlocks: 2, BlockElems: model.Classes{Local: 6, Remote: 2},
			Send: model.Classes{Local: 3}, SendMsgs: model.Classes{Local: 1}, Recv: model.Classes{Local: 1, Remote: 1}},
		{Rank: 2, Node: 1, Rows: 2, Indv: model.Classes{Remote: 4},
			Blocks: model.Classes{Local: 1, Remote: 2}, OwnBlocks: 1, BlockElems: model.Classes{Local: 2, Remote: 4},
			Send: model.Classes{Remote: 2}, SendMsgs: model.Classes{Remote: 2}, Recv: model.Classes{Remote: 3}},
	}
	got, err := model.Inspect(lay, 2, cols)
	if err != nil {
		t.Fatal(err)
	}
	for q := range want {
		if !reflect.DeepEqual(got[q], want[q]) {
			t.Errorf("Inspect rank %d = %+v\nwant %+v", q, got[q], want[q])
		}
	}
}

func TestInspectErrors(t *testing.T) {
	lay := pgas.NewLayout(10, 2, 2, 0)
	if _, err := model.Inspect(lay, 0, [][]int64{{1}}); err == nil || !strings.Contains(err.Error(), "1 column lists for 2 ranks") {
		t.Errorf("Inspect with 1 list for 2 ranks: %v", err)
	}
	if _, err := model.Inspect(lay, 0, [][]int64{{1}, {3, 10}}); err == nil || !strings.Contains(err.Error(), "column 10") {
		t.Errorf("Inspect with column 10 of 10: %v", err)
	}
	if _, err := model.Inspect(lay, 0, [][]int64{{-1}, {3}}); err == nil || !strings.Contains(err.Error(), "column -1") {
		t.Errorf("Inspect with column -1: %v", err)
	}
}

// randomCols gives each rank rnz columns per owned row, mostly near the
// row and some uniform, like internal/spmv's synthetic matrix.
func randomCols(lay pgas.Layout, rnz int, far float64, seed uint64) [][]int64 {
	cols := make([][]int64, lay.Ranks)
	for q := range lay.Ranks {
		rng := rand.New(rand.NewPCG(seed, uint64(q)))
		for li := range lay.LocalLen(q) {
			i := lay.GlobalIndex(q, li)
			for k := range rnz {
				j := (i + int64(k-rnz/2) + lay.N) % lay.N
				if rng.Float64() < far {
					j = rng.Int64N(lay.N)
				}
				cols[q] = append(cols[q], j)
			}
		}
	}
	return cols
}

// TestInspectAllMatchesInspect: the collective inspector gives every rank
// what the sequential one gives; its counts agree with pgas.GatherPlan's
// inspector (v3) and with the traffic pgas.Stats counts for v1's element
// gets; and what is sent equals what is received, class by class.
func TestInspectAllMatchesInspect(t *testing.T) {
	for _, tc := range []struct {
		n, blk       int64
		ranks, perNd int
		far          float64
	}{
		{97, 8, 2, 0, 0.1},
		{97, 8, 2, 1, 0.3},
		{200, 7, 4, 2, 0.2},
		{50, 64, 3, 2, 0.5}, // fewer blocks than ranks
		{300, 10, 5, 2, 0},
	} {
		name := fmt.Sprintf("n=%d/blk=%d/ranks=%d/perNode=%d/far=%g", tc.n, tc.blk, tc.ranks, tc.perNd, tc.far)
		t.Run(name, func(t *testing.T) {
			lay := pgas.NewLayout(tc.n, tc.blk, tc.ranks, 0)
			cols := randomCols(lay, 6, tc.far, 42)
			want, err := model.Inspect(lay, tc.perNd, cols)
			if err != nil {
				t.Fatal(err)
			}
			checkBalance(t, want)
			err = pgas.Run(context.Background(), pgas.Config{Ranks: tc.ranks, RanksPerNode: tc.perNd}, func(ctx context.Context, r *pgas.Rank) error {
				x, err := pgas.AllAllocArray[float64](ctx, r, tc.n, tc.blk)
				if err != nil {
					return err
				}
				mine := cols[r.ID()]
				got, err := model.InspectAll(ctx, r, x.Layout(), mine)
				if err != nil {
					return err
				}
				if !reflect.DeepEqual(got, want) {
					return fmt.Errorf("InspectAll on rank %d = %+v; Inspect = %+v", r.ID(), got, want)
				}
				c := got[r.ID()]
				plan, err := pgas.NewGatherPlan(ctx, x, mine)
				if err != nil {
					return err
				}
				ps := plan.Stats()
				if int64(ps.Unique) != c.Recv.Total() || ps.SendElems != c.Send.Total() || int64(ps.SendPeers) != c.SendMsgs.Total() ||
					int64(ps.Indices-ps.Local) != c.Indv.Total() {
					return fmt.Errorf("rank %d: GatherPlan.Stats() = %+v; counts %+v", r.ID(), ps, c)
				}
				r.ResetStats()
				for _, g := range mine { // v1's element gets
					if _, err := x.Get(ctx, g); err != nil {
						return err
					}
				}
				if got := r.Stats().Remote[pgas.OpGet]; got != c.Indv.Total() {
					return fmt.Errorf("rank %d: v1 made %d remote gets; Indv = %+v", r.ID(), got, c.Indv)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
}

func checkBalance(t *testing.T, cs []model.RankCounts) {
	t.Helper()
	var send, recv model.Classes
	for _, c := range cs {
		send.Local += c.Send.Local
		send.Remote += c.Send.Remote
		recv.Local += c.Recv.Local
		recv.Remote += c.Recv.Remote
		if c.Blocks.Local < c.OwnBlocks {
			t.Errorf("rank %d: %d local blocks < %d own", c.Rank, c.Blocks.Local, c.OwnBlocks)
		}
	}
	if send != recv {
		t.Errorf("values sent %+v != received %+v", send, recv)
	}
}
