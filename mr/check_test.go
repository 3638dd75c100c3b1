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

// TestCheckInputMismatch: by default (no Config.NoCheck), ranks passing different
// input lists to ApplyMap get an error at once.
func TestCheckInputMismatch(t *testing.T) {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
		ls := []string{"a b", "c"}
		if r.ID() == 2 {
			ls = []string{"a b", "d"} // same length, different contents
		}
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		_, err = mr.ApplyMap(ctx, r, mr.Slice(ls), wordCount, st)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "collective mismatch") || !strings.Contains(err.Error(), "rank 2 called ApplyMap") {
		t.Fatalf("err = %v; want a mismatch naming rank 2", err)
	}
}

// TestCustomPlan: a user-defined plan distributes the elements.
func TestCustomPlan(t *testing.T) {
	ls := lines(10)
	want := wordOracle(ls)
	owners := []int{2, 2, 2, 2, 2, 0, 0, 1, 1, 1}
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
		p, err := distrib.NewCustom(owners, r.N())
		if err != nil {
			return err
		}
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		ms, err := mr.ApplyMap(ctx, r, mr.Slice(ls), wordCount, st, mr.WithPlan(p))
		if err != nil {
			return err
		}
		if wantN := p.Count(r.ID()); ms.Elements != wantN {
			return fmt.Errorf("mapped %d elements; plan gives %d", ms.Elements, wantN)
		}
		res, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (string, error) {
			var b strings.Builder
			for i := range p.Len() {
				fmt.Fprintf(&b, "%s %d\n", p.Keys[i], p.Value(i))
			}
			return b.String(), nil
		}, mr.Gather(reduce.GatherAll))
		if err != nil {
			return err
		}
		if res.Value != want {
			return fmt.Errorf("result differs from the oracle")
		}
		bad, _ := distrib.NewCustom(owners[:9], r.N())
		if _, err := mr.ApplyMap(ctx, r, mr.Slice(ls), wordCount, st, mr.WithPlan(bad)); err == nil {
			return fmt.Errorf("a plan of the wrong length was accepted")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
