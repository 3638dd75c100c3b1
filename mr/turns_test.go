package mr_test

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"testing"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// TestMapTurns: on a process hosting more ranks than turns, at most
// Config.Turns ranks run a map at once (element-based and array-based),
// the maps' waits (a barrier inside an array map) do not deadlock, and
// the result is the oracle's, with the node's stripes (a CountTable
// handing its keys over, as wordcount's does) and without turns.
func TestMapTurns(t *testing.T) {
	in := budgetWords()
	want := map[string]int64{}
	for _, ws := range in {
		for _, w := range ws {
			want[w]++
		}
	}
	for _, turns := range []int{-1, 1, 3} {
		for _, n := range []int{4, 16} {
			t.Run(fmt.Sprintf("turns=%d/n=%d", turns, n), func(t *testing.T) {
				var inside, most atomic.Int64
				enter := func() {
					v := inside.Add(1)
					for m := most.Load(); v > m && !most.CompareAndSwap(m, v); m = most.Load() {
					}
				}
				cfg := pgas.Config{Ranks: n, Turns: turns}
				var got map[string]int64
				err := pgas.Run(t.Context(), cfg, func(ctx context.Context, r *pgas.Rank) error {
					st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
					if err != nil {
						return err
					}
					ro := mr.WithReduce(mr.Gather(reduce.GatherRoot), mr.WithNodeCombine(reduce.NodeOn), mr.WithNodeBudget(n*reduce.MinRankBudget))
					c := reduce.NewCountTable()
					_, err = mr.ApplyMapArray(ctx, r, mr.Slice(in), func(ctx context.Context, s mr.Share[[]string], emit func(string, int64)) error {
						enter()
						defer inside.Add(-1)
						handed := c.HandOver(st)
						for i := range s.Elements() {
							for _, w := range in[i] {
								c.Add([]byte(w))
							}
							if err := handed(); err != nil {
								return err
							}
						}
						inside.Add(-1) // a wait for every rank inside the map
						err := s.Rank.Barrier(ctx)
						enter()
						if err != nil {
							return err
						}
						return st.AddPairs(c.Pairs())
					}, st, ro)
					if err != nil {
						return err
					}
					// An element map emitting nothing: only the turns count.
					_, err = mr.ApplyMap(ctx, r, mr.Slice(in), func(ctx context.Context, ws []string, emit func(string, int64)) error {
						enter()
						defer inside.Add(-1)
						return nil
					}, st)
					if err != nil {
						return err
					}
					res, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (map[string]int64, error) {
						m := map[string]int64{}
						for i, k := range p.Keys {
							m[k] = p.Value(i)
						}
						return m, nil
					}, mr.Gather(reduce.GatherRoot), mr.WithNodeCombine(reduce.NodeOn), mr.WithNodeBudget(n*reduce.MinRankBudget))
					if err == nil && r.ID() == 0 {
						got = res.Value
					}
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				if !maps.Equal(got, want) {
					t.Errorf("%d keys, want %d (or counts differ)", len(got), len(want))
				}
				if m := most.Load(); turns > 0 && m > int64(turns) {
					t.Errorf("%d ranks mapped at once, want at most %d", m, turns)
				}
			})
		}
	}
}
