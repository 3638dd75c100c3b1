package shuffle

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// countWords is rank r's input for the counting tests: n words of a
// skewed vocabulary of vocab words, some long enough for a two-byte
// msgpack header, and the empty word.
func countWords(r, n, vocab int) [][]byte {
	rng := rand.New(rand.NewPCG(uint64(r), 7))
	ws := make([][]byte, n)
	for i := range ws {
		k := int(float64(vocab) * rng.Float64() * rng.Float64() * rng.Float64())
		switch {
		case k%97 == 0:
			ws[i] = fmt.Appendf(nil, "%040d", k) // 40 bytes: a str8 header
		case k%89 == 0:
			ws[i] = nil
		default:
			ws[i] = fmt.Appendf(nil, "w%d", k)
		}
	}
	return ws
}

// TestCountingNodeTable: a job that sums int64 values under string keys,
// on in-process ranks, counts into its node's table without locks
// (counting partitions), the keys a rank's CountTable does not hold one
// occurrence at a time (CountSink); the result is the oracle's at 2, 3
// and 8 ranks, for every gather mode, with a table large enough and with
// one so small that counts and pairs overflow (and stay with their rank).
// Every occurrence is accounted for: the pairs and counts the ranks gave
// (PairsEmitted) are those folded or overflowed.
//
// With stripes (nodestripe.go: forced at two, or none with Config.Turns
// -1), the counts a rank's table does not hold go to a stripe first, and
// the result is the same.
func TestCountingNodeTable(t *testing.T) {
	const words, vocab = 6000, 4000
	for _, stripes := range []int{0, 2} {
		for _, region := range []int64{0, 8 << 10, 256 << 10} {
			for _, n := range []int{2, 3, 8} {
				for _, g := range []reduce.Gather{reduce.GatherPartitioned, reduce.GatherRoot, reduce.GatherAll} {
					t.Run(fmt.Sprintf("stripes=%d/region=%d/n=%d/%v", stripes, region, n, g), func(t *testing.T) {
						countingNodeTable(t, stripes, region, n, g, words, vocab)
					})
				}
			}
		}
	}
}

func countingNodeTable(t *testing.T, stripes int, region int64, n int, g reduce.Gather, words, vocab int) {
	defer func(v int64, s int) { testNodeRegion, testStripes = v, s }(testNodeRegion, testStripes)
	testNodeRegion, testStripes = region, stripes
	turns := 0
	if stripes == 0 {
		turns = -1
	}
	want := map[string]int64{}
	for r := range n {
		for _, w := range countWords(r, words, vocab) {
			want[string(w)]++
		}
	}
	var striped atomic.Int64
	got := make([]map[string]int64, n)
	stats := make([]reduce.Stats, n)
	o := reduce.Options{Gather: g, Node: reduce.NodeOn, NodeBudget: n * 256, Root: n - 1}
	err := pgas.Run(t.Context(), pgas.Config{Ranks: n, SegmentBytes: 1 << 20, Turns: turns}, func(ctx context.Context, r *pgas.Rank) error {
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		if err := Begin(ctx, r, st, o); err != nil {
			return err
		}
		tab, ok := st.Sink().(*nodeTable[string, int64])
		if !ok || tab.parts == nil || tab.str.Name() == "" {
			return fmt.Errorf("rank %d: sink %T is not a counting table", r.ID(), st.Sink())
		}
		c := reduce.NewCountTable()
		handed := c.HandOver(st)
		for i, w := range countWords(r.ID(), words, vocab) {
			c.Add(w)
			if i%500 == 0 {
				if err := handed(); err != nil {
					return err
				}
			}
		}
		if c.Len() > 256 && region == 0 {
			return fmt.Errorf("rank %d: its table holds %d keys, over its budget of 256", r.ID(), c.Len())
		}
		if err := st.AddPairs(c.Pairs()); err != nil {
			return err
		}
		defer func() { striped.Add(tab.striped) }()
		p, ok, s, err := Collect(ctx, r, st, o)
		if err != nil || !ok {
			return err
		}
		stats[r.ID()] = s
		// Every fold is an atomic operation on the table,
		// or a put into a stripe, counted like any other
		// access.
		ps := r.Stats()
		folds := ps.Local[pgas.OpAtomic] + ps.Remote[pgas.OpAtomic]
		if stripes > 0 {
			folds += ps.Local[pgas.OpPut] + ps.Remote[pgas.OpPut]
		}
		if folds < s.NodePairs {
			return fmt.Errorf("rank %d: %d atomic operations and puts counted for %d pairs folded", r.ID(), folds, s.NodePairs)
		}
		m := map[string]int64{}
		for i, k := range p.Keys {
			m[k] += p.Value(i)
		}
		got[r.ID()] = m
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]int64{}
	for r, m := range got {
		if g != reduce.GatherPartitioned {
			if m != nil && !maps.Equal(m, want) {
				t.Errorf("rank %d: %d keys, want %d (or counts differ)", r, len(m), len(want))
			}
			continue
		}
		for k, v := range m {
			if _, dup := all[k]; dup {
				t.Errorf("key %q on two ranks", k)
			}
			all[k] = v
		}
	}
	if g == reduce.GatherPartitioned && !maps.Equal(all, want) {
		t.Errorf("%d keys over the ranks, want %d (or counts differ)", len(all), len(want))
	}
	switch withStripes := stripes > 0 && region != 8<<10; {
	case withStripes && striped.Load() == 0:
		t.Errorf("no count went to a stripe")
	case !withStripes && striped.Load() != 0:
		t.Errorf("%d counts went to stripes, with none", striped.Load())
	}
	var emitted, folded, over int64
	for _, s := range stats {
		emitted += s.PairsEmitted
		folded += s.NodePairs
		over += s.NodeOverflow
	}
	if g == reduce.GatherRoot {
		return // only the root's stats are whole
	}
	switch {
	case region == 8<<10 && over == 0:
		t.Errorf("nothing overflowed an 8 KiB table")
	case region != 8<<10 && over != 0:
		t.Errorf("%d pairs overflowed", over)
	case folded+over < emitted || folded+over > emitted+int64(n)*int64(len(want)):
		t.Errorf("%d pairs and counts given, %d folded and %d overflowed", emitted, folded, over)
	}
}

// TestCountLogCap: a counting partition's slots have room for the keys
// asked for, unless that would take more than a quarter of the region,
// and always leave half of it for entries.
func TestCountLogCap(t *testing.T) {
	for _, c := range []struct {
		size int64
		keys int
	}{{4 << 10, 8 << 10}, {1 << 20, 8 << 10}, {4 << 20, 131072}, {64 << 20, 1 << 20}, {1 << 30, 100}} {
		l := countLogCap(c.size, c.keys)
		if nodeHdr+int64(8)<<l > c.size/2 || l > 10 && int64(8)<<l > c.size/4 {
			t.Errorf("region %d, %d keys: 2^%d slots do not fit", c.size, c.keys, l)
		}
		if int64(8)<<(l+1) <= c.size/4 && int64(3)<<l < 4*int64(c.keys) {
			t.Errorf("region %d, %d keys: 2^%d slots, room for more", c.size, c.keys, l)
		}
	}
}

// BenchmarkCountingTable: ranks count keys of a skewed vocabulary straight
// into their node's counting table, the path of a rank whose own table is
// full; per count. Under "partitions" every count goes to the counting
// partitions (Count); under "stripes" the ranks take turns and count
// into their turn's stripe (CountHashed, with the key's hash under the
// stripes' seed, as a CountTable computes it).
func BenchmarkCountingTable(b *testing.B) {
	for _, n := range []int{2, 64} {
		for _, path := range []string{"partitions", "stripes"} {
			if path == "stripes" && n <= runtime.GOMAXPROCS(0) {
				continue // no turns, no stripes
			}
			b.Run(fmt.Sprintf("ranks=%d/%s", n, path), func(b *testing.B) {
				benchCounting(b, n, path == "stripes")
			})
		}
	}
}

func benchCounting(b *testing.B, n int, striped bool) {
	const per = 1 << 16
	words := make([][][]byte, n)
	hashes := make([][]uint64, n)
	for r := range n {
		words[r] = countWords(r, per, 50000)
		for _, w := range words[r] {
			hashes[r] = append(hashes[r], stripeHash.Bytes(w))
		}
	}
	o := reduce.Options{Gather: reduce.GatherPartitioned, Node: reduce.NodeOn}
	b.ResetTimer()
	for b.Loop() {
		err := pgas.Run(b.Context(), pgas.Config{Ranks: n}, func(ctx context.Context, r *pgas.Rank) error {
			st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
			if err != nil {
				return err
			}
			if err := Begin(ctx, r, st, o); err != nil {
				return err
			}
			tab := st.Sink().(*nodeTable[string, int64])
			if striped {
				if tab.stripes == nil {
					return fmt.Errorf("rank %d: no stripes", r.ID())
				}
				release, err := r.TakeTurn(ctx)
				if err != nil {
					return err
				}
				for j, w := range words[r.ID()] {
					tab.CountHashed(w, hashes[r.ID()][j], 1)
				}
				st.EndMap()
				release()
			} else {
				for _, w := range words[r.ID()] {
					tab.Count(w, 1)
				}
			}
			_, _, _, err = Collect(ctx, r, st, o)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*per), "ns/count")
}
