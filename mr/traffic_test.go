package mr_test

import (
	"context"
	"testing"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/wrap"
	"github.com/pgasmr/pgasmr/reduce"
)

// TestPartitionedMovesEachPairOnce: under GatherPartitioned every pair
// leaves its rank at most once, and at 8 ranks on uniform keys it moves at
// most 1/7 of GatherAll's bytes (without node-level combining, which
// changes what each rank holds).
func TestPartitionedMovesEachPairOnce(t *testing.T) {
	const ranks, keys = 8, 4000
	bytes := map[reduce.Gather]int64{}
	for _, g := range []reduce.Gather{reduce.GatherAll, reduce.GatherPartitioned} {
		c := wrap.NewCounting(inproc.New())
		moved := make([]int64, ranks)
		local := make([]int64, ranks)
		err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks, Transport: c}, func(ctx context.Context, r *pgas.Rank) error {
			st, err := reduce.NewHashStore[uint64, int64](reduce.Sum[int64]())
			if err != nil {
				return err
			}
			in := make([]uint64, keys)
			for i := range in {
				in[i] = uint64(i) * 2654435761
			}
			if _, err := mr.ApplyMap(ctx, r, mr.Slice(in), func(ctx context.Context, k uint64, emit func(uint64, int64)) error {
				emit(k, 1)
				return nil
			}, st); err != nil {
				return err
			}
			local[r.ID()] = int64(st.Keys())
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			if r.ID() == 0 {
				c.Reset()
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			res, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[uint64, int64]) (int, error) {
				return p.Len(), nil
			}, mr.Gather(g), mr.WithNodeCombine(reduce.NodeOff)) // the exchange alone: TestNodeCombineFewerPairs in reduce/shuffle has the node tables
			moved[r.ID()] = res.Stats.PairsMoved
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		bytes[g] = c.Total().BytesSent()
		for q := range ranks {
			limit := local[q]
			if g == reduce.GatherAll {
				limit = local[q] * (ranks - 1)
			}
			if moved[q] > limit {
				t.Errorf("%v: rank %d moved %d pairs; it holds %d", g, q, moved[q], local[q])
			}
		}
		t.Logf("%v: %d bytes", g, bytes[g])
	}
	if 7*bytes[reduce.GatherPartitioned] > bytes[reduce.GatherAll] {
		t.Errorf("partitioned moved %d bytes, all %d: more than 1/7", bytes[reduce.GatherPartitioned], bytes[reduce.GatherAll])
	}
}
