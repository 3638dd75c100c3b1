package mr_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
)

// sortItem is what the sort tests sort: by Key alone, so that ties show
// the order they are kept in.
type sortItem struct {
	Key  int
	Rank int
	Idx  int
	Tag  string
}

func bySortKey(a, b sortItem) int { return cmp.Compare(a.Key, b.Key) }

// sortLocals makes each rank's items: sizes[q] of them, keys in [0, keys).
func sortLocals(rng *rand.Rand, sizes []int, keys int) [][]sortItem {
	locals := make([][]sortItem, len(sizes))
	for q, m := range sizes {
		for i := range m {
			locals[q] = append(locals[q], sortItem{rng.IntN(keys), q, i, strings.Repeat("x", rng.IntN(3))})
		}
	}
	return locals
}

// sortCases are each rank's item counts and key ranges: duplicates, empty
// ranks, all items equal.
func sortCases(rng *rand.Rand, n int) []struct {
	name   string
	locals [][]sortItem
} {
	rand := func(maxLen, keys int) [][]sortItem {
		sizes := make([]int, n)
		for q := range sizes {
			sizes[q] = rng.IntN(maxLen + 1)
		}
		return sortLocals(rng, sizes, keys)
	}
	skewed := make([]int, n)
	skewed[n-1] = 50
	return []struct {
		name   string
		locals [][]sortItem
	}{
		{"random", rand(30, 20)},
		{"many-duplicates", rand(30, 3)},
		{"all-equal", rand(25, 1)},
		{"empty", sortLocals(rng, make([]int, n), 1)},
		{"one-rank", sortLocals(rng, skewed, 10)},
		{"large", rand(400, 1000)},
	}
}

// TestSort: Sort, SortAll and SortPartitioned give slices.SortStableFunc
// of the ranks' items concatenated in rank order, at 1 to 5 ranks.
func TestSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 3))
	for n := 1; n <= 5; n++ {
		for _, c := range sortCases(rng, n) {
			t.Run(fmt.Sprintf("ranks=%d/%s", n, c.name), func(t *testing.T) {
				want := slices.Concat(c.locals...)
				slices.SortStableFunc(want, bySortKey)
				root := n / 2
				var mu sync.Mutex
				sorted := make([][]sortItem, n)
				all := make([][]sortItem, n)
				parts := make([][]sortItem, n)
				err := pgas.Run(t.Context(), pgas.Config{Ranks: n, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
					local := c.locals[r.ID()]
					before := slices.Clone(local)
					s, err := mr.Sort(ctx, r, local, bySortKey, root)
					if err != nil {
						return err
					}
					a, err := mr.SortAll(ctx, r, local, bySortKey)
					if err != nil {
						return err
					}
					p, err := mr.SortPartitioned(ctx, r, local, bySortKey)
					if err != nil {
						return err
					}
					if !slices.Equal(local, before) {
						return fmt.Errorf("rank %d's items changed", r.ID())
					}
					mu.Lock()
					sorted[r.ID()], all[r.ID()], parts[r.ID()] = s, a, p
					mu.Unlock()
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				for q := range n {
					if q == root {
						if sorted[q] == nil || !slices.Equal(sorted[q], want) {
							t.Fatalf("Sort on root %d = %v; want %v", q, sorted[q], want)
						}
					} else if sorted[q] != nil {
						t.Fatalf("Sort on rank %d, not the root, = %v; want nil", q, sorted[q])
					}
					if !slices.Equal(all[q], want) {
						t.Fatalf("SortAll on rank %d = %v; want %v", q, all[q], want)
					}
				}
				if got := slices.Concat(parts...); !slices.Equal(got, want) {
					t.Fatalf("SortPartitioned concatenated = %v; want %v", got, want)
				}
				// Balance: a rank gets its share, give or take the
				// sampling's error.
				if len(want) >= 100 {
					for q, p := range parts {
						if limit := 2*len(want)/n + 1; len(p) > limit {
							t.Errorf("SortPartitioned gave rank %d %d of %d items, more than %d", q, len(p), len(want), limit)
						}
					}
				}
			})
		}
	}
}

// TestSortPartitionedBalance: with many items, equal ones included, each
// rank gets about its share.
func TestSortPartitionedBalance(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 4))
	for _, keys := range []int{1, 5, 1 << 20} {
		const n = 4
		// Skewed sizes: one rank holds most items.
		locals := sortLocals(rng, []int{3000, 10, 0, 500}, keys)
		total := 3510
		var mu sync.Mutex
		sizes := make([]int, n)
		err := pgas.Run(t.Context(), pgas.Config{Ranks: n, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
			p, err := mr.SortPartitioned(ctx, r, locals[r.ID()], bySortKey)
			mu.Lock()
			sizes[r.ID()] = len(p)
			mu.Unlock()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for q, m := range sizes {
			if share := total / n; m > share*3/2 || m < share/2 {
				t.Errorf("keys=%d: rank %d got %d items of %d (sizes %v)", keys, q, m, total, sizes)
			}
		}
	}
}

// TestSortUnmovable: a type msgpack would not carry whole is an error
// naming the part at fault, before anything moves; types that encode
// themselves and fields left out on purpose are taken.
func TestSortUnmovable(t *testing.T) {
	type hidden struct {
		Key    int
		secret string
	}
	type nested struct {
		Key   int
		Inner []map[string]hidden
	}
	type embedded struct {
		hidden // unexported embedded struct: its exported fields move
	}
	type skipped struct {
		Key   int
		cache []int `msgpack:"-"`
	}
	type stamped struct {
		At time.Time
	}
	type dynamic struct {
		V any
	}
	run := func(job func(ctx context.Context, r *pgas.Rank) error) error {
		return pgas.Run(t.Context(), pgas.Config{Ranks: 2, SegmentBytes: 1 << 20}, job)
	}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"unexported", run(func(ctx context.Context, r *pgas.Rank) error {
			_, err := mr.Sort(ctx, r, []hidden{{1, "a"}}, func(a, b hidden) int { return a.Key - b.Key }, 0)
			return err
		}), "mr: Sort: msgpack cannot carry mr_test.hidden whole: mr_test.hidden.secret is unexported"},
		{"nested", run(func(ctx context.Context, r *pgas.Rank) error {
			_, err := mr.SortPartitioned(ctx, r, []nested{{Key: 1}}, func(a, b nested) int { return a.Key - b.Key })
			return err
		}), "mr_test.nested.Inner[] value.secret is unexported"},
		{"embedded", run(func(ctx context.Context, r *pgas.Rank) error {
			_, err := mr.SortAll(ctx, r, []embedded{{hidden{1, "a"}}}, func(a, b embedded) int { return a.Key - b.Key })
			return err
		}), "mr_test.embedded.hidden.secret is unexported"},
		{"interface", run(func(ctx context.Context, r *pgas.Rank) error {
			_, err := mr.Sort(ctx, r, []dynamic{{1}}, func(a, b dynamic) int { return 0 }, 0)
			return err
		}), "mr_test.dynamic.V has kind interface"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", c.name, c.err, c.want)
		}
	}
	// Taken: a skipped field, time.Time.
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	var got []stamped
	err := run(func(ctx context.Context, r *pgas.Rank) error {
		if _, err := mr.Sort(ctx, r, []skipped{{Key: r.ID(), cache: []int{1}}}, func(a, b skipped) int { return a.Key - b.Key }, 0); err != nil {
			return err
		}
		s, err := mr.Sort(ctx, r, []stamped{{t0.Add(-time.Duration(r.ID()) * time.Hour)}}, func(a, b stamped) int { return a.At.Compare(b.At) }, 0)
		if r.ID() == 0 {
			got = s
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []stamped{{t0.Add(-time.Hour)}, {t0}}; len(got) != 2 || !got[0].At.Equal(want[0].At) || !got[1].At.Equal(want[1].At) {
		t.Fatalf("Sort of times = %v; want %v", got, want)
	}
}
