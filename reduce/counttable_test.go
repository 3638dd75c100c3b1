package reduce_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/reduce"
)

// TestCountTable checks the table against a map through growth, AddN,
// Reset and keys that share a prefix or are empty.
func TestCountTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := reduce.NewCountTable()
	want := map[string]int64{}
	check := func(when string) {
		t.Helper()
		got := maps.Collect(c.All())
		if c.Len() != len(want) || !maps.Equal(got, want) {
			t.Fatalf("%s: Len %d, %d keys yielded, differ from the map's %d: %v", when, c.Len(), len(got), len(want), !maps.Equal(got, want))
		}
		keys, counts := c.Pairs()
		if len(keys) != len(want) || len(counts) != len(keys) {
			t.Fatalf("%s: Pairs gives %d keys and %d counts, want %d", when, len(keys), len(counts), len(want))
		}
		seen := map[string]bool{}
		for i, k := range keys {
			if n, ok := want[k]; !ok || seen[k] || counts[i] != n {
				t.Fatalf("%s: Pairs: %q counts %d (twice: %v), want %d (in the table: %v)", when, k, counts[i], seen[k], n, ok)
			}
			seen[k] = true
		}
		run := c.Run()
		keys = slices.Sorted(maps.Keys(want))
		if !slices.Equal(run.Keys, keys) || len(run.Vals) != len(keys) || run.Off != nil {
			t.Fatalf("%s: Run has %d keys, want the map's %d in order", when, len(run.Keys), len(keys))
		}
		for i, k := range keys {
			if run.Vals[i] != want[k] {
				t.Fatalf("%s: Run: %q counts %d, want %d", when, k, run.Vals[i], want[k])
			}
		}
	}
	buf := make([]byte, 0, 16)
	for i := range 100_000 {
		buf = fmt.Appendf(buf[:0], "w%d", rng.IntN(20_000))
		if i%1000 == 0 {
			buf = buf[:0] // the empty key
		}
		c.Add(buf)
		want[string(buf)]++
		if len(buf) > 0 {
			buf[0] = 'X' // the table must not have kept the bytes
		}
	}
	check("after Add")
	for k, n := range maps.Clone(want) {
		c.AddN(k+"!", 2*n)
		want[k+"!"] += 2 * n
		c.AddN(k, -n)
		want[k] -= n
	}
	check("after AddN")
	stop := 0
	for range c.All() {
		if stop++; stop == 3 {
			break // All stops when asked
		}
	}
	// Keys handed out by Pairs stay as they were through Reset and later
	// Adds (they do not alias the arena), and keys too long for the arena
	// count like any other.
	before, _ := c.Pairs()
	saved := slices.Clone(before)
	long := strings.Repeat("L", 1<<24)
	c.Add([]byte(long))
	c.AddN(long, 4)
	c.AddN(long[1:], 1)
	want[long] += 5
	want[long[1:]]++
	check("after long keys")
	c.Reset()
	clear(want)
	check("after Reset")
	for i := range 5000 {
		c.Add(fmt.Appendf(nil, "overwrite%d", i))
		want[fmt.Sprintf("overwrite%d", i)]++
	}
	check("after Reset and 5000 Adds")
	if !slices.Equal(before, saved) {
		t.Fatalf("keys from Pairs changed after Reset and Add")
	}
	c.Reset()
	clear(want)
	c.Add([]byte("again"))
	want["again"] = 1
	check("after Reset and Add")

	// AddAll, in batches of every size up to past its own, of words that
	// are slices of one buffer (read past their ends) or of their own,
	// through growth, with the empty key and a key too long for the arena.
	text := make([]byte, 0, 1<<16)
	for i := 0; i < 40_000; {
		text = text[:0]
		var ws [][]byte
		for range rng.IntN(600) {
			at := len(text)
			text = fmt.Appendf(text, "%s%d", []string{"", "k", "longer-prefix-", "Z"}[rng.IntN(4)], rng.IntN(30_000))
			w := text[at:]
			if rng.IntN(50) == 0 {
				w = w[:0]
			}
			if rng.IntN(3) == 0 {
				w = slices.Clone(w)
			}
			ws = append(ws, w)
			want[string(w)]++
			i++
		}
		if i > 20_000 && len(ws) > 0 && long != "" {
			ws = append(ws, []byte(long))
			want[long]++
			long = ""
		}
		c.AddAll(ws)
	}
	check("after AddAll")
}

// BenchmarkCountTable counts 1 M words drawn from a 50,000-word Zipf
// vocabulary, with the table and with a map[string]int64.
func BenchmarkCountTable(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(rng, 1.1, 1, 49_999)
	words := make([][]byte, 1_000_000)
	var n int64
	for i := range words {
		words[i] = fmt.Appendf(nil, "word%d", z.Uint64())
		n += int64(len(words[i]))
	}
	b.Run("table", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			c := reduce.NewCountTable()
			for _, w := range words {
				c.Add(w)
			}
		}
	})
	// The shape of 64 ranks in one process: 64 tables, each counting a
	// 64th of the words and then handing its pairs over.
	b.Run("tables64", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		for b.Loop() {
			for r := range 64 {
				c := reduce.NewCountTable()
				for _, w := range words[r*len(words)/64 : (r+1)*len(words)/64] {
					c.Add(w)
				}
				c.Pairs()
			}
		}
	})
	// The same with each table bounded to 1,024 keys, handing its colder
	// keys over (TakeCold) whenever it holds them: what a rank does under
	// a node budget.
	b.Run("tables64-bounded", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		var handed int
		for b.Loop() {
			for r := range 64 {
				c := reduce.NewCountTable()
				c.OnFull(1024, func() {
					keys, _ := c.TakeCold()
					handed += len(keys)
				})
				for _, w := range words[r*len(words)/64 : (r+1)*len(words)/64] {
					c.Add(w)
				}
				c.Pairs()
			}
		}
		b.ReportMetric(float64(handed)/float64(b.N), "handed/op")
	})
	// The same 64 tables, each counting in one area that they hold in
	// turn (an AreaSink lends it): what ranks that take turns do.
	b.Run("tables64-area", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		for b.Loop() {
			sink := newAreaSink(8 << 20)
			for r := range 64 {
				st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
				if err != nil {
					b.Fatal(err)
				}
				st.SetSink(sink, 1024)
				c := reduce.NewCountTable()
				c.HandOver(st)
				for _, w := range words[r*len(words)/64 : (r+1)*len(words)/64] {
					c.Add(w)
				}
				sink.area.Close()
				if c.Len() != 0 {
					b.Fatalf("a table counting in the area holds %d keys", c.Len())
				}
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			m := map[string]int64{}
			for _, w := range words {
				m[string(w)]++
			}
		}
	})
}

// TestCountTableTakeCold: what TakeCold hands over and what stays add up
// to what was counted, at least half the keys go each time, no key taken
// was counted more often than a key kept, and counting goes on in place.
func TestCountTableTakeCold(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	z := rand.NewZipf(rng, 1.2, 1, 9_999)
	c := reduce.NewCountTable()
	want := map[string]int64{}
	got := map[string]int64{}
	long := strings.Repeat("z", 1<<24)
	for round := range 30 {
		for range 5000 {
			w := fmt.Sprintf("w%d", z.Uint64())
			c.Add([]byte(w))
			want[w]++
		}
		if round == 7 {
			c.AddN(long, 3)
			want[long] += 3
		}
		before := c.Len()
		kept := maps.Collect(c.All())
		keys, counts := c.TakeCold()
		if len(keys) != len(counts) || 2*len(keys) < before || c.Len() != before-len(keys) {
			t.Fatalf("round %d: %d keys, TakeCold took %d keys and %d counts, %d left", round, before, len(keys), len(counts), c.Len())
		}
		maxTaken := int64(0)
		for i, k := range keys {
			if kept[k] != counts[i] {
				t.Fatalf("round %d: TakeCold gives %q count %d; the table had %d", round, k, counts[i], kept[k])
			}
			got[k] += counts[i]
			if k != long {
				maxTaken = max(maxTaken, counts[i])
			}
			delete(kept, k)
		}
		for k, n := range c.All() {
			if kept[k] != n {
				t.Fatalf("round %d: %q kept with count %d; had %d", round, k, n, kept[k])
			}
			if n < maxTaken && len(keys) < before {
				t.Fatalf("round %d: kept %q counted %d, but took a key counted %d", round, k, n, maxTaken)
			}
		}
	}
	for k, n := range c.All() {
		got[k] += n
	}
	if !maps.Equal(got, want) {
		t.Fatalf("taken and kept add up to %d keys, want %d (or counts differ)", len(got), len(want))
	}
}

// TestCountTableDirect: once the table holds its limit of keys, the
// occurrences of keys it does not hold go to the direct function (Add and
// AddN alike), and the keys it holds are counted in place; a refusal makes
// the table take the key, over its limit; the two together are the
// input's counts. A limit of 0 turns it off.
func TestCountTableDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const limit = 50
	c := reduce.NewCountTable()
	direct := map[string]int64{}
	refuse := map[string]bool{"w7": true, "w300": true}
	c.Direct(limit, func(key []byte, n int64) bool {
		if refuse[string(key)] {
			return false
		}
		direct[string(key)] += n
		return true
	})
	want := map[string]int64{}
	for i := range 20000 {
		w := fmt.Sprint("w", int(400*rng.Float64()*rng.Float64()))
		want[w]++
		if i%2 == 0 {
			c.Add([]byte(w))
		} else {
			c.AddN(w, 1)
		}
	}
	held := map[string]int64{}
	for k, n := range c.All() {
		held[k] = n
	}
	if len(held) > limit+len(refuse) {
		t.Errorf("the table holds %d keys, limit %d (+%d refused)", len(held), limit, len(refuse))
	}
	for k := range refuse {
		if _, ok := held[k]; !ok && want[k] > 0 && direct[k] == 0 {
			t.Errorf("refused key %q is nowhere", k)
		}
	}
	sum := maps.Clone(held)
	for k, n := range direct {
		sum[k] += n
	}
	if !maps.Equal(sum, want) {
		t.Errorf("table and direct together: %d keys, want %d (or counts differ)", len(sum), len(want))
	}
	if len(direct) == 0 {
		t.Errorf("no occurrence went to the direct function")
	}
	c.Direct(0, nil)
	before := c.Len()
	c.Add([]byte("fresh"))
	if c.Len() != before+1 {
		t.Errorf("with Direct off the table did not take a new key")
	}
}
