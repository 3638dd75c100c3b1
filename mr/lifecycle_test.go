package mr_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// TestFinish: a map that counts in a table of its own over the rank's
// elements and emits it in its finish function gives the oracle's counts
// under every distribution, element and array map, at 1 to 5 ranks (5
// ranks on 4 lines: a rank with no element finishes too).
func TestFinish(t *testing.T) {
	for _, n := range []int{4, 200} {
		ls := lines(n)
		want := wordOracle(ls)
		for _, ranks := range []int{1, 2, 5} {
			for _, dist := range []distrib.Kind{distrib.Block, distrib.Cyclic, distrib.Balanced, distrib.BestFit} {
				for _, array := range []bool{false, true} {
					name := fmt.Sprintf("lines=%d/ranks=%d/%v/array=%v", n, ranks, dist, array)
					var mu sync.Mutex
					finished := map[int]int{} // rank → finish calls
					c := config{ranks: ranks, gather: reduce.GatherRoot}
					got := collect(t, c, func(ctx context.Context, r *pgas.Rank) (mr.Result[string], error) {
						st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
						if err != nil {
							return mr.Result[string]{}, err
						}
						table := map[string]int64{}
						count := func(l string) {
							for _, w := range strings.Fields(l) {
								table[w]++
							}
						}
						opts := []mr.MapOption{mr.WithDistribution(dist), mr.WithThreshold(3), mr.WithFinish(func(ctx context.Context, emit func(string, int64)) error {
							mu.Lock()
							finished[r.ID()]++
							mu.Unlock()
							for w, k := range table {
								emit(w, k)
							}
							return nil
						})}
						if array {
							_, err = mr.ApplyMapArray(ctx, r, mr.Slice(ls), func(ctx context.Context, s mr.Share[string], emit func(string, int64)) error {
								if s.Plan.Kind() != dist && dist != distrib.BestFit {
									return fmt.Errorf("share's plan is %v, want %v", s.Plan.Kind(), dist)
								}
								for i := range s.Elements() {
									l, err := s.Input.At(ctx, i)
									if err != nil {
										return err
									}
									count(l)
								}
								return nil
							}, st, opts...)
						} else {
							_, err = mr.ApplyMap(ctx, r, mr.Slice(ls), func(ctx context.Context, l string, emit func(string, int64)) error {
								count(l)
								return nil
							}, st, opts...)
						}
						if err != nil {
							return mr.Result[string]{}, err
						}
						if st.Emitted() != int64(len(table)) {
							return mr.Result[string]{}, fmt.Errorf("rank %d emitted %d pairs, want one per distinct word (%d)", r.ID(), st.Emitted(), len(table))
						}
						return mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (string, error) {
							var b strings.Builder
							for i, k := range p.Keys {
								fmt.Fprintf(&b, "%s %d\n", k, p.Value(i))
							}
							return b.String(), nil
						}, mr.Gather(c.gather))
					})
					if got != want {
						t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
					}
					for rank := range ranks {
						if finished[rank] != 1 {
							t.Errorf("%s: rank %d finished %d times, want once", name, rank, finished[rank])
						}
					}
				}
			}
		}
	}
}

// TestFinishErrors: a finish function's error or panic, or one of the
// wrong type, ends the job with an error saying so.
func TestFinishErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		name string
		opt  mr.MapOption
		want string
	}{
		{"error", mr.WithFinish(func(context.Context, func(string, int64)) error { return boom }), "mr: map finish: boom"},
		{"panic", mr.WithFinish(func(context.Context, func(string, int64)) error { panic("oops") }), "mr: map finish: panic: oops"},
		{"type", mr.WithFinish(func(context.Context, func(int, int64)) error { return nil }), "mr: WithFinish of func(context.Context, func(int, int64)) error given to a map that emits (string, int64)"},
	} {
		for _, array := range []bool{false, true} {
			err := pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
				st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
				if err != nil {
					return err
				}
				if array {
					_, err = mr.ApplyMapArray(ctx, r, mr.Slice([]string{"a"}), func(context.Context, mr.Share[string], func(string, int64)) error { return nil }, st, c.opt)
				} else {
					_, err = mr.ApplyMap(ctx, r, mr.Slice([]string{"a"}), func(context.Context, string, func(string, int64)) error { return nil }, st, c.opt)
				}
				return err
			})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, array=%v: %v; want an error containing %q", c.name, array, err, c.want)
			}
			if c.name == "error" && !errors.Is(err, boom) {
				t.Errorf("%s, array=%v: %v does not wrap the finish function's error", c.name, array, err)
			}
		}
	}
}

// side is a per-rank side result with what pairs cannot hold well: a
// string slice, a nested struct slice, a map.
type side struct {
	Rank    int
	Files   []string
	Skipped []struct{ Path, Reason string }
	Sizes   map[string]int64
}

func makeSide(rank int) side {
	s := side{Rank: rank, Sizes: map[string]int64{}}
	for i := range rank { // rank 0 has nothing
		f := fmt.Sprintf("r%d/f%d", rank, i)
		s.Files = append(s.Files, f)
		s.Sizes[f] = int64(rank*100 + i)
		s.Skipped = append(s.Skipped, struct{ Path, Reason string }{f + ".bin", "binary"})
	}
	return s
}

// TestGatherValues: the root (or, with AllGatherValues, every rank) gets
// every rank's value in rank order, equal to what the rank passed.
func TestGatherValues(t *testing.T) {
	for _, ranks := range []int{1, 2, 3, 8} {
		for _, all := range []bool{false, true} {
			root := ranks - 1
			var mu sync.Mutex
			got := map[int][]side{}
			err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
				var vs []side
				var err error
				if all {
					vs, err = mr.AllGatherValues(ctx, r, makeSide(r.ID()))
				} else {
					vs, err = mr.GatherValues(ctx, r, makeSide(r.ID()), root)
				}
				mu.Lock()
				got[r.ID()] = vs
				mu.Unlock()
				return err
			})
			if err != nil {
				t.Fatalf("ranks=%d all=%v: %v", ranks, all, err)
			}
			for rank := range ranks {
				vs := got[rank]
				if !all && rank != root {
					if vs != nil {
						t.Errorf("ranks=%d: non-root rank %d got %v, want nil", ranks, rank, vs)
					}
					continue
				}
				if len(vs) != ranks {
					t.Fatalf("ranks=%d all=%v: rank %d got %d values, want %d", ranks, all, rank, len(vs), ranks)
				}
				for i, v := range vs {
					w := makeSide(i)
					if v.Rank != w.Rank || !slices.Equal(v.Files, w.Files) || !slices.Equal(v.Skipped, w.Skipped) || len(v.Sizes) != len(w.Sizes) {
						t.Errorf("ranks=%d all=%v: rank %d got %+v from rank %d, want %+v", ranks, all, rank, v, i, w)
					}
					for k, n := range w.Sizes {
						if v.Sizes[k] != n {
							t.Errorf("ranks=%d: Sizes[%s] = %d, want %d", ranks, k, v.Sizes[k], n)
						}
					}
				}
			}
		}
	}
	// A root that is not a rank is an error on every rank, before any
	// communication.
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		_, err := mr.GatherValues(ctx, r, 1, 2)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "root 2 is not a rank (ranks are 0 to 1)") {
		t.Errorf("root 2 of 2 ranks: %v", err)
	}
	// A value msgpack cannot encode fails the job with its type named.
	err = pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		_, err := mr.GatherValues(ctx, r, make(chan int), 0)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "chan int") {
		t.Errorf("a channel: %v", err)
	}
}

// TestGatherStats: the root gets every rank's JobStats in rank order, with
// the figures its mr calls added and its own runtime counters.
func TestGatherStats(t *testing.T) {
	ls := lines(300)
	var total int64
	for _, l := range ls {
		total += int64(len(strings.Fields(l)))
	}
	for _, ranks := range []int{1, 3} {
		var got []mr.JobStats
		err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
			var js mr.JobStats
			ctx = mr.WithStats(ctx, &js)
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
			if _, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (int, error) { return p.Len(), nil }); err != nil {
				return err
			}
			all, err := mr.GatherStats(ctx, r, js, ranks-1)
			if r.ID() == ranks-1 {
				got = all
			} else if all != nil {
				return fmt.Errorf("rank %d got %d stats, want nil", r.ID(), len(all))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != ranks {
			t.Fatalf("%d ranks: root got %d stats", ranks, len(got))
		}
		var emitted, moved int64
		for i, js := range got {
			if js.Runtime.Rank != i || len(js.Runtime.Peers) != ranks {
				t.Errorf("%d ranks: stats %d have the runtime counters of rank %d with %d peers", ranks, i, js.Runtime.Rank, len(js.Runtime.Peers))
			}
			if js.Map <= 0 {
				t.Errorf("%d ranks: rank %d map time %v", ranks, i, js.Map)
			}
			emitted += js.Reduce.PairsEmitted
			moved += js.Reduce.PairsMoved
			if ranks > 1 && js.Runtime.Messages() == 0 {
				t.Errorf("%d ranks: rank %d counted no message", ranks, i)
			}
		}
		if emitted != total || (ranks > 1) != (moved > 0) {
			t.Errorf("%d ranks: %d pairs emitted, %d moved; want %d emitted and some moved iff ranks > 1", ranks, emitted, moved, total)
		}
	}
}
