package mr_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// tokens returns n tokens of 4 to 9 letters over a vocabulary of about
// vocab words, Zipf-skewed so that some keys combine many values.
func tokens(n, vocab int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 3))
	words := make([]string, vocab)
	for i := range words {
		b := make([]byte, 4+rng.IntN(6))
		for j := range b {
			b[j] = byte('a' + rng.IntN(26))
		}
		words[i] = string(b)
	}
	z := rand.NewZipf(rng, 1.1, 1, uint64(vocab-1))
	toks := make([]string, n)
	for i := range toks {
		if i%2 == 0 {
			toks[i] = words[z.Uint64()]
		} else {
			toks[i] = words[rng.IntN(vocab)]
		}
	}
	return toks
}

// memCase is one job of TestMemoryBudget.
type memCase struct {
	config
	comb string // sum, min or all (KeepAll)
}

// TestMemoryBudget: under a memory budget far below what a rank's pairs
// take, stores spill to files in Config.TmpDir and the partitioned gather
// moves its pairs in rounds, and every gather mode, transfer and combiner
// gives the oracle's result, byte for byte, at 1, 2 and 3 ranks; the
// spill directories are gone when the job returns.
func TestMemoryBudget(t *testing.T) {
	toks := tokens(60_000, 20_000, 7)
	// Oracles: per key, the sum and min of the token positions, and every
	// position in order.
	occ, keys, idx := positions(toks)
	want := map[string]string{
		"sum": keyLines(keys, func(i int) []int64 {
			var s int64
			for _, v := range occ[keys[i]] {
				s += v
			}
			return []int64{s}
		}),
		"min": keyLines(keys, func(i int) []int64 { return occ[keys[i]][:1] }),
		"all": keyLines(keys, func(i int) []int64 { return occ[keys[i]] }),
	}
	var cases []memCase
	for _, ranks := range []int{1, 2, 3} {
		for _, g := range []struct {
			g     reduce.Gather
			merge bool
		}{{reduce.GatherPartitioned, true}, {reduce.GatherPartitioned, false}, {reduce.GatherAll, false}, {reduce.GatherRoot, false}, {reduce.GatherNone, true}} {
			for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
				for _, comb := range []string{"sum", "min", "all"} {
					if tr == reduce.ElementByElement && comb != "sum" {
						continue // the transfer is the same for every combiner
					}
					cases = append(cases, memCase{config{ranks: ranks, gather: g.g, merge: g.merge, transfer: tr}, comb})
				}
			}
		}
	}
	for _, c := range cases {
		t.Run(c.String()+"/"+c.comb, func(t *testing.T) {
			tmp := t.TempDir()
			var mu sync.Mutex
			var spilled, rounds int64
			got := collectCfg(t, c.config, pgas.Config{MemoryBytes: 48 << 10, TmpDir: tmp}, func(ctx context.Context, r *pgas.Rank) (mr.Result[string], error) {
				var comb reduce.Combiner[int64]
				switch c.comb {
				case "sum":
					comb = reduce.Sum[int64]()
				case "min":
					comb = reduce.Min[int64]()
				default:
					comb = reduce.KeepAll[int64]()
				}
				st, err := mapPositions(ctx, r, toks, idx, comb)
				if err != nil {
					return mr.Result[string]{}, err
				}
				if !st.Spilling() {
					return mr.Result[string]{}, fmt.Errorf("the store does not spill under Config.MemoryBytes")
				}
				opts := []mr.ReduceOption{mr.Gather(c.gather), mr.WithTransfer(c.transfer)}
				if c.merge {
					opts = append(opts, mr.Merge())
				}
				res, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (string, error) {
					return keyLines(p.Keys, p.Values), nil
				}, opts...)
				mu.Lock()
				spilled += res.Stats.SpillFiles
				rounds = max(rounds, res.Stats.Rounds)
				mu.Unlock()
				return res, err
			})
			if got != want[c.comb] {
				t.Fatalf("result of %d bytes differs from the oracle's %d bytes", len(got), len(want[c.comb]))
			}
			if spilled == 0 {
				t.Errorf("no rank spilled under a 48 KiB budget")
			}
			bounded := c.transfer == reduce.Collective && c.ranks > 1 && (c.gather != reduce.GatherNone || c.merge)
			if bounded && rounds < 2 {
				t.Errorf("the pairs moved in %d rounds under a 48 KiB budget, want several", rounds)
			}
			if !bounded && rounds != 0 {
				t.Errorf("%d rounds, want no bounded move", rounds)
			}
			left, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			if len(left) > 0 {
				t.Errorf("%s holds %d entries after the job (%s ...), want none", tmp, len(left), left[0].Name())
			}
		})
	}
}

// TestMemoryBudgetBadTmpDir: a job that must spill into a directory it
// cannot write fails with an error naming the directory, on every rank
// that spills, and loses no pair silently.
func TestMemoryBudgetBadTmpDir(t *testing.T) {
	toks := tokens(20_000, 10_000, 8)
	bad := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(bad, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 2, MemoryBytes: 32 << 10, TmpDir: bad}, func(ctx context.Context, r *pgas.Rank) error {
		st, err := countWords(ctx, r, toks)
		if err != nil {
			return err
		}
		_, err = mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (int, error) {
			return p.Len(), nil
		})
		return err
	})
	if err == nil {
		t.Fatal("a job spilling into a file, not a directory, succeeded")
	}
	if !strings.Contains(err.Error(), bad) {
		t.Fatalf("error %q does not name the directory %s", err, bad)
	}
}

// collectCfg is collect with the job's config (Ranks is c's, and two
// ranks a node).
func collectCfg(t *testing.T, c config, cfg pgas.Config, job func(ctx context.Context, r *pgas.Rank) (mr.Result[string], error)) string {
	t.Helper()
	cfg.Ranks, cfg.RanksPerNode = c.ranks, 2
	return collectWith(t, c, cfg, job)
}

// keyLines prints keys with their values, a line each.
func keyLines(keys []string, values func(i int) []int64) string {
	var b strings.Builder
	for i, k := range keys {
		fmt.Fprintf(&b, "%s:%v\n", k, values(i))
	}
	return b.String()
}

// TestReduceStreamBudget: ApplyReduceStream and ReduceKeys read a rank's
// pairs as a stream under a memory budget and give the oracle's keys and
// sums, partitioned (each rank its part) and merged to the root.
func TestReduceStreamBudget(t *testing.T) {
	toks := tokens(40_000, 15_000, 9)
	occ, keys, idx := positions(toks)
	want := keyLines(keys, func(i int) []int64 {
		var s int64
		for _, v := range occ[keys[i]] {
			s += v
		}
		return []int64{s}
	})
	for _, ranks := range []int{1, 2, 3} {
		for _, merge := range []bool{false, true} {
			for _, how := range []string{"stream", "keys"} {
				c := config{ranks: ranks, gather: reduce.GatherPartitioned, merge: merge}
				t.Run(fmt.Sprintf("%v/%s", c, how), func(t *testing.T) {
					got := collectCfg(t, c, pgas.Config{MemoryBytes: 64 << 10, TmpDir: t.TempDir()}, func(ctx context.Context, r *pgas.Rank) (mr.Result[string], error) {
						st, err := mapPositions(ctx, r, toks, idx, reduce.Sum[int64]())
						if err != nil {
							return mr.Result[string]{}, err
						}
						opts := []mr.ReduceOption{mr.Gather(c.gather)}
						if c.merge {
							opts = append(opts, mr.Merge())
						}
						if how == "keys" {
							res, err := mr.ReduceKeys(ctx, r, st, func(ctx context.Context, k string, vs []int64) (int64, error) {
								return vs[0], nil
							}, opts...)
							var b strings.Builder
							for _, kv := range res.Value {
								fmt.Fprintf(&b, "%s:[%d]\n", kv.Key, kv.Value)
							}
							return mr.Result[string]{Value: b.String(), OK: res.OK}, err
						}
						return mr.ApplyReduceStream(ctx, r, st, func(ctx context.Context, rd reduce.RunReader[string, int64]) (string, error) {
							var b strings.Builder
							for k, vs := range reduce.All(rd) {
								fmt.Fprintf(&b, "%s:%v\n", k, vs)
							}
							return b.String(), nil
						}, opts...)
					})
					if got != want {
						t.Fatalf("result of %d bytes differs from the oracle's %d bytes", len(got), len(want))
					}
				})
			}
		}
	}
}

// TestReduceStreamSpillError: a spilled run that cannot be read back
// while the reduce streams it fails ApplyReduceStream with an error
// naming the file, though the reduce function returned nil. (The files
// are larger than the 64 KiB a reader buffers when it opens one.)
func TestReduceStreamSpillError(t *testing.T) {
	toks := tokens(100_000, 60_000, 10)
	tmp := t.TempDir()
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 1, MemoryBytes: 2 << 20, TmpDir: tmp}, func(ctx context.Context, r *pgas.Rank) error {
		st, err := countWords(ctx, r, toks)
		if err != nil {
			return err
		}
		_, err = mr.ApplyReduceStream(ctx, r, st, func(ctx context.Context, rd reduce.RunReader[string, int64]) (int, error) {
			runs, _ := filepath.Glob(filepath.Join(tmp, "*", "*.run"))
			if len(runs) == 0 {
				return 0, fmt.Errorf("no spilled run in %s to cut", tmp)
			}
			for _, f := range runs {
				if err := os.Truncate(f, 40); err != nil {
					return 0, err
				}
			}
			n := 0
			for range reduce.All(rd) {
				n++
			}
			return n, nil
		})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), ".run") || !errors.Is(err, reduce.ErrCorruptSpill) {
		t.Fatalf("error %v, want one naming a spilled .run file and wrapping ErrCorruptSpill", err)
	}
}

// countWords maps toks into a new store summing one per occurrence.
func countWords(ctx context.Context, r *pgas.Rank, toks []string) (*reduce.Store[string, int64], error) {
	st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
	if err != nil {
		return nil, err
	}
	_, err = mr.ApplyMap(ctx, r, mr.Slice(toks), func(ctx context.Context, w string, emit func(string, int64)) error {
		emit(w, 1)
		return nil
	}, st)
	return st, err
}

// mapPositions maps the positions idx into a new store of comb, each
// emitting its token with the position.
func mapPositions(ctx context.Context, r *pgas.Rank, toks []string, idx []int64, comb reduce.Combiner[int64]) (*reduce.Store[string, int64], error) {
	st, err := reduce.NewHashStore[string, int64](comb)
	if err != nil {
		return nil, err
	}
	_, err = mr.ApplyMap(ctx, r, mr.Slice(idx), func(ctx context.Context, i int64, emit func(string, int64)) error {
		emit(toks[i], i)
		return nil
	}, st)
	return st, err
}
