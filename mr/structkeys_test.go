package mr_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// bigram is a struct key: no codec and no compare function are written
// for it (reduce.NewEncodedHashStore, the default msgpack codec).
type bigram struct{ First, Second string }

// TestStructKeys: a bigram count with struct keys gives the oracle's
// counts at 1, 2 and 3 ranks under every gather mode, with and without
// node-level combining, and the root reduces them in the store's order
// (of the keys' encoded bytes).
func TestStructKeys(t *testing.T) {
	lines := []string{
		"the cat sat on the mat", "the dog sat on the cat", "a cat and a dog",
		"on the mat the cat", "", "x", "the the the",
	}
	want := map[bigram]int64{}
	for _, l := range lines {
		w := strings.Fields(l)
		for i := 1; i < len(w); i++ {
			want[bigram{w[i-1], w[i]}]++
		}
	}
	for _, n := range []int{1, 2, 3} {
		for _, g := range []reduce.Gather{reduce.GatherRoot, reduce.GatherAll, reduce.GatherPartitioned} {
			for _, node := range []reduce.NodeCombine{reduce.NodeOff, reduce.NodeOn} {
				t.Run(fmt.Sprintf("n=%d/%v/node=%v", n, g, node), func(t *testing.T) {
					ro := []mr.ReduceOption{mr.Gather(g), mr.WithNodeCombine(node)}
					if g == reduce.GatherPartitioned {
						ro = append(ro, mr.Merge())
					}
					var got map[bigram]int64
					var order []bigram
					err := pgas.Run(t.Context(), pgas.Config{Ranks: n, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
						st, err := reduce.NewEncodedHashStore[bigram, int64](reduce.Sum[int64]())
						if err != nil {
							return err
						}
						_, err = mr.ApplyMap(ctx, r, mr.Slice(lines), func(ctx context.Context, l string, emit func(bigram, int64)) error {
							w := strings.Fields(l)
							for i := 1; i < len(w); i++ {
								emit(bigram{w[i-1], w[i]}, 1)
							}
							return nil
						}, st, mr.WithReduce(ro...))
						if err != nil {
							return err
						}
						res, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[bigram, int64]) ([]bigram, error) {
							if r.ID() == 0 {
								got = map[bigram]int64{}
								for i, k := range p.Keys {
									got[k] = p.Value(i)
									if i > 0 && st.Compare(p.Keys[i-1], k) >= 0 {
										return nil, fmt.Errorf("keys %v, %v out of the store's order", p.Keys[i-1], k)
									}
								}
							}
							return p.Keys, nil
						}, ro...)
						if err == nil && res.OK && r.ID() == 0 {
							order = res.Value
						}
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
					if !maps.Equal(got, want) {
						t.Fatalf("got %v, want %v", got, want)
					}
					if len(order) != len(want) {
						t.Fatalf("root reduced %d keys, want %d", len(order), len(want))
					}
				})
			}
		}
	}
}
