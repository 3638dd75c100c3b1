package coll_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// TestSharedChunksOutsideTeam: shared arrays span every rank, so a team's
// shared source may live on a non-member; the chunk must still move.
func TestSharedChunksOutsideTeam(t *testing.T) {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int32](ctx, r, 16, 4) // rank q owns [4q, 4q+4)
		if err != nil {
			return err
		}
		for g, blk := range a.MyBlocks() {
			for j := range blk {
				blk[j] = int32(g) + int32(j)
			}
		}
		tm, err := r.NewTeam(ctx, []int{1, 3})
		if err != nil {
			return err
		}
		if tm != nil {
			// The root's area is elements [0, 4) on rank 0, a non-member;
			// member m's chunk is 2 elements at 8 + 2m, on rank 2, also
			// not a member.
			if err := coll.Scatter(ctx, tm, coll.Shared(a, 8), coll.Shared(a, 0), 2); err != nil {
				return err
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		got := make([]int32, 4)
		if err := a.GetRange(ctx, got, 8); err != nil {
			return err
		}
		if fmt.Sprint(got) != "[0 1 2 3]" {
			return fmt.Errorf("a[8:12] = %v; want [0 1 2 3]", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
