package wordcount

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/apps/internal/apptest"
	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// writeTree writes files (path relative to dir → contents) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// oracleTSV counts the words of the regular files under dir with the
// standard library only: whole files, strings.FieldsFunc, a map, and a
// sort. Files with a NUL in the first 8 KiB are skipped.
func oracleTSV(t testing.TB, dirs ...string) (tsv string, files, binary int) {
	t.Helper()
	counts := map[string]int{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.IndexByte(b[:min(len(b), 8192)], 0) >= 0 {
				binary++
				return nil
			}
			files++
			for _, w := range oracleWords(string(b)) {
				counts[w]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	type wc struct {
		w string
		n int
	}
	var all []wc
	for w, n := range counts {
		all = append(all, wc{w, n})
	}
	slices.SortFunc(all, func(a, b wc) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return strings.Compare(a.w, b.w)
	})
	var sb strings.Builder
	for _, x := range all {
		fmt.Fprintf(&sb, "%s\t%d\n", x.w, x.n)
	}
	return sb.String(), files, binary
}

func render(t testing.TB, r *Result, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.Write(&b, format); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// small is a corpus with every case the word rule and the reader meet.
var small = map[string]string{
	"a.txt":          "Hello HELLO hello, world! 42 x42 42\n",
	"sub/b.txt":      "Café café CAFÉ straße 数据 数据\xff数据 ab\xe6\x95cd\n",
	"sub/deep/c.txt": "the cat and the hat; THE END\n",
	"sub/empty.txt":  "",
	"bin.dat":        "binary\x00data the the the",
	"long.txt":       strings.Repeat("boundary wörd spanning 数据数据数据 ", 40) + "last",
}

func TestSmallByHand(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.txt":   "Hello HELLO hello, World! 42 x2\n",
		"d/b.txt": "world ÉTÉ été\xffété 数据",
		"d/e.txt": "",
		"d/n.bin": "\x00hello",
	})
	r, err := Seq(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ format, want string }{
		{"tsv", "hello\t3\nété\t3\nworld\t2\n42\t1\nx2\t1\n数据\t1\n"},
		{"text", "word   count\nhello      3\nété        3\nworld      2\n42         1\nx2         1\n数据         1\n"},
		{"csv", "word,count\nhello,3\nété,3\nworld,2\n42,1\nx2,1\n数据,1\n"},
		{"json", `{
  "app": "wordcount",
  "files": 3,
  "skipped_binary": 1,
  "total_words": 11,
  "distinct_words": 6,
  "words": [
    {
      "word": "hello",
      "count": 3
    },
    {
      "word": "été",
      "count": 3
    },
    {
      "word": "world",
      "count": 2
    },
    {
      "word": "42",
      "count": 1
    },
    {
      "word": "x2",
      "count": 1
    },
    {
      "word": "数据",
      "count": 1
    }
  ]
}
`},
	} {
		if got := render(t, r, tt.format); got != tt.want {
			t.Errorf("Write(%s) =\n%s\nwant\n%s", tt.format, got, tt.want)
		}
	}
	if want := []string{filepath.Join(dir, "d/n.bin")}; !slices.Equal(r.SkippedBinary, want) {
		t.Errorf("SkippedBinary = %q; want %q", r.SkippedBinary, want)
	}
	top, err := Seq(context.Background(), []string{dir}, Options{Top: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := render(t, top, "tsv"), "hello\t3\nété\t3\n"; got != want || top.DistinctWords != 6 {
		t.Errorf("Top 2: %q (distinct %d); want %q (distinct 6)", got, top.DistinctWords, want)
	}
}

type mode struct {
	name string
	run  func(ctx context.Context, paths []string, o Options) (*Result, error)
}

// pgasMode runs Run on ranks ranks and returns the root's result, checking
// that the other ranks return nil (or, under GatherAll, the same result).
func pgasMode(ranks int) func(ctx context.Context, paths []string, o Options) (*Result, error) {
	return func(ctx context.Context, paths []string, o Options) (*Result, error) {
		var mu sync.Mutex
		res := make([]*Result, ranks)
		err := pgas.Run(ctx, pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
			x, err := Run(ctx, r, paths, o)
			mu.Lock()
			res[r.ID()] = x
			mu.Unlock()
			return err
		})
		if err != nil {
			return nil, err
		}
		for q, x := range res {
			switch {
			case q == o.Root && x == nil:
				return nil, fmt.Errorf("root %d has no result", q)
			case q != o.Root && o.Gather == reduce.GatherAll:
				if x == nil || render(nopT{}, x, "json") != render(nopT{}, res[o.Root], "json") {
					return nil, fmt.Errorf("GatherAll: rank %d's result differs from the root's", q)
				}
			case q != o.Root && o.Gather != reduce.GatherAll && x != nil:
				return nil, fmt.Errorf("rank %d returned a result although it is not the root", q)
			}
		}
		return res[o.Root], nil
	}
}

// nopT lets render run outside a test goroutine's helpers.
type nopT struct{ testing.TB }

func (nopT) Helper()           {}
func (nopT) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

type config struct {
	ranks int
	o     Options
}

func (c config) String() string {
	return fmt.Sprintf("ranks=%d/%v/%v/%v/%v/node=%v/budget=%d/chunk=%d/root=%d", c.ranks, c.o.Dist, c.o.Map, c.o.Gather, c.o.Transfer, c.o.Node, c.o.NodeBudget, c.o.ChunkBytes, c.o.Root)
}

func configs(chunk int64) []config {
	var cs []config
	for _, ranks := range []int{1, 2, 3} {
		for _, dist := range []distrib.Kind{distrib.Block, distrib.Cyclic, distrib.Balanced, distrib.BestFit} {
			for _, array := range []bool{false, true} {
				for _, g := range []reduce.Gather{reduce.GatherAll, reduce.GatherRoot, reduce.GatherNone, reduce.GatherPartitioned} {
					for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
						cs = append(cs, config{ranks, Options{Options: mr.Options{Dist: dist, Map: apptest.MapMode(!array), Gather: g, Transfer: tr, Root: (ranks - 1) * int(dist) % ranks, Threshold: 64}, ChunkBytes: chunk}})
					}
				}
			}
		}
	}
	// Node-level combining forced on (small inputs do not reach Auto's
	// threshold), and 64 ranks on one node with it on and off.
	for _, ranks := range []int{2, 3, 64} {
		for _, g := range []reduce.Gather{reduce.GatherAll, reduce.GatherRoot, reduce.GatherPartitioned} {
			for _, node := range []reduce.NodeCombine{reduce.NodeOn, reduce.NodeOff} {
				if node == reduce.NodeOff && ranks < 64 {
					continue // the loops above
				}
				cs = append(cs, config{ranks, Options{Options: mr.Options{Gather: g, Node: node, Root: ranks / 3}, ChunkBytes: chunk}})
			}
			// The smallest budget: ranks hand their words to the node's
			// table while they map.
			cs = append(cs, config{ranks, Options{Options: mr.Options{Gather: g, Node: reduce.NodeOn, NodeBudget: 1, Root: ranks / 3}, ChunkBytes: chunk}})
		}
	}
	return cs
}

// checkAll runs every mode and configuration on paths and compares each
// format with seq's, and seq's TSV with the oracle's.
func checkAll(t *testing.T, paths []string, oracle string, chunk int64) {
	ctx := context.Background()
	seq, err := Seq(ctx, paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(t, seq, "tsv"); got != oracle {
		t.Fatalf("Seq TSV =\n%s\nwant (oracle)\n%s", got, oracle)
	}
	want := map[string]string{}
	for _, f := range Formats {
		want[f] = render(t, seq, f)
	}
	check := func(name string, r *Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range Formats {
			if got := render(t, r, f); got != want[f] {
				t.Fatalf("%s: %s output =\n%s\nwant (seq)\n%s", name, f, got, want[f])
			}
		}
	}
	for _, c := range []int64{0, chunk} {
		r, err := Goroutines(ctx, paths, Options{ChunkBytes: c})
		check(fmt.Sprintf("goroutines/chunk=%d", c), r, err)
	}
	for _, c := range configs(chunk) {
		r, err := pgasMode(c.ranks)(ctx, paths, c.o)
		check(c.String(), r, err)
	}
}

func TestSmallAllModes(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, small)
	oracle, files, binary := oracleTSV(t, dir)
	if files != 5 || binary != 1 {
		t.Fatalf("oracle read %d files, %d binary; want 5, 1", files, binary)
	}
	checkAll(t, []string{dir}, oracle, 7) // tiny chunks: words span chunk boundaries
}

// TestChunkBoundaries cuts random multi-byte, invalid and mixed text at
// every chunk size up to 40 bytes and compares with whole-file counting.
func TestChunkBoundaries(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	files := map[string]string{}
	for i := range 6 {
		files[fmt.Sprintf("f%d.txt", i)] = randomText(rng, 50+rng.IntN(300))
	}
	writeTree(t, dir, files)
	oracle, _, _ := oracleTSV(t, dir)
	ctx := context.Background()
	for c := int64(1); c <= 40; c++ {
		r, err := Goroutines(ctx, []string{dir}, Options{ChunkBytes: c})
		if err != nil {
			t.Fatal(err)
		}
		if got := render(t, r, "tsv"); got != oracle {
			t.Fatalf("ChunkBytes %d:\n%s\nwant\n%s", c, got, oracle)
		}
	}
}

// TestLongWords: words much longer than the chunks, between multi-byte
// and invalid separators, at every chunk size up to 60 bytes and around
// the cut's read block, give the whole-file counts: a chunk inside a word
// owns no word, and finds that without reading past its end.
func TestLongWords(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 8))
	seps := []string{" ", "—", "\xff", "\xe6\x95", "²", "\n", ",", "\u3000"}
	files := map[string]string{}
	for i := range 4 {
		var b strings.Builder
		for range 12 {
			b.WriteString(strings.Repeat(string(rune('a'+rng.IntN(3))), 1+rng.IntN(90)))
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		files[fmt.Sprintf("f%d.txt", i)] = b.String()
	}
	writeTree(t, dir, files)
	huge := t.TempDir()
	writeTree(t, huge, map[string]string{"huge.txt": "x " + strings.Repeat("é", 3*cutBlock) + "—y\n"})
	ctx := context.Background()
	for _, c := range []struct {
		dir   string
		sizes []int64
	}{
		{dir, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 17, 19, 23, 29, 31, 37, 41, 47, 53, 59, 60}},
		{huge, []int64{1000, 4099, cutBlock - 1, cutBlock, cutBlock + 1, 2*cutBlock + 3}},
	} {
		oracle, _, _ := oracleTSV(t, c.dir)
		for _, size := range c.sizes {
			r, err := Goroutines(ctx, []string{c.dir}, Options{ChunkBytes: size})
			if err != nil {
				t.Fatal(err)
			}
			if got := render(t, r, "tsv"); got != oracle {
				t.Fatalf("ChunkBytes %d:\n%s\nwant\n%s", size, got, oracle)
			}
		}
	}
	// The cut's window stays within one block however long the word.
	var rd reader
	f, err := os.Open(filepath.Join(huge, "huge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	if p, err := rd.cut(f, fi.Size(), 10); err != nil || p != fi.Size()-int64(len("y\n")) {
		t.Fatalf("cut = %d, %v; want the end of the long word's separator, %d", p, err, fi.Size()-int64(len("y\n")))
	}
	if cap(rd.win) > cutBlock+3 {
		t.Errorf("the cut's window grew to %d bytes, want at most %d", cap(rd.win), cutBlock+3)
	}
}

func TestPathsAndErrors(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, small)
	ctx := context.Background()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "sub")
	oracleA, _, _ := oracleTSV(t, a)
	oracleAB, _, _ := oracleTSV(t, a, b)
	for _, m := range []mode{{"seq", Seq}, {"goroutines", Goroutines}, {"pgasmr/2", pgasMode(2)}} {
		t.Run(m.name, func(t *testing.T) {
			r, err := m.run(ctx, []string{a}, Options{})
			if err != nil || render(t, r, "tsv") != oracleA {
				t.Errorf("one file: %v; want the oracle's\n%s", err, oracleA)
			}
			// Several paths, one given twice and one inside another.
			r, err = m.run(ctx, []string{b, a, filepath.Join(b, "b.txt")}, Options{})
			if err != nil || render(t, r, "tsv") != oracleAB || r.Files != 4 {
				t.Errorf("several paths: %v, %d files; want the oracle's and 4 files", err, r.Files)
			}
			missing := filepath.Join(dir, "missing.txt")
			_, err = m.run(ctx, []string{a, missing}, Options{})
			if err == nil || !strings.Contains(err.Error(), missing) {
				t.Errorf("missing file: %v; want an error naming %s", err, missing)
			}
			r, err = m.run(ctx, []string{a, missing}, Options{SkipUnreadable: true})
			if err != nil || render(t, r, "tsv") != oracleA || len(r.Unreadable) != 1 || r.Unreadable[0].Path != missing {
				t.Errorf("SkipUnreadable: %v, %+v; want the oracle's and %s skipped", err, r, missing)
			}
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := m.run(cctx, []string{dir}, Options{}); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled: %v; want context.Canceled", err)
			}
			if _, err := m.run(ctx, []string{a}, Options{Top: -1, ChunkBytes: -1}); err == nil || !strings.Contains(err.Error(), "Top") || !strings.Contains(err.Error(), "ChunkBytes") {
				t.Errorf("bad options: %v; want both problems", err)
			}
		})
	}
	// A symbolic link to a directory, given as a path, is walked; links to
	// directories inside a tree are not followed.
	links := t.TempDir()
	if err := os.Symlink(b, filepath.Join(links, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(b, filepath.Join(b, "loop")); err != nil {
		t.Fatal(err)
	}
	oracleB, _, _ := oracleTSV(t, b)
	if r, err := Seq(ctx, []string{filepath.Join(links, "sub")}, Options{}); err != nil || render(t, r, "tsv") != oracleB || r.Files != 3 {
		t.Errorf("symbolic link to a directory: %v; want the oracle's\n%s", err, oracleB)
	}
	if os.Geteuid() != 0 { // root reads anything
		locked := filepath.Join(dir, "locked.txt")
		writeTree(t, dir, map[string]string{"locked.txt": "secret words"})
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := Seq(ctx, []string{locked}, Options{}); err == nil || !strings.Contains(err.Error(), locked) {
			t.Errorf("unreadable file: %v; want an error naming %s", err, locked)
		}
		r, err := pgasMode(2)(ctx, []string{locked, a}, Options{SkipUnreadable: true})
		if err != nil || len(r.Unreadable) != 1 || render(t, r, "tsv") != oracleA {
			t.Errorf("SkipUnreadable on a locked file: %v, %+v", err, r)
		}
	}
}

// extractSpam unpacks the first n messages of the SpamAssassin corpus.
func extractSpam(t *testing.T, n int) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "shared", "corpora", "spamassassin.tar.gz"))
	if err != nil {
		t.Skipf("SpamAssassin corpus not available: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	dir := t.TempDir()
	for got := 0; got < n; {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("tar entry %q escapes", h.Name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got++
	}
	return dir
}

func TestSpamAssassin(t *testing.T) {
	dir := extractSpam(t, 300)
	oracle, files, _ := oracleTSV(t, dir)
	ctx := context.Background()
	seq, err := Seq(ctx, []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(t, seq, "tsv"); got != oracle || seq.Files != int64(files) {
		t.Fatalf("Seq differs from the oracle on %d messages", files)
	}
	want := render(t, seq, "json")
	for _, c := range []config{
		{2, Options{Options: mr.Options{Map: mr.MapArray, Dist: distrib.Balanced}, ChunkBytes: 1000}},
		{3, Options{Options: mr.Options{Map: mr.MapArray, Dist: distrib.Cyclic, Gather: reduce.GatherAll}}},
		// Ranks hand their words to the node's table while they map.
		{3, Options{Options: mr.Options{Node: reduce.NodeOn, NodeBudget: 1}, ChunkBytes: 1000}},
		{8, Options{Options: mr.Options{Node: reduce.NodeOn, NodeBudget: 2048, Gather: reduce.GatherRoot, Root: 5}}},
	} {
		r, err := pgasMode(c.ranks)(ctx, []string{dir}, c.o)
		if err != nil {
			t.Fatal(err)
		}
		if got := render(t, r, "json"); got != want {
			t.Errorf("%v differs from seq", c)
		}
	}
	r, err := Goroutines(ctx, []string{dir}, Options{ChunkBytes: 777})
	if err != nil || render(t, r, "json") != want {
		t.Errorf("goroutines differs from seq: %v", err)
	}
	t.Logf("%d messages, %d distinct words, %d words", files, seq.DistinctWords, seq.TotalWords)
}

func TestGenerate(t *testing.T) {
	gen := func() string {
		dir := t.TempDir()
		if err := Generate(dir, 200<<10, 5, 42); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	d1, d2 := gen(), gen()
	o1, files, _ := oracleTSV(t, d1)
	o2, _, _ := oracleTSV(t, d2)
	if o1 != o2 || files != 5 {
		t.Fatalf("Generate is not deterministic or wrote %d files", files)
	}
	var size int64
	filepath.WalkDir(d1, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			info, _ := d.Info()
			size += info.Size()
		}
		return err
	})
	if size < 200<<10 || size > 201<<10 {
		t.Errorf("Generate(200 KiB) wrote %d bytes", size)
	}
	for _, w := range []string{"the\t", "数据\t", "café\t"} {
		if !strings.Contains(o1, w) {
			t.Errorf("generated corpus lacks %q", w)
		}
	}
	if !strings.HasPrefix(o1, "the\t") {
		t.Errorf("generated corpus's commonest word is not \"the\":\n%.200s", o1)
	}
	for _, c := range []config{
		{2, Options{Options: mr.Options{Map: mr.MapArray, Dist: distrib.Balanced}, ChunkBytes: 10 << 10}},
		{3, Options{Options: mr.Options{Map: mr.MapArray, Dist: distrib.BestFit, Gather: reduce.GatherRoot, Transfer: reduce.ElementByElement}, ChunkBytes: 7 << 10}},
	} {
		r, err := pgasMode(c.ranks)(context.Background(), []string{d1}, c.o)
		if err != nil || render(t, r, "tsv") != o1 {
			t.Errorf("%v differs from the oracle: %v", c, err)
		}
	}
}
