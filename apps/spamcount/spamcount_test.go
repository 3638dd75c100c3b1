package spamcount

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

func TestDefaultWords(t *testing.T) {
	ws := DefaultWords()
	if len(ws) != 256 {
		t.Fatalf("len(DefaultWords()) = %d; want 256", len(ws))
	}
	seen := map[string]bool{}
	for _, w := range ws {
		if seen[w] {
			t.Errorf("%q listed twice", w)
		}
		seen[w] = true
		// Independent oracle of the word rule: one field, already lower case.
		f := strings.FieldsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
		if len(f) != 1 || f[0] != w || strings.Map(unicode.ToLower, w) != w {
			t.Errorf("%q is not one lower-case token: %q", w, f)
		}
	}
	for _, w := range []string{"viagra", "free", "click", "unsubscribe", "winner", "bitcoin", "password", "trojan", "ransomware"} {
		if !seen[w] {
			t.Errorf("%q not listed", w)
		}
	}
}

func TestParseWords(t *testing.T) {
	ws, err := ParseWords([]byte("# comment\n free \n\nΚλικ\nspam\n"))
	if err == nil {
		t.Errorf("ParseWords with upper-case Κ = %q; want an error", ws)
	}
	ws, err = ParseWords([]byte("# comment\n free \n\nκλικ\nspam2\n"))
	if err != nil || !slices.Equal(ws, []string{"free", "κλικ", "spam2"}) {
		t.Errorf("ParseWords = %q, %v; want [free κλικ spam2]", ws, err)
	}
	for _, bad := range []string{"", "# only\n", "a\nb\na\n", "two words\n", "e-mail\n", "Free\n", "x\xff\n"} {
		if ws, err := ParseWords([]byte(bad)); err == nil {
			t.Errorf("ParseWords(%q) = %q; want an error", bad, ws)
		}
	}
}

// oracleCount counts listed words in text with the standard library.
func oracleCount(words []string, text string) map[string]int64 {
	listed := map[string]bool{}
	for _, w := range words {
		listed[w] = true
	}
	got := map[string]int64{}
	// Ranging over a string yields RuneError for invalid bytes, which is
	// neither a letter nor a number.
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		if w := strings.Map(unicode.ToLower, f); listed[w] {
			got[w]++
		}
	}
	return got
}

func matchCount(words []string, text string) map[string]int64 {
	m := newMatcher(words)
	m.add([]byte(text))
	got := map[string]int64{}
	m.flush(func(i int32, n int64) { got[words[i]] += n })
	return got
}

func TestMatcherOracle(t *testing.T) {
	words := []string{"free", "κλικ", "straße", "i̇", "ǆ", "x1", "a", "ab", "abc"}
	pieces := []string{"free", "FREE", "Free", "ΚΛΙΚ", "κλικ", "STRASSE", "Straße", "İ", "I", "ǅ", "Ǆ", "X1", "x", "1", "A", "ab", "AbC",
		" ", ",", "-", "\n", "\xff", "\xc3", "\xe2\x82", "é", "٣", "𝟙", "\u00a0", "<", "abcd", "ABCDE"}
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 2000 {
		var b strings.Builder
		for range r.IntN(30) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := b.String()
		if got, want := matchCount(words, text), oracleCount(words, text); !maps.Equal(got, want) {
			t.Fatalf("case %d: matcher(%q) = %v; want %v", i, text, got, want)
		}
	}
}

func FuzzMatcher(f *testing.F) {
	words := DefaultWords()
	f.Add("Free VIAGRA\xffclick")
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := matchCount(words, text), oracleCount(words, text); !maps.Equal(got, want) {
			t.Fatalf("matcher(%q) = %v; want %v", text, got, want)
		}
	})
}

const mbox = "From alice@example.com Mon Jan  1 00:00:00 2024\nSubject: one\n\nfree trojan\n\n" +
	"From bob@example.com Mon Jan  1 00:00:01 2024\nSubject: two lottery\n\nhello cash\nFrom the desk of the winner\n\n" +
	"From carol@example.com Mon Jan  1 00:00:02 2024\r\nSubject: three\r\n\r\nransomware ransomware\r\n"

// handDir writes the hand-made messages (one per file, in a tree) and the
// mbox, and returns the directory and the expected result.
func handDir(t testing.TB) (string, *Result) {
	dir := t.TempDir()
	want := map[string][2]int64{}
	var msgs, bad int64
	expect := func(m map[string]int64, malformed bool) {
		msgs++
		if malformed {
			bad++
		}
		for w, n := range m {
			c := want[w]
			want[w] = [2]int64{c[0] + n, c[1] + 1}
		}
	}
	for i, m := range handMessages {
		sub := filepath.Join(dir, fmt.Sprintf("d%d", i%3))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("m%02d.eml", i)), []byte(m.raw), 0o644); err != nil {
			t.Fatal(err)
		}
		expect(m.want, m.malformed)
	}
	if err := os.WriteFile(filepath.Join(dir, "box.mbox"), []byte(mbox), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(map[string]int64{"free": 1, "trojan": 1}, false)
	expect(map[string]int64{"lottery": 1, "cash": 1, "winner": 1}, false)
	expect(map[string]int64{"ransomware": 2}, false)
	res := &Result{Messages: msgs, Malformed: bad}
	for _, w := range DefaultWords() {
		res.Words = append(res.Words, WordCount{Word: w, Occurrences: want[w][0], Messages: want[w][1]})
	}
	return dir, res
}

func TestScanMbox(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "box")
	if err := os.WriteFile(path, []byte(mbox), 0o644); err != nil {
		t.Fatal(err)
	}
	msgs, err := Scan(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		b, err := m.read(nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	want := []string{
		"Subject: one\n\nfree trojan\n\n",
		"Subject: two lottery\n\nhello cash\nFrom the desk of the winner\n\n",
		"Subject: three\r\n\r\nransomware ransomware\r\n",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mbox messages = %q; want %q", got, want)
	}
	if _, err := Scan(context.Background(), []string{filepath.Join(dir, "missing")}); err == nil {
		t.Errorf("Scan of a missing path: want an error")
	}
}

// TestScanLinkedDirectory: a symbolic link to a directory, given as a
// path, is walked (mr.ListFiles), as wordcount does; inside the tree links
// to directories are not followed.
func TestScanLinkedDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "box"), []byte(mbox), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	direct, err := Scan(context.Background(), []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	linked, err := Scan(context.Background(), []string{link})
	if err != nil || len(linked) != 3 || len(direct) != 3 {
		t.Fatalf("Scan through a link = %v, %v; want the 3 messages of %v", linked, err, direct)
	}
	for i, m := range linked {
		if d := direct[i]; m.Path != filepath.Join(link, "box") || m.Off != d.Off || m.Len != d.Len {
			t.Errorf("message %d through a link = %v; want %v under %s", i, m, d, link)
		}
	}
}

func output(t testing.TB, r *Result, format string) string {
	t.Helper()
	if r == nil {
		t.Fatal("nil result")
	}
	var b bytes.Buffer
	if err := r.Write(&b, format); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestFormats(t *testing.T) {
	r := &Result{Messages: 12, Malformed: 1, Words: []WordCount{{"free", 1234, 7}, {"κλικ", 0, 0}, {"x", 5, 12}}}
	want := map[string]string{
		"text": "word  occurrences  messages\n" +
			"free         1234         7\n" +
			"κλικ            0         0\n" +
			"x               5        12\n",
		"tsv":  "free\t1234\t7\nκλικ\t0\t0\nx\t5\t12\n",
		"csv":  "word,occurrences,messages\nfree,1234,7\nκλικ,0,0\nx,5,12\n",
		"json": "{\n  \"app\": \"spamcount\",\n  \"messages\": 12,\n  \"words\": [\n    {\n      \"word\": \"free\",\n      \"occurrences\": 1234,\n      \"messages\": 7\n    },\n    {\n      \"word\": \"κλικ\",\n      \"occurrences\": 0,\n      \"messages\": 0\n    },\n    {\n      \"word\": \"x\",\n      \"occurrences\": 5,\n      \"messages\": 12\n    }\n  ]\n}\n",
	}
	for _, f := range Formats {
		if got := output(t, r, f); got != want[f] {
			t.Errorf("Write(%s) = %q; want %q", f, got, want[f])
		}
	}
	if got := output(t, r, ""); got != want["text"] {
		t.Errorf("Write(\"\") = %q; want the text format", got)
	}
	if err := r.Write(io.Discard, "xml"); err == nil {
		t.Errorf("Write(xml): want an error")
	}
}

// config is one pgasmr configuration.
type config struct {
	ranks int
	o     Options
}

func (c config) String() string {
	return fmt.Sprintf("ranks=%d/%v/%v/root=%d/%v/node=%v", c.ranks, c.o.Dist, c.o.Gather, c.o.Root, c.o.Transfer, c.o.Node)
}

func configs() []config {
	var cs []config
	for _, ranks := range []int{1, 2, 3} {
		for _, d := range []distrib.Kind{distrib.Block, distrib.Cyclic, distrib.Balanced, distrib.BestFit} {
			for _, g := range []reduce.Gather{reduce.GatherAll, reduce.GatherRoot, reduce.GatherNone, reduce.GatherPartitioned} {
				for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
					cs = append(cs, config{ranks, Options{Options: mr.Options{Dist: d, Threshold: 100, Gather: g, Root: ranks - 1, Transfer: tr}}})
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
				cs = append(cs, config{ranks, Options{Options: mr.Options{Gather: g, Node: node, Root: ranks / 3}}})
			}
		}
	}
	return cs
}

// runJob runs Run on c.ranks in-process ranks and returns the result,
// checking that exactly the ranks that should have one do and that they
// agree.
func runJob(t testing.TB, c config, paths []string) *Result {
	t.Helper()
	var mu sync.Mutex
	results := make([]*Result, c.ranks)
	err := pgas.Run(context.Background(), pgas.Config{Ranks: c.ranks}, func(ctx context.Context, r *pgas.Rank) error {
		res, err := Run(ctx, r, paths, c.o)
		mu.Lock()
		results[r.ID()] = res
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	root := results[c.o.Root]
	for id, res := range results {
		switch {
		case c.o.Gather == reduce.GatherAll && (res == nil || output(t, res, "tsv") != output(t, root, "tsv")):
			t.Errorf("%v: rank %d result differs from the root's", c, id)
		case c.o.Gather != reduce.GatherAll && id != c.o.Root && res != nil:
			t.Errorf("%v: rank %d has a result", c, id)
		}
	}
	return root
}

func TestHandCorpus(t *testing.T) {
	dir, want := handDir(t)
	ctx := context.Background()
	paths := []string{dir}
	seq, err := Seq(ctx, paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if seq.Messages != want.Messages || seq.Malformed != want.Malformed || !slices.Equal(seq.Words, want.Words) {
		for i := range want.Words {
			if seq.Words[i] != want.Words[i] {
				t.Errorf("Seq: %v; want %v", seq.Words[i], want.Words[i])
			}
		}
		t.Fatalf("Seq: messages %d malformed %d; want %d %d", seq.Messages, seq.Malformed, want.Messages, want.Malformed)
	}
	wantOut := map[string]string{}
	for _, f := range Formats {
		wantOut[f] = output(t, want, f)
	}
	check := func(name string, r *Result) {
		t.Helper()
		if r.Malformed != want.Malformed {
			t.Errorf("%s: malformed %d; want %d", name, r.Malformed, want.Malformed)
		}
		for _, f := range Formats {
			if got := output(t, r, f); got != wantOut[f] {
				t.Errorf("%s: %s output differs:\n%s\nwant\n%s", name, f, got, wantOut[f])
			}
		}
	}
	check("seq", seq)
	g, err := Goroutines(ctx, paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	check("goroutines", g)
	for _, c := range configs() {
		check(c.String(), runJob(t, c, paths))
	}
}

func TestWordsFile(t *testing.T) {
	dir, _ := handDir(t)
	wf := filepath.Join(t.TempDir(), "words.txt")
	if err := os.WriteFile(wf, []byte("ransomware\nfree\nnotthere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{WordsFile: wf}
	// free: plain 3 + qp 1 + encoded subject 1 + bad header 1 + bad base64 1 + invalid utf-8 2 + mbox 1.
	want := "ransomware\t3\t2\nfree\t10\t7\nnotthere\t0\t0\n"
	seq, err := Seq(context.Background(), []string{dir}, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := output(t, seq, "tsv"); got != want {
		t.Errorf("Seq with %s = %q; want %q", wf, got, want)
	}
	if got := output(t, runJob(t, config{2, o}, []string{dir}), "tsv"); got != want {
		t.Errorf("Run with %s = %q; want %q", wf, got, want)
	}
	if _, err := Seq(context.Background(), []string{dir}, Options{WordsFile: wf + ".missing"}); err == nil {
		t.Errorf("missing words file: want an error")
	}
}

func TestValidate(t *testing.T) {
	bad := Options{Options: mr.Options{Dist: distrib.Custom, Threshold: -1, Gather: 9, Root: -1, Transfer: 7}}
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate: want errors")
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 5 {
		t.Errorf("Validate() = %v; want 5 problems", err)
	}
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
}

func TestCancel(t *testing.T) {
	dir, _ := handDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Seq(ctx, []string{dir}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Seq on a cancelled context: %v", err)
	}
	if _, err := Goroutines(ctx, []string{dir}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Goroutines on a cancelled context: %v", err)
	}
}

// extractCorpus unpacks the SpamAssassin corpus into a temporary directory,
// or skips the test.
func extractCorpus(t testing.TB) string {
	const path = "../../../shared/corpora/spamassassin.tar.gz"
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("real corpus not available (%v); it lives in ../shared/corpora beside the repository", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, dir+string(filepath.Separator)) {
			t.Fatalf("tar entry %q outside the directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(name, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func TestRealCorpus(t *testing.T) {
	dir := extractCorpus(t)
	seq, err := Seq(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if seq.Messages != 6046 {
		t.Errorf("messages = %d; want 6046", seq.Messages)
	}
	t.Logf("%d messages, %d malformed (counted partly raw)", seq.Messages, seq.Malformed)
	if seq.Malformed > seq.Messages/20 {
		t.Errorf("%d of %d messages malformed; want at most 5%%", seq.Malformed, seq.Messages)
	}
	free := seq.Words[slices.IndexFunc(seq.Words, func(w WordCount) bool { return w.Word == "free" })]
	if free.Messages < 1000 {
		t.Errorf("free in %d messages; want at least 1000 in this corpus", free.Messages)
	}
	par := runJob(t, config{2, Options{Options: mr.Options{Dist: distrib.Balanced, Gather: reduce.GatherPartitioned}}}, []string{dir})
	for _, f := range []string{"tsv", "json"} {
		if a, b := output(t, seq, f), output(t, par, f); a != b {
			t.Errorf("%s output: seq and pgasmr at 2 ranks differ", f)
		}
	}
}

func TestGenerate(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	const n = 100
	if err := Generate(a, n, 42); err != nil {
		t.Fatal(err)
	}
	if err := Generate(b, n, 42); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		name := fmt.Sprintf("%06d.eml", i)
		x, err1 := os.ReadFile(filepath.Join(a, name))
		y, err2 := os.ReadFile(filepath.Join(b, name))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Fatalf("%s differs between two runs with one seed (%v, %v)", name, err1, err2)
		}
	}
	seq, err := Seq(context.Background(), []string{a}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if seq.Messages != n || seq.Malformed != 0 {
		t.Errorf("generated: %d messages, %d malformed; want %d, 0", seq.Messages, seq.Malformed, n)
	}
	var listed int64
	for _, w := range seq.Words {
		listed += w.Occurrences
	}
	// Per message about 4.5 subject words and 275 body words, which the
	// alternative shapes (2 of 5) carry twice: 4.5 + 275*1.4 ≈ 390 words.
	want := float64(n) * 390 * ListedRate
	if f := float64(listed); f < 0.8*want || f > 1.2*want {
		t.Errorf("generated: %d listed words; want about %.0f", listed, want)
	}
	g, err := Goroutines(context.Background(), []string{a}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := runJob(t, config{2, Options{Options: mr.Options{Dist: distrib.Cyclic, Gather: reduce.GatherAll}}}, []string{a})
	for _, f := range Formats {
		if output(t, g, f) != output(t, seq, f) || output(t, p, f) != output(t, seq, f) {
			t.Errorf("generated corpus: %s outputs differ", f)
		}
	}
}

func TestRunErrors(t *testing.T) {
	dir, _ := handDir(t)
	for _, c := range []struct {
		name  string
		paths []string
		o     Options
	}{
		{"missing path", []string{filepath.Join(dir, "missing")}, Options{}},
		{"root out of range", []string{dir}, Options{Options: mr.Options{Root: 2}}},
		{"bad options", []string{dir}, Options{Options: mr.Options{Dist: distrib.Custom}}},
		{"missing words file", []string{dir}, Options{WordsFile: filepath.Join(dir, "nowords")}},
	} {
		err := pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
			_, err := Run(ctx, r, c.paths, c.o)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "spamcount:") {
			t.Errorf("%s: Run error %v; want a spamcount error", c.name, err)
		}
	}
}
