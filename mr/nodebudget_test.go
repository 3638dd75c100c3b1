package mr_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/wrap"
	"github.com/pgasmr/pgasmr/reduce"
)

// budgetWords is rank-independent input: 40 elements of 3,000 words each
// drawn from a skewed 20,000-word vocabulary, so that every rank's table
// passes a small budget many times over.
func budgetWords() [][]string {
	rng := rand.New(rand.NewPCG(7, 8))
	z := rand.NewZipf(rng, 1.1, 1, 19_999)
	in := make([][]string, 40)
	for i := range in {
		for range 3000 {
			in[i] = append(in[i], fmt.Sprintf("w%d", z.Uint64()))
		}
	}
	return in
}

// countWithBudget maps in the way wordcount does (a CountTable handing its
// cold keys over at the store's SinkBudget) with WithReduce, and reduces
// with ro; it returns the result on the root and every rank's stats.
func countWithBudget(t *testing.T, cfg pgas.Config, in [][]string, ro []mr.ReduceOption) (map[string]int64, []reduce.Stats) {
	t.Helper()
	got, stats, err := runBudgetJob(t.Context(), cfg, in, ro)
	if err != nil {
		t.Fatal(err)
	}
	return got, stats
}

// runBudgetJob is countWithBudget's job, which a map error (checked after
// every element) ends.
func runBudgetJob(ctx context.Context, cfg pgas.Config, in [][]string, ro []mr.ReduceOption) (map[string]int64, []reduce.Stats, error) {
	var got map[string]int64
	stats := make([]reduce.Stats, cfg.Ranks)
	err := pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		c := reduce.NewCountTable()
		_, err = mr.ApplyMapArray(ctx, r, mr.Slice(in), func(ctx context.Context, s mr.Share[[]string], emit func(string, int64)) error {
			handed := c.HandOver(st)
			for i := range s.Elements() {
				for _, w := range in[i] {
					c.Add([]byte(w))
				}
				if err := handed(); err != nil {
					return err
				}
			}
			return st.AddPairs(c.Pairs())
		}, st, mr.WithReduce(ro...))
		if err != nil {
			return err
		}
		res, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (map[string]int64, error) {
			m := map[string]int64{}
			for i, k := range p.Keys {
				m[k] = p.Value(i)
			}
			return m, nil
		}, ro...)
		stats[r.ID()] = res.Stats
		if res.OK && r.ID() == 0 {
			got = res.Value
		}
		return err
	})
	return got, stats, err
}

// TestNodeBudget: with a small node budget, ranks hand their pairs to the
// node's table while they map, and the result is the oracle's at 2, 3 and
// 8 ranks, every gather mode that combines per node, with segments cast
// (inproc) and reached by one-sided operations (under a wrapper). The
// pairs folded exceed the distinct keys of a rank (so hand-overs happened
// during the map), and with no bound (a negative budget) there are none.
func TestNodeBudget(t *testing.T) {
	in := budgetWords()
	want := map[string]int64{}
	for _, ws := range in {
		for _, w := range ws {
			want[w]++
		}
	}
	for _, access := range []string{"cast", "one-sided"} {
		for _, n := range []int{2, 3, 8} {
			for _, g := range []reduce.Gather{reduce.GatherPartitioned, reduce.GatherRoot, reduce.GatherAll} {
				t.Run(fmt.Sprintf("%s/n=%d/%v", access, n, g), func(t *testing.T) {
					cfg := pgas.Config{Ranks: n, SegmentBytes: 4 << 20}
					if access == "one-sided" {
						cfg.Transport = wrap.NewCounting(inproc.New())
					}
					ro := []mr.ReduceOption{mr.Gather(g), mr.WithNodeCombine(reduce.NodeOn), mr.WithNodeBudget(n * reduce.MinRankBudget)}
					if g == reduce.GatherPartitioned {
						ro = append(ro, mr.Merge())
					}
					got, stats := countWithBudget(t, cfg, in, ro)
					if !maps.Equal(got, want) {
						t.Fatalf("%d keys, want %d (or counts differ)", len(got), len(want))
					}
					var folded, emitted int64
					for _, s := range stats {
						folded += s.NodePairs
						emitted += s.PairsEmitted
					}
					// Without a bound each rank folds its distinct keys once.
					_, once := countWithBudget(t, cfg, in, append(ro, mr.WithNodeBudget(-1)))
					var least int64
					for _, s := range once {
						least += s.NodePairs
					}
					if folded != emitted || folded <= least {
						t.Errorf("%d pairs emitted, %d folded into node tables, %d without a bound; want every one, and more than without a bound (hand-overs while mapping)", emitted, folded, least)
					}
				})
			}
		}
	}
	// No bound: one hand-over a rank, at the end of its map.
	ro := []mr.ReduceOption{mr.Gather(reduce.GatherRoot), mr.WithNodeCombine(reduce.NodeOn), mr.WithNodeBudget(-1)}
	got, stats := countWithBudget(t, pgas.Config{Ranks: 3, SegmentBytes: 4 << 20}, in, ro)
	if !maps.Equal(got, want) {
		t.Fatalf("no bound: %d keys, want %d (or counts differ)", len(got), len(want))
	}
	for q, s := range stats {
		if s.NodePairs != s.PairsEmitted || s.NodePairs > int64(len(want)) {
			t.Errorf("no bound: rank %d emitted %d pairs and folded %d; want its distinct keys once (at most %d)", q, s.PairsEmitted, s.NodePairs, len(want))
		}
	}
}

// TestNodeBudgetOptionsDiffer: a reduce whose gather mode differs from
// the one the map was told of (WithReduce) fails on every rank, naming
// both, instead of losing the pairs already in the node's table.
func TestNodeBudgetOptionsDiffer(t *testing.T) {
	in := budgetWords()
	err := pgas.Run(t.Context(), pgas.Config{Ranks: 2, SegmentBytes: 4 << 20}, func(ctx context.Context, r *pgas.Rank) error {
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		_, err = mr.ApplyMap(ctx, r, mr.Slice(in), func(ctx context.Context, ws []string, emit func(string, int64)) error {
			keys := make([]string, len(ws))
			vals := make([]int64, len(ws))
			copy(keys, ws)
			for i := range vals {
				vals[i] = 1
			}
			return st.AddPairs(keys, vals)
		}, st, mr.WithReduce(mr.Gather(reduce.GatherRoot), mr.WithNodeCombine(reduce.NodeOn), mr.WithNodeBudget(2048)))
		if err != nil {
			return err
		}
		_, err = mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (int, error) {
			return p.Len(), nil
		}, mr.Gather(reduce.GatherAll), mr.WithNodeCombine(reduce.NodeOn))
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "gather root") || !strings.Contains(err.Error(), "all") {
		t.Fatalf("reduce with other options than the map's: %v; want an error naming both gather modes", err)
	}
}

// TestNodeBudgetFaults: an operation of rank 1 failing anywhere in a job
// whose ranks hand pairs to the node's table while they map (the table's
// allocation before the map, a lock or a probe during it, the final fold,
// the exchange) ends the job with the injected error, and nothing hangs;
// a fault past the job's last operation changes nothing.
func TestNodeBudgetFaults(t *testing.T) {
	in := budgetWords()[:12]
	ro := []mr.ReduceOption{mr.Gather(reduce.GatherPartitioned), mr.Merge(), mr.WithNodeCombine(reduce.NodeOn), mr.WithNodeBudget(3 * reduce.MinRankBudget)}
	job := func(f *wrap.Faulty) (int, error) {
		got, _, err := runBudgetJob(t.Context(), pgas.Config{Ranks: 3, SegmentBytes: 1 << 20, Transport: f, SyncTimeout: 20 * time.Second}, in, ro)
		return len(got), err
	}
	count := wrap.NewFaulty(inproc.New(), -1, -1)
	want, err := job(count)
	if err != nil {
		t.Fatal(err)
	}
	total := count.Ops(1)
	if total < 300 {
		t.Fatalf("rank 1 did %d operations: too few to sweep", total)
	}
	for op := int64(0); op < total+5; op += 1 + total/60 {
		f := wrap.NewFaulty(inproc.New(), 1, op)
		t0 := time.Now()
		got, err := job(f)
		switch {
		case f.Injected() && !errors.Is(err, wrap.ErrInjected):
			t.Errorf("op %d of %d: injected, job returned %v", op, total, err)
		case !f.Injected() && (err != nil || got != want):
			t.Errorf("op %d of %d: not injected, job returned %d keys (want %d), %v", op, total, got, want, err)
		}
		if d := time.Since(t0); d > 10*time.Second {
			t.Errorf("op %d: the job took %v", op, d)
		}
	}
}
