package wordcount

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pgasmr/pgasmr/apps/internal/apptest"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/reduce"
)

// longWordCorpus writes, under dir/small, files of words from 10 to 100
// KiB (lower-case, mixed-case and multi-byte, between ASCII, multi-byte
// and invalid separators, at the start and the end of a file) among
// ordinary text, and under dir/big files of words longer than the
// reader's 1 MiB block and than keepBytes, which Seq too reads as words
// longer than its buffer.
func longWordCorpus(t *testing.T) (small, big string) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(35, 4))
	seps := []string{" ", "\n", ",", "—", "\u3000", "\xff", "\xe6\x95", "²"}
	long := func(n int) string {
		unit := []string{"a", "Ab", "é", "数", "aÉ数z9", "ǅx"}[rng.IntN(6)]
		return strings.Repeat(unit, 1+n/len(unit))
	}
	files := map[string]string{}
	for i := range 4 {
		var b strings.Builder
		b.WriteString(long(10<<10 + rng.IntN(40<<10))) // a long word first
		for range 3 {
			b.WriteString(seps[rng.IntN(len(seps))])
			if rng.IntN(2) == 0 {
				b.WriteString(randomText(rng, rng.IntN(3000)))
				b.WriteString(seps[rng.IntN(len(seps))])
			}
			b.WriteString(long(10<<10 + rng.IntN(90<<10)))
		}
		if i%2 == 0 {
			b.WriteString(seps[i%len(seps)]) // else the file ends in a long word
		}
		files[fmt.Sprintf("small/f%d.txt", i)] = b.String()
	}
	// A word of 1.5 MiB after a few bytes, text, and one of 1.2 MiB that
	// ends the file; one of 2.3 MiB past a chunk of 2 MiB, whose first
	// chunk finds its end only at the next chunk's cut; one longer than
	// keepBytes, between multi-byte separators.
	files["big/a.txt"] = "Start " + strings.Repeat("b", 3<<19) + " middle text, AND MORE\n" + strings.Repeat("c", 12<<17)
	files["big/b.txt"] = "x " + strings.Repeat("d", 2300<<10) + "—y\n"
	files["big/c.txt"] = "数据 " + strings.Repeat("e", keepBytes+3) + "\u3000" + strings.Repeat("F", 5000) + "—"
	writeTree(t, dir, files)
	return filepath.Join(dir, "small"), filepath.Join(dir, "big")
}

// TestLongWordsRanks: long words across the chunk boundaries of several
// chunk sizes give the oracle's counts in Seq, Goroutines and Run at 1, 2
// and 3 ranks (array map gathered partitioned, and element map gathered
// to the root).
func TestLongWordsRanks(t *testing.T) {
	small, big := longWordCorpus(t)
	ctx := context.Background()
	for _, c := range []struct {
		dir    string
		chunks []int64
	}{
		{small, []int64{4 << 10, 5<<10 + 1, cutBlock - 1}},
		{big, []int64{2 << 20}},
	} {
		oracle, _, _ := oracleTSV(t, c.dir)
		check := func(name string, r *Result, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %s: %v", c.dir, name, err)
			}
			if got := render(t, r, "tsv"); got != oracle {
				t.Fatalf("%s: %s: TSV of %d bytes differs from the oracle's %d bytes", c.dir, name, len(got), len(oracle))
			}
		}
		r, err := Seq(ctx, []string{c.dir}, Options{})
		check("seq", r, err)
		for _, chunk := range c.chunks {
			r, err := Goroutines(ctx, []string{c.dir}, Options{ChunkBytes: chunk})
			check(fmt.Sprintf("goroutines/chunk=%d", chunk), r, err)
			for _, m := range []struct {
				ranks int
				array bool
				g     reduce.Gather
			}{{1, true, reduce.GatherPartitioned}, {2, true, reduce.GatherPartitioned}, {2, false, reduce.GatherRoot}, {3, true, reduce.GatherPartitioned}} {
				if c.dir == big && m.ranks == 2 && !m.array {
					continue
				}
				o := Options{Options: mr.Options{Map: apptest.MapMode(!m.array), Gather: m.g, Root: m.ranks - 1}, ChunkBytes: chunk}
				r, err := pgasMode(m.ranks)(ctx, []string{c.dir}, o)
				check(fmt.Sprintf("ranks=%d/array=%v/%v/chunk=%d", m.ranks, m.array, m.g, chunk), r, err)
			}
		}
	}
}

// TestLongCutSpan: once a reader has found a cut far past the offset it
// looked from, the cut it gives for an offset in between (which it then
// knows without reading) is the text's, for every offset around the
// word's separator, of each width, as a fresh reader's is.
func TestLongCutSpan(t *testing.T) {
	dir := t.TempDir()
	word := strings.Repeat("é", cutBlock/2) + strings.Repeat("z", cutBlock/4) + "数"
	for i, sep := range []string{" ", "\xff", "é—", "\u3000", "\U0001F600", "\xe6\x95"} {
		name := filepath.Join(dir, fmt.Sprintf("s%d.txt", i))
		text := "ab " + word + sep + "cd\xe6\x95ef " + word
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		size := int64(len(text))
		var rd reader
		if _, err := rd.cut(f, size, 5); err != nil {
			t.Fatal(err)
		}
		if rd.span.name == "" {
			t.Fatalf("%q: no span noted for a cut %d bytes away", sep, len(word))
		}
		end := int64(3 + len(word) + len(sep))
		var offs []int64
		for o := int64(0); o < end; o += 4999 {
			offs = append(offs, o)
		}
		for o := end - 12; o <= end+12; o++ {
			offs = append(offs, o)
		}
		for _, o := range offs {
			truth := int64(firstCut(text, int(o)))
			if o == 0 {
				truth = 0 // the file's start is a cut
			}
			for _, limit := range []int64{o + utf8.UTFMax + 1, o + utf8.UTFMax + 2, end - 1, end, end + 1, size} {
				if limit < o+utf8.UTFMax+1 {
					continue // its callers read a rune past o at least
				}
				// Found, the cut is the text's; not found, it is past
				// limit or at a rune that limit may cut off.
				var fresh reader
				for _, rd := range []*reader{&rd, &fresh} {
					p, ok, err := rd.cutBefore(f, size, o, limit)
					if err != nil || (ok && p != truth) || (!ok && truth <= limit-utf8.UTFMax) {
						t.Fatalf("%q: cutBefore(%d, %d) = %d, %v, %v (noted span %+v); the cut is %d", sep, o, limit, p, ok, err, rd.span, truth)
					}
				}
			}
		}
		f.Close()
	}
}

// TestLongWordAllocs: counting one 16 MiB word (and a little text)
// allocates the word's bytes about twice, a buffer to read it and the
// table's key, in Seq and over the chunks of 2 ranks as Run's map reads
// them, for a word in lower case and one in mixed case (lower-cased in
// the buffer); growing the buffer by doubling allocated it about three
// times before the key, and lower-casing in the batch's arena twice more.
// The readers' buffers are back to a block after.
func TestLongWordAllocs(t *testing.T) {
	const w = 16 << 20
	ctx := context.Background()
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	const most = 2*w + w/4
	for _, unit := range []string{"w", "wW"} {
		path := filepath.Join(t.TempDir(), "word.txt")
		if err := os.WriteFile(path, []byte("one "+strings.Repeat(unit, w/len(unit))+" two\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var seq *Result
		if n := allocated(func() {
			var err error
			if seq, err = Seq(ctx, []string{path}, Options{}); err != nil {
				t.Fatal(err)
			}
		}); n > most {
			t.Errorf("%q: Seq allocated %d bytes (%.2f words) for one word of %d bytes, want at most %d", unit, n, float64(n)/w, w, most)
		}
		if seq.DistinctWords != 3 || seq.TotalWords != 3 {
			t.Fatalf("%q: Seq counted %d words, %d distinct; want 3, 3", unit, seq.TotalWords, seq.DistinctWords)
		}
		// Run's map at 2 ranks: each rank a reader and a table, the
		// chunks cut in two shares.
		cs, _, err := prepare(ctx, nil, []string{path}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tables := []*reduce.CountTable{reduce.NewCountTable(), reduce.NewCountTable()}
		readers := make([]*reader, 2)
		if n := allocated(func() {
			for q := range 2 {
				readers[q] = &reader{}
				for _, c := range cs[q*len(cs)/2 : (q+1)*len(cs)/2] {
					if _, _, err := readers[q].count(ctx, c, tables[q].AddAll); err != nil {
						t.Fatal(err)
					}
				}
			}
		}); n > most {
			t.Errorf("%q: 2 ranks' map over %d chunks allocated %d bytes (%.2f words) for one word of %d bytes, want at most %d", unit, len(cs), n, float64(n)/w, w, most)
		}
		var got []string
		for q, tb := range tables {
			for k, n := range tb.All() {
				if len(k) > 3 && k != strings.Repeat("w", w) {
					k = "not lower-case w"
				}
				got = append(got, fmt.Sprintf("%d:%d:%d", q, len(k), n))
			}
			if c := cap(readers[q].buf); c > blockBytes {
				t.Errorf("%q: rank %d's reader keeps a buffer of %d bytes after the word, want at most %d", unit, q, c, blockBytes)
			}
		}
		// The first chunk's end is cut after the word; the last chunk
		// has "two".
		want := []string{"0:3:1", fmt.Sprintf("0:%d:1", w), "1:3:1"}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q: 2 ranks' tables (rank:length:count) = %q, want %q", unit, got, want)
		}
	}
}

// TestWordsLongRuns: runs of lower-case ASCII letters and digits longer
// than the 8 bytes the tokenizer and the cut skip at once, with a byte or
// rune of every kind at many positions, give the oracle's words, and the
// cut of every offset is past the first non-word rune from it.
func TestWordsLongRuns(t *testing.T) {
	run := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 3)
	for _, c := range []string{" ", "A", "Z", "é", "É", "数", "—", "\xff", "\xe6\x95", "_", "@", "[", "`", "{", "/", ":", "\x7f", "\x00"} {
		for p := 0; p <= len(run); p += 1 + p%3 {
			s := run[:p] + c + run[p:] + " " + run[:len(run)-p]
			if got, want := words(s), oracleWords(s); !slices.Equal(got, want) {
				t.Fatalf("Words(%q) = %q; want %q", s, got, want)
			}
			b := []byte(s)
			for o := 0; o <= len(b); o++ {
				// The cut is just past the first non-word rune from o.
				if q, ok := cutIn(b, o, true); !ok || q != firstCut(s, o) {
					t.Fatalf("cutIn(%q, %d, eof) = %d, %v; want %d, true", s, o, q, ok, firstCut(s, o))
				}
			}
		}
	}
}

// firstCut is cutIn's rule over a whole text, rune by rune: the end of
// the first rune that is no word's from the rune boundary at or after o
// (the end of a valid rune that o is inside of), or the text's end.
func firstCut(s string, o int) int {
	i := 0
	for i < o {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if !isWordRune(r) {
			return i
		}
	}
	return len(s)
}

// TestWordsInPlace: a batch that owns its text (the reader's) lower-cases
// words in it and gives the oracle's words, for random text and words
// longer than a block of mixed-case ASCII and multi-byte letters.
func TestWordsInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 5))
	for k := range 3000 {
		s := randomText(rng, rng.IntN(200))
		if k%3 == 0 {
			s += strings.Repeat([]string{"Ab", "aBcDeFgHiJ", "ÉtÉ", "xǅ", "Q"}[rng.IntN(5)], 10+rng.IntN(100)) + randomText(rng, rng.IntN(40))
		}
		var got []string
		b := newBatch(func(ws [][]byte) {
			for _, w := range ws {
				got = append(got, string(w))
			}
		})
		b.own = true
		b.words([]byte(s))
		b.flush()
		if want := oracleWords(s); !slices.Equal(got, want) {
			t.Fatalf("words(%q) in place = %q; want %q", s, got, want)
		}
	}
}
