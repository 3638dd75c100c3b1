package coll_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

func TestSmokeBroadcastAllgather(t *testing.T) {
	for _, ranks := range []int{1, 2, 3, 5, 8} {
		for _, algo := range []coll.Algo{coll.Flat, coll.Binomial, coll.BinomialFlat} {
			t.Run(fmt.Sprintf("ranks=%d/%v", ranks, algo), func(t *testing.T) {
				err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks, RanksPerNode: 2}, func(ctx context.Context, r *pgas.Rank) error {
					w := r.World()
					const n = 5
					for root := range ranks {
						src := make([]int64, n)
						if r.ID() == root {
							for i := range src {
								src[i] = int64(100*root + i)
							}
						}
						dst := make([]int64, n)
						if err := coll.Broadcast(ctx, w, coll.Private(dst), coll.Private(src), n, coll.Root(root), coll.WithAlgo(algo)); err != nil {
							return err
						}
						for i, v := range dst {
							if v != int64(100*root+i) {
								return fmt.Errorf("root %d: dst[%d] = %d", root, i, v)
							}
						}
						a, err := pgas.AllAllocArray[int64](ctx, r, int64(n*ranks), n)
						if err != nil {
							return err
						}
						if err := coll.Broadcast(ctx, w, coll.Shared(a, 0), coll.Private(src), n, coll.Root(root), coll.WithAlgo(algo)); err != nil {
							return err
						}
						got := make([]int64, n*ranks)
						if err := a.GetRange(ctx, got, 0); err != nil {
							return err
						}
						for i, v := range got {
							if v != int64(100*root+i%n) {
								return fmt.Errorf("shared root %d: a[%d] = %d", root, i, v)
							}
						}
						if err := a.AllFree(ctx); err != nil {
							return err
						}
					}
					mine := []int32{int32(r.ID()), int32(r.ID() * 10)}
					all := make([]int32, 2*ranks)
					if err := coll.Allgather(ctx, w, coll.Private(all), coll.Private(mine), 2); err != nil {
						return err
					}
					for q := range ranks {
						if all[2*q] != int32(q) || all[2*q+1] != int32(q*10) {
							return fmt.Errorf("allgather: %v", all)
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
