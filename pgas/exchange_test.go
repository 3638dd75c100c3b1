package pgas_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
)

// needs is the pure function that says which indices rank q needs; every
// rank can evaluate it for every q, so expectations are computed
// independently of the plan.
func needs(q int, n int64, k int, seed uint64) []int64 {
	rng := rand.New(rand.NewPCG(seed, uint64(q)))
	idx := make([]int64, k)
	for i := range idx {
		if i > 0 && rng.IntN(4) == 0 {
			idx[i] = idx[rng.IntN(i)] // a repeat
		} else {
			idx[i] = rng.Int64N(n)
		}
	}
	return idx
}

func value(g int64, iter int) float64 { return float64(g)*3 + float64(iter)/8 + 1 }

func TestGatherPlanMatchesOracle(t *testing.T) {
	for _, tc := range []struct {
		ranks int
		n     int64
		blk   int64
		k     int
	}{
		{1, 50, 7, 40},
		{2, 100, 10, 80},
		{3, 97, 5, 200},
		{4, 64, pgas.Cyclic, 30},
		{5, 1000, pgas.Star, 500},
		{8, 333, 16, 0},
		{8, 333, 16, 100},
	} {
		t.Run(fmt.Sprintf("ranks=%d/n=%d/blk=%d/k=%d", tc.ranks, tc.n, tc.blk, tc.k), func(t *testing.T) {
			err := pgas.Run(context.Background(), pgas.Config{Ranks: tc.ranks}, func(ctx context.Context, r *pgas.Rank) error {
				a, err := pgas.AllAllocArray[float64](ctx, r, tc.n, tc.blk)
				if err != nil {
					return err
				}
				idx := needs(r.ID(), tc.n, tc.k, 1)
				plan, err := pgas.NewGatherPlan(ctx, a, idx)
				if err != nil {
					return err
				}
				dst := make([]float64, len(idx))
				full := make([]float64, tc.n)
				// Several iterations without extra barriers: owners change
				// their values right after each Execute returns.
				for iter := range 5 {
					for g, blk := range a.MyBlocks() {
						for j := range blk {
							blk[j] = value(g+int64(j), iter)
						}
					}
					if iter%2 == 0 {
						err = plan.Execute(ctx, a, dst)
					} else {
						err = plan.ExecuteFull(ctx, a, full)
						for k, g := range idx {
							dst[k] = full[g]
						}
					}
					if err != nil {
						return err
					}
					for k, g := range idx {
						if want := value(g, iter); dst[k] != want {
							return fmt.Errorf("iter %d: dst[%d] (index %d) = %v; want %v", iter, k, g, dst[k], want)
						}
					}
				}
				return plan.Free(ctx)
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestGatherPlanTraffic asserts the exact per-peer messages and bytes of one
// Execute: one put to each rank that needs something from this rank,
// carrying each needed element once.
func TestGatherPlanTraffic(t *testing.T) {
	const ranks, n, k = 4, 200, 60
	err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int64](ctx, r, n, 8)
		if err != nil {
			return err
		}
		plan, err := pgas.NewGatherPlan(ctx, a, needs(r.ID(), n, k, 2))
		if err != nil {
			return err
		}
		lay := a.Layout()
		want := make(pgas.Traffic, ranks)
		for q := range ranks {
			if q == r.ID() {
				continue
			}
			uniq := map[int64]bool{}
			for _, g := range needs(q, n, k, 2) {
				if lay.Owner(g) == r.ID() {
					uniq[g] = true
				}
			}
			if len(uniq) > 0 {
				want[q] = pgas.PeerTraffic{Messages: 1, BytesSent: int64(len(uniq)) * 8}
			}
		}
		before := r.Stats()
		if err := plan.Execute(ctx, a, make([]int64, k)); err != nil {
			return err
		}
		after := r.Stats()
		for q := range ranks {
			got := after.Peers[q].Sub(before.Peers[q])
			if got != want[q] {
				return fmt.Errorf("Execute traffic to rank %d = %+v; want %+v", q, got, want[q])
			}
		}
		if after.Barriers-before.Barriers != 1 {
			return fmt.Errorf("Execute used %d barriers; want 1", after.Barriers-before.Barriers)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGatherPlanByNode: a plan's stats and a rank's traffic split by node
// class as the layout and RanksPerNode say.
func TestGatherPlanByNode(t *testing.T) {
	const ranks, per, n, k = 6, 2, 300, 80
	err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks, RanksPerNode: per}, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int64](ctx, r, n, 8)
		if err != nil {
			return err
		}
		plan, err := pgas.NewGatherPlan(ctx, a, needs(r.ID(), n, k, 3))
		if err != nil {
			return err
		}
		lay := a.Layout()
		other := func(q int) bool { return q/per != r.ID()/per }
		var want pgas.GatherPlanStats
		from := map[int]map[int64]bool{} // owner -> unique indices I need from it
		for _, g := range needs(r.ID(), n, k, 3) {
			if o := lay.Owner(g); o != r.ID() {
				if from[o] == nil {
					from[o] = map[int64]bool{}
				}
				from[o][g] = true
			}
		}
		for o, u := range from {
			if other(o) {
				want.UniqueOtherNode += len(u)
				want.RecvPeersOtherNode++
			}
		}
		for q := range ranks {
			if q == r.ID() || !other(q) {
				continue
			}
			u := map[int64]bool{}
			for _, g := range needs(q, n, k, 3) {
				if lay.Owner(g) == r.ID() {
					u[g] = true
				}
			}
			if len(u) > 0 {
				want.SendElemsOtherNode += int64(len(u))
				want.SendPeersOtherNode++
			}
		}
		got := plan.Stats()
		if got.UniqueOtherNode != want.UniqueOtherNode || got.RecvPeersOtherNode != want.RecvPeersOtherNode ||
			got.SendElemsOtherNode != want.SendElemsOtherNode || got.SendPeersOtherNode != want.SendPeersOtherNode {
			return fmt.Errorf("rank %d: plan stats %+v; want across nodes %+v", r.ID(), got, want)
		}
		if got.UniqueOtherNode > got.Unique || got.SendElemsOtherNode > got.SendElems {
			return fmt.Errorf("rank %d: more across nodes than in all: %+v", r.ID(), got)
		}
		before := r.Stats()
		if err := plan.Execute(ctx, a, make([]int64, k)); err != nil {
			return err
		}
		after := r.Stats()
		d := make(pgas.Traffic, ranks)
		for q := range ranks {
			d[q] = after.Peers[q].Sub(before.Peers[q])
		}
		same, far := d.ByNode(r.ID(), per)
		if far.BytesSent != 8*want.SendElemsOtherNode || far.Messages != int64(want.SendPeersOtherNode) {
			return fmt.Errorf("rank %d: traffic to other nodes %+v; want %d bytes in %d messages", r.ID(), far, 8*want.SendElemsOtherNode, want.SendPeersOtherNode)
		}
		if same.Add(far) != (pgas.PeerTraffic{Messages: d.Messages(), BytesSent: d.BytesSent(), BytesReceived: d.BytesReceived()}) {
			return fmt.Errorf("rank %d: the classes %+v and %+v do not add up to the total", r.ID(), same, far)
		}
		s1, f1 := after.ByNode(per)
		s0, f0 := before.ByNode(per)
		if s1.Sub(s0) != same || f1.Sub(f0) != far {
			return fmt.Errorf("rank %d: Stats.ByNode disagrees with Traffic.ByNode", r.ID())
		}
		if all, none := d.ByNode(r.ID(), 0); none != (pgas.PeerTraffic{}) || all != same.Add(far) {
			return fmt.Errorf("rank %d: with one node, %+v is across nodes", r.ID(), none)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
