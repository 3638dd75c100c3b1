package mr_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// TestReduceKeys: an inverted index (word → the lines it is on, once
// each, ascending) with a per-key function over all values gives the
// oracle's index at 1 to 3 ranks, gathered to the root or partitioned
// and merged.
func TestReduceKeys(t *testing.T) {
	ls := lines(120)
	want := map[string][]int64{}
	for i, l := range ls {
		for _, w := range strings.Fields(l) {
			if v := want[w]; len(v) == 0 || v[len(v)-1] != int64(i) {
				want[w] = append(want[w], int64(i))
			}
		}
	}
	for _, ranks := range []int{1, 2, 3} {
		for _, opts := range [][]mr.ReduceOption{{mr.Gather(reduce.GatherRoot)}, {mr.Gather(reduce.GatherPartitioned), mr.Merge(), mr.Root(ranks - 1)}} {
			var got []mr.KV[string, []int64]
			var mu sync.Mutex
			err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
				st, err := reduce.NewHashStore[string, int64](reduce.KeepAll[int64]())
				if err != nil {
					return err
				}
				idx := make([]int64, len(ls))
				for i := range idx {
					idx[i] = int64(i)
				}
				if _, err := mr.ApplyMap(ctx, r, mr.Slice(idx), func(ctx context.Context, i int64, emit func(string, int64)) error {
					for _, w := range strings.Fields(ls[i]) {
						emit(w, i)
					}
					return nil
				}, st, mr.WithDistribution(distrib.Cyclic)); err != nil {
					return err
				}
				res, err := mr.ReduceKeys(ctx, r, st, func(ctx context.Context, w string, at []int64) ([]int64, error) {
					if !slices.IsSorted(at) {
						return nil, fmt.Errorf("values of %q not in input order: %v", w, at)
					}
					return slices.Compact(at), nil
				}, opts...)
				if res.OK {
					mu.Lock()
					got = res.Value
					mu.Unlock()
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("ranks=%d: %d keys, want %d", ranks, len(got), len(want))
			}
			for i, kv := range got {
				if i > 0 && got[i-1].Key >= kv.Key {
					t.Errorf("ranks=%d: keys out of order: %q then %q", ranks, got[i-1].Key, kv.Key)
				}
				if !slices.Equal(kv.Value, want[kv.Key]) {
					t.Errorf("ranks=%d: %q on lines %v, want %v", ranks, kv.Key, kv.Value, want[kv.Key])
				}
			}
		}
	}
	// An error names the key.
	boom := errors.New("boom")
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		st, _ := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		st.Emit("x", 1)
		_, err := mr.ReduceKeys(ctx, r, st, func(ctx context.Context, w string, _ []int64) (int, error) {
			return 0, boom
		}, mr.Gather(reduce.GatherAll))
		return err
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "key x: boom") {
		t.Errorf("failing key: %v", err)
	}
}

// byCount orders word counts by count descending, then word: a total
// order.
func byCount(a, b mr.KV[string, int64]) int {
	if c := cmp.Compare(b.Value, a.Value); c != 0 {
		return c
	}
	return strings.Compare(a.Key, b.Key)
}

// TestTopK: after a partitioned reduce (each word on one rank, no merge),
// TopK gives the root the k most frequent words of the oracle, ties broken
// by word, for k from 0 to more than the vocabulary, at 1 to 8 ranks.
func TestTopK(t *testing.T) {
	ls := lines(400)
	counts := map[string]int64{}
	for _, l := range ls {
		for _, w := range strings.Fields(l) {
			counts[w]++
		}
	}
	var all []mr.KV[string, int64]
	for _, w := range slices.Sorted(maps.Keys(counts)) {
		all = append(all, mr.KV[string, int64]{Key: w, Value: counts[w]})
	}
	slices.SortFunc(all, byCount)
	for _, ranks := range []int{1, 2, 3, 8} {
		for _, k := range []int{0, 1, 5, len(all), len(all) + 10} {
			root := ranks / 2
			var got []mr.KV[string, int64]
			err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
				st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
				if err != nil {
					return err
				}
				if _, err := mr.ApplyMap(ctx, r, mr.Slice(ls), func(ctx context.Context, l string, emit func(string, int64)) error {
					for _, w := range strings.Fields(l) {
						emit(w, 1)
					}
					return nil
				}, st); err != nil {
					return err
				}
				res, err := mr.ReduceKeys(ctx, r, st, func(ctx context.Context, w string, n []int64) (int64, error) { return n[0], nil })
				if err != nil {
					return err
				}
				top, err := mr.TopK(ctx, r, res.Value, k, byCount, root)
				if r.ID() == root {
					got = top
				} else if top != nil {
					return fmt.Errorf("rank %d got %v", r.ID(), top)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := all[:min(k, len(all))]; !slices.Equal(got, want) {
				t.Errorf("ranks=%d k=%d: %v, want %v", ranks, k, got, want)
			}
		}
	}
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 1}, func(ctx context.Context, r *pgas.Rank) error {
		_, err := mr.TopK(ctx, r, []int{1}, -1, cmp.Compare[int], 0)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "k = -1") {
		t.Errorf("k = -1: %v", err)
	}
}

// TestCollectDense: Collect reads a combining store as (key, value) pairs
// on every rank, and refuses a store that keeps all values; Dense lays
// dense keys out as a slice and refuses keys outside it or given twice.
func TestCollectDense(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		err := pgas.Run(context.Background(), pgas.Config{Ranks: n}, func(ctx context.Context, r *pgas.Rank) error {
			st, err := reduce.NewArrayStore[int, int64](10, reduce.Sum[int64]())
			if err != nil {
				return err
			}
			xs := []int{1, 3, 3, 7, 9, 9, 9, 0}
			if _, err := mr.ApplyMap(ctx, r, mr.Slice(xs), func(_ context.Context, x int, emit func(int, int64)) error {
				emit(x, int64(x))
				return nil
			}, st); err != nil {
				return err
			}
			res, err := mr.Collect(ctx, r, st)
			if err != nil {
				return err
			}
			if !res.OK || res.Part {
				return fmt.Errorf("rank %d: OK %v, Part %v; want the whole result", r.ID(), res.OK, res.Part)
			}
			d, err := mr.Dense(res.Value, 10)
			if err != nil {
				return err
			}
			if want := []int64{0, 1, 0, 6, 0, 0, 0, 7, 0, 27}; !slices.Equal(d, want) {
				return fmt.Errorf("rank %d: Dense = %v, want %v", r.ID(), d, want)
			}
			keep, err := reduce.NewHashStore[string, int](reduce.KeepAll[int]())
			if err != nil {
				return err
			}
			if _, err := mr.Collect(ctx, r, keep); err == nil || !strings.Contains(err.Error(), "ReduceKeys") {
				return fmt.Errorf("Collect of a KeepAll store: %v", err)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%d ranks: %v", n, err)
		}
	}
	if _, err := mr.Dense([]mr.KV[int, int]{{3, 1}}, 3); err == nil || !strings.Contains(err.Error(), "key 3") {
		t.Errorf("a key past n: %v", err)
	}
	if _, err := mr.Dense([]mr.KV[int8, int]{{-1, 1}}, 3); err == nil || !strings.Contains(err.Error(), "key -1") {
		t.Errorf("a negative key: %v", err)
	}
	if _, err := mr.Dense([]mr.KV[uint, int]{{1, 1}, {1, 2}}, 3); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a key twice: %v", err)
	}
}
