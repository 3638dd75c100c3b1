package coll_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/coll/colltest"
)

// TestVector runs the vector checks of the conformance suite at several
// job sizes and node shapes.
func TestVector(t *testing.T) {
	var checks []colltest.Check
	for _, c := range colltest.Checks() {
		if strings.HasPrefix(c.Name, "vector-") {
			checks = append(checks, c)
		}
	}
	if len(checks) == 0 {
		t.Fatal("no vector- checks registered")
	}
	cfgs := []pgas.Config{
		{Ranks: 1},
		{Ranks: 2},
		{Ranks: 3, RanksPerNode: 2},
		{Ranks: 5, NoCheck: true},
		{Ranks: 8, RanksPerNode: 2},
	}
	for _, cfg := range cfgs {
		cfg.SyncTimeout = time.Minute
		for _, c := range checks {
			t.Run(fmt.Sprintf("ranks=%d,perNode=%d,nocheck=%v/%s", cfg.Ranks, cfg.RanksPerNode, cfg.NoCheck, c.Name), func(t *testing.T) {
				if cfg.Ranks < c.MinRanks {
					t.Skipf("needs %d ranks", c.MinRanks)
				}
				if err := pgas.Run(t.Context(), cfg, c.Run); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// expectPanic runs fn on ranks ranks and wants the job to fail with a
// panic whose message contains want.
func expectPanic(t *testing.T, ranks int, want string, fn func(ctx context.Context, r *pgas.Rank) error) {
	t.Helper()
	cfg := pgas.Config{Ranks: ranks, SyncTimeout: 20 * time.Second, ShutdownTimeout: 10 * time.Second}
	err := pgas.Run(t.Context(), cfg, fn)
	var pe *pgas.PanicError
	if err == nil || !errors.As(err, &pe) {
		t.Fatalf("want a panic containing %q, got %v", want, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("want a panic containing %q, got %v", want, err)
	}
}

func TestVectorPanics(t *testing.T) {
	priv := func(n int) coll.Buf[int64] { return coll.Private(make([]int64, n)) }
	// arr allocates a world array of 16 elements per rank in blocks of 16.
	arr := func(ctx context.Context, r *pgas.Rank) *pgas.Array[int64] {
		a, err := pgas.AllAllocArray[int64](ctx, r, int64(16*r.N()), 16)
		if err != nil {
			panic(err)
		}
		return a
	}
	cases := []struct {
		name  string
		ranks int
		want  string
		fn    func(ctx context.Context, r *pgas.Rank) error
	}{
		{"scatterv-counts-length", 2, "ScatterV: counts has 1 entries, want 2", func(ctx context.Context, r *pgas.Rank) error {
			return coll.ScatterV(ctx, r.World(), priv(4), priv(4), []int{1}, nil, nil)
		}},
		{"gatherv-negative-count", 2, "GatherV: counts[1] = -1 is negative", func(ctx context.Context, r *pgas.Rank) error {
			return coll.GatherV(ctx, r.World(), priv(4), priv(4), []int{1, -1}, nil, nil)
		}},
		{"broadcastv-negative-displ", 2, "BroadcastV: ddispls[0] = -2 is negative", func(ctx context.Context, r *pgas.Rank) error {
			return coll.BroadcastV(ctx, r.World(), priv(4), priv(4), 1, []int{-2, 0})
		}},
		{"exchangev-matrix-length", 2, "ExchangeV: counts has 2 entries, want 4", func(ctx context.Context, r *pgas.Rank) error {
			return coll.ExchangeV(ctx, r.World(), priv(4), priv(4), []int{1, 1}, nil, nil)
		}},
		{"exchangev-overlap", 3, "ExchangeV: destination chunks [1,3) and [2,4) of rank 1's private destination overlap", func(ctx context.Context, r *pgas.Rank) error {
			counts := []int{0, 2, 0, 0, 0, 0, 0, 2, 0}
			dd := []int{0, 1, 0, 0, 0, 0, 0, 2, 0}
			return coll.ExchangeV(ctx, r.World(), priv(8), priv(8), counts, nil, dd)
		}},
		{"exchangev-shared-nil-displs", 2, "a shared source needs explicit sdispls", func(ctx context.Context, r *pgas.Rank) error {
			return coll.ExchangeV(ctx, r.World(), priv(4), coll.Shared(arr(ctx, r), 0), []int{1, 1, 1, 1}, nil, nil)
		}},
		{"permutev-not-permutation", 3, "is not a permutation", func(ctx context.Context, r *pgas.Rank) error {
			return coll.PermuteV(ctx, r.World(), priv(4), priv(4), []int{0, 0, 1}, []int{1, 1, 1}, nil)
		}},
		{"permutev-block", 2, "does not fit in its source block", func(ctx context.Context, r *pgas.Rank) error {
			a := arr(ctx, r)
			return coll.PermuteV(ctx, r.World(), coll.Shared(a, 0), coll.Shared(a, 0), []int{1, 0}, []int{4, 4}, []int{14, 16})
		}},
		{"vectorcopy-overlap", 2, "VectorCopy: destination chunks [3,6) and [5,6) of the shared destination", func(ctx context.Context, r *pgas.Rank) error {
			a := arr(ctx, r)
			return coll.VectorCopy(ctx, r.World(), coll.Shared(a, 0), coll.Shared(a, 0), []coll.Copy{{Src: 20, Dst: 3, N: 3}, {Src: 0, Dst: 5, N: 1}})
		}},
		{"vectorcopy-private-rank", 2, "copy 0's DstRank is team id 2, not in [0,2)", func(ctx context.Context, r *pgas.Rank) error {
			return coll.VectorCopy(ctx, r.World(), priv(4), priv(4), []coll.Copy{{N: 1, DstRank: 2}})
		}},
		{"allgatherv-shared-outside", 2, "shared destination elements [32,34) outside array of 32", func(ctx context.Context, r *pgas.Rank) error {
			return coll.AllgatherV(ctx, r.World(), coll.Shared(arr(ctx, r), 0), priv(2), []int{2, 2}, nil, []int{0, 30})
		}},
		{"allgatherv-private-too-short", 2, "rank 1's private destination buffer has 3 elements, needs [2,4)", func(ctx context.Context, r *pgas.Rank) error {
			return coll.AllgatherV(ctx, r.World(), priv(4-r.ID()), priv(2), []int{2, 2}, nil, nil)
		}},
		{"localdispl-outside", 2, "LocalDispl: offset 17 outside rank 1's partition of 16 elements", func(ctx context.Context, r *pgas.Rank) error {
			coll.LocalDispl(coll.Shared(arr(ctx, r), 0), 1, 17)
			return nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expectPanic(t, c.ranks, c.want, c.fn) })
	}
}

// ExampleAllgatherV_raw is the _v_raw form: variable-size records moved as
// bytes, as UPC-MR's reduce phase does.
func ExampleAllgatherV_raw() {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
		w := r.World()
		// Rank p has p+1 records "p:k".
		var data []byte
		var lens []int
		for k := range r.ID() + 1 {
			rec := fmt.Sprintf("%d:%d", r.ID(), k*k*100)
			data = append(data, rec...)
			lens = append(lens, len(rec))
		}
		// Everyone learns the counts (single-valued arguments) first.
		nrec, nbytes := make([]int, r.N()), make([]int, r.N())
		if err := coll.Allgather(ctx, w, coll.Private(nrec), coll.Private([]int{len(lens)}), 1); err != nil {
			return err
		}
		if err := coll.Allgather(ctx, w, coll.Private(nbytes), coll.Private([]int{len(data)}), 1); err != nil {
			return err
		}
		total := func(c []int) (s int) {
			for _, v := range c {
				s += v
			}
			return s
		}
		allLens := make([]int, total(nrec))
		if err := coll.AllgatherV(ctx, w, coll.Private(allLens), coll.Private(lens), nrec, nil, nil); err != nil {
			return err
		}
		all := make([]byte, total(nbytes))
		if err := coll.AllgatherV(ctx, w, coll.Private(all), coll.Private(data), nbytes, nil, nil); err != nil {
			return err
		}
		if r.ID() == 0 {
			for _, l := range allLens {
				fmt.Printf("%s ", all[:l])
				all = all[l:]
			}
			fmt.Println()
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: 0:0 1:0 1:100 2:0 2:100 2:400
}
