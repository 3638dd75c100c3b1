package mr_test

import (
	"context"
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

var words = []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "λόγος", "数据"}

// lines makes a deterministic text corpus with skewed line lengths.
func lines(n int) []string {
	out := make([]string, n)
	x := uint64(12345)
	for i := range out {
		var b strings.Builder
		for range 1 + (i*7)%13 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			b.WriteString(words[x%uint64(len(words))])
			b.WriteByte(' ')
		}
		out[i] = b.String()
	}
	return out
}

// wordOracle counts words without pgasmr.
func wordOracle(ls []string) string {
	counts := map[string]int64{}
	for _, l := range ls {
		for _, w := range strings.Fields(l) {
			counts[w]++
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d\n", k, counts[k])
	}
	return b.String()
}

func formatPairs[K any, V any](p *reduce.Pairs[K, V]) string {
	var b strings.Builder
	for i := range p.Len() {
		fmt.Fprintf(&b, "%v %v\n", p.Keys[i], p.Values(i))
	}
	return b.String()
}

type config struct {
	ranks    int
	dist     distrib.Kind
	array    bool
	gather   reduce.Gather
	merge    bool
	transfer reduce.Transfer
}

func (c config) String() string {
	m := "element"
	if c.array {
		m = "array"
	}
	g := c.gather.String()
	if c.merge {
		g += "+merge"
	}
	return fmt.Sprintf("ranks=%d/%v/%s/%s/%v", c.ranks, c.dist, m, g, c.transfer)
}

func configs() []config {
	var cs []config
	for _, ranks := range []int{1, 2, 3, 8} {
		for _, dist := range []distrib.Kind{distrib.Block, distrib.Cyclic, distrib.Balanced, distrib.BestFit} {
			for _, array := range []bool{false, true} {
				if array && dist != distrib.Block {
					continue // array maps distribute themselves
				}
				for _, g := range []struct {
					g     reduce.Gather
					merge bool
				}{{reduce.GatherAll, false}, {reduce.GatherRoot, false}, {reduce.GatherNone, true}, {reduce.GatherPartitioned, false}, {reduce.GatherPartitioned, true}} {
					for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
						cs = append(cs, config{ranks, dist, array, g.g, g.merge, tr})
					}
				}
			}
		}
	}
	return cs
}

// collect runs job on every rank and assembles the job's output the way a
// launcher would: the root's (or any rank's, under GatherAll) result, or
// the concatenation of every rank's sorted lines when each reduced a part.
func collect(t *testing.T, c config, job func(ctx context.Context, r *pgas.Rank) (mr.Result[string], error)) string {
	t.Helper()
	return collectWith(t, c, pgas.Config{Ranks: c.ranks, RanksPerNode: 2}, job)
}

// collectWith is collect on a job of config cfg.
func collectWith(t *testing.T, c config, cfg pgas.Config, job func(ctx context.Context, r *pgas.Rank) (mr.Result[string], error)) string {
	t.Helper()
	var mu sync.Mutex
	parts := make([]string, c.ranks)
	oks := make([]bool, c.ranks)
	err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		res, err := job(ctx, r)
		if err != nil {
			return err
		}
		mu.Lock()
		parts[r.ID()], oks[r.ID()] = res.Value, res.OK
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case c.gather == reduce.GatherAll:
		for q := 1; q < c.ranks; q++ {
			if parts[q] != parts[0] {
				t.Fatalf("GatherAll: rank %d's result differs from rank 0's", q)
			}
		}
		return parts[0]
	case c.gather == reduce.GatherRoot || c.merge:
		for q := 1; q < c.ranks; q++ {
			if oks[q] || parts[q] != "" {
				t.Fatalf("rank %d reduced although it is not the root", q)
			}
		}
		return parts[0]
	}
	var all []string
	for _, p := range parts {
		all = append(all, strings.SplitAfter(p, "\n")...)
	}
	slices.Sort(all)
	return strings.Join(all, "")
}

func wordJob(c config, ls []string) func(ctx context.Context, r *pgas.Rank) (mr.Result[string], error) {
	return func(ctx context.Context, r *pgas.Rank) (mr.Result[string], error) {
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return mr.Result[string]{}, err
		}
		weights := make([]float64, len(ls))
		for i, l := range ls {
			weights[i] = float64(len(l))
		}
		in := mr.WeightedSlice(ls, weights)
		if c.array {
			_, err = mr.ApplyMapArray(ctx, r, in, func(ctx context.Context, s mr.Share[string], emit func(string, int64)) error {
				for i := range s.Elements() {
					l, err := s.Input.At(ctx, i)
					if err != nil {
						return err
					}
					for _, w := range strings.Fields(l) {
						emit(w, 1)
					}
				}
				return nil
			}, st)
		} else {
			_, err = mr.ApplyMap(ctx, r, in, func(ctx context.Context, l string, emit func(string, int64)) error {
				for _, w := range strings.Fields(l) {
					emit(w, 1)
				}
				return nil
			}, st, mr.WithDistribution(c.dist), mr.WithThreshold(20))
		}
		if err != nil {
			return mr.Result[string]{}, err
		}
		opts := []mr.ReduceOption{mr.Gather(c.gather), mr.WithTransfer(c.transfer)}
		if c.merge {
			opts = append(opts, mr.Merge())
		}
		return mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (string, error) {
			var b strings.Builder
			for i := range p.Len() {
				fmt.Fprintf(&b, "%s %d\n", p.Keys[i], p.Value(i))
			}
			return b.String(), nil
		}, opts...)
	}
}

func TestMetamorphicWordcount(t *testing.T) {
	ls := lines(60)
	want := wordOracle(ls)
	for _, c := range configs() {
		t.Run(c.String(), func(t *testing.T) {
			if got := collect(t, c, wordJob(c, ls)); got != want {
				t.Fatalf("output differs from the oracle:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// pixels makes a deterministic RGB byte stream split into chunks.
func pixels(chunks, size int) [][]byte {
	out := make([][]byte, chunks)
	x := uint32(7)
	for i := range out {
		out[i] = make([]byte, size*3)
		for j := range out[i] {
			x = x*1664525 + 1013904223
			out[i][j] = byte(x >> 24)
		}
	}
	return out
}

func histOracle(px [][]byte) string {
	var h [768]int64
	for _, c := range px {
		for j, b := range c {
			h[(j%3)*256+int(b)]++
		}
	}
	var b strings.Builder
	for k, v := range h {
		if v > 0 {
			fmt.Fprintf(&b, "%03d %d\n", k, v)
		}
	}
	return b.String()
}

func histJob(c config, px [][]byte) func(ctx context.Context, r *pgas.Rank) (mr.Result[string], error) {
	return func(ctx context.Context, r *pgas.Rank) (mr.Result[string], error) {
		st, err := reduce.NewArrayStore[uint16, int64](768, reduce.Sum[int64]())
		if err != nil {
			return mr.Result[string]{}, err
		}
		in := mr.Slice(px)
		count := func(chunk []byte, emit func(uint16, int64)) {
			for j, b := range chunk {
				emit(uint16((j%3)*256+int(b)), 1)
			}
		}
		if c.array {
			_, err = mr.ApplyMapArray(ctx, r, in, func(ctx context.Context, s mr.Share[[]byte], emit func(uint16, int64)) error {
				for i := range s.Elements() {
					chunk, _ := s.Input.At(ctx, i)
					count(chunk, emit)
				}
				return nil
			}, st)
		} else {
			_, err = mr.ApplyMap(ctx, r, in, func(ctx context.Context, chunk []byte, emit func(uint16, int64)) error {
				count(chunk, emit)
				return nil
			}, st, mr.WithDistribution(c.dist), mr.WithThreshold(1))
		}
		if err != nil {
			return mr.Result[string]{}, err
		}
		opts := []mr.ReduceOption{mr.Gather(c.gather), mr.WithTransfer(c.transfer)}
		if c.merge {
			opts = append(opts, mr.Merge())
		}
		return mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[uint16, int64]) (string, error) {
			var b strings.Builder
			for i := range p.Len() {
				fmt.Fprintf(&b, "%03d %d\n", p.Keys[i], p.Value(i))
			}
			return b.String(), nil
		}, opts...)
	}
}

func TestMetamorphicHistogram(t *testing.T) {
	px := pixels(23, 50)
	want := histOracle(px)
	for _, c := range configs() {
		t.Run(c.String(), func(t *testing.T) {
			if got := collect(t, c, histJob(c, px)); got != want {
				t.Fatalf("output differs from the oracle:\n%.300s\nwant:\n%.300s", got, want)
			}
		})
	}
}
