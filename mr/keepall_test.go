package mr_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// TestKeepAllOrder: with every value kept, a key's values come in the order
// (input index, emit order) whatever the rank count, distribution and
// gather mode.
func TestKeepAllOrder(t *testing.T) {
	ls := lines(40)
	// Oracle: for each word, "line.position" of every occurrence in order.
	occ := map[string][]string{}
	for i, l := range ls {
		for j, w := range strings.Fields(l) {
			occ[w] = append(occ[w], fmt.Sprintf("%d.%d", i, j))
		}
	}
	var want strings.Builder
	for _, w := range sortedKeys(occ) {
		fmt.Fprintf(&want, "%s %v\n", w, occ[w])
	}
	for _, ranks := range []int{1, 3, 8} {
		for _, dist := range []distrib.Kind{distrib.Block, distrib.Cyclic, distrib.Balanced} {
			for _, g := range []reduce.Gather{reduce.GatherAll, reduce.GatherRoot} {
				for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
					c := config{ranks: ranks, dist: dist, gather: g, transfer: tr}
					t.Run(c.String(), func(t *testing.T) {
						got := collect(t, c, func(ctx context.Context, r *pgas.Rank) (mr.Result[string], error) {
							st, err := reduce.NewHashStore[string, string](reduce.KeepAll[string]())
							if err != nil {
								return mr.Result[string]{}, err
							}
							type line struct {
								i int
								s string
							}
							in := make([]line, len(ls))
							for i, l := range ls {
								in[i] = line{i, l}
							}
							if _, err := mr.ApplyMap(ctx, r, mr.Slice(in), func(ctx context.Context, l line, emit func(string, string)) error {
								for j, w := range strings.Fields(l.s) {
									emit(w, fmt.Sprintf("%d.%d", l.i, j))
								}
								return nil
							}, st, mr.WithDistribution(dist)); err != nil {
								return mr.Result[string]{}, err
							}
							return mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, string]) (string, error) {
								var b strings.Builder
								for i := range p.Len() {
									fmt.Fprintf(&b, "%s %v\n", p.Keys[i], p.Values(i))
								}
								return b.String(), nil
							}, mr.Gather(g), mr.WithTransfer(tr))
						})
						if got != want.String() {
							t.Fatalf("got\n%s\nwant\n%s", got, want.String())
						}
					})
				}
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}
