package main

import (
	"archive/tar"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode"
)

// spamAssassin unpacks one message in every of the SpamAssassin corpus
// (real mail: headers, HTML, base64, odd charsets and bytes that are not
// UTF-8) into a temporary directory, or skips the test. gzip decompresses
// it: compress/gzip takes 6 s under the race detector.
func spamAssassin(t *testing.T, every int) string {
	t.Helper()
	archive := filepath.Join("..", "..", "..", "shared", "corpora", "spamassassin.tar.gz")
	if _, err := os.Stat(archive); err != nil {
		t.Skipf("SpamAssassin corpus not available: %v", err)
	}
	data, err := exec.Command("gzip", "-dc", archive).Output()
	if err != nil {
		t.Fatalf("gzip -dc %s: %v", archive, err)
	}
	dir := t.TempDir()
	tr := tar.NewReader(bytes.NewReader(data))
	for i := 0; ; {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if i++; i%every != 0 {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("tar entry %q escapes the directory", h.Name)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// oracle counts the bigrams of the files under dir on one goroutine and
// prints them all as bigrams prints its top k, one a line.
func oracle(t *testing.T, dir string) []string {
	t.Helper()
	counts := map[[2]string]int64{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		prev, word := "", []rune(nil)
		for _, c := range strings.ToLower(string(b)) + " " {
			if unicode.IsLetter(c) {
				word = append(word, c)
				continue
			}
			if len(word) > 0 {
				if prev != "" {
					counts[[2]string{prev, string(word)}]++
				}
				prev, word = string(word), word[:0]
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	type count struct {
		b [2]string
		n int64
	}
	var all []count
	for b, n := range counts {
		all = append(all, count{b, n})
	}
	slices.SortFunc(all, func(x, y count) int {
		return cmp.Or(cmp.Compare(y.n, x.n), cmp.Compare(x.b[0], y.b[0]), cmp.Compare(x.b[1], y.b[1]))
	})
	lines := make([]string, len(all))
	for i, c := range all {
		lines[i] = fmt.Sprintf("%d\t%s\t%s\n", c.n, c.b[0], c.b[1])
	}
	return lines
}

// every is the part of the corpus TestTopBigrams takes: one message in
// every.
var every = 25

// TestTopBigrams: on a part of the SpamAssassin corpus, bigrams prints the
// oracle's top k at 1, 2 and 3 ranks under every gather mode, several
// distributions and transfers, with and without node-level combining, on
// any root. k cuts the list between two bigrams of the same count, so the
// tie-break decides which is printed. (The whole corpus takes 6 s a run.)
func TestTopBigrams(t *testing.T) {
	dir := spamAssassin(t, every)
	all := oracle(t, dir)
	count := func(line string) string { return strings.Split(line, "\t")[0] }
	k := 100
	for k < len(all) && count(all[k-1]) != count(all[k]) {
		k++
	}
	if k >= len(all) {
		t.Fatalf("no tie in the oracle's %d bigrams", len(all))
	}
	want := strings.Join(all[:k], "")
	for _, c := range []struct {
		ranks []int
		mode  string
	}{
		{[]int{1, 2, 3}, "default"},
		{[]int{2, 3}, "gather-all"},
		{[]int{2, 3}, "gather-root+root=1"},
		{[]int{3}, "gather-none"},
		{[]int{3}, "gather-partitioned+root=2"},
		{[]int{3}, "cyclic+no-collectives+node=off"},
		{[]int{2, 3}, "balanced+node=on+node-budget=1000+root=1"},
	} {
		for _, n := range c.ranks {
			args := []string{"-np", fmt.Sprint(n), "-mode", c.mode, "-k", fmt.Sprint(k), dir}
			t.Run(fmt.Sprintf("np=%d/%s", n, c.mode), func(t *testing.T) {
				var out bytes.Buffer
				if err := run(args, &out); err != nil {
					t.Fatalf("bigrams %q: %v", args, err)
				}
				if got := out.String(); got != want {
					t.Fatalf("bigrams %q:\n%s\nwant\n%s", args, got, want)
				}
			})
		}
	}
}

// TestErrors: an input that cannot be read is an error naming it.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-np", "2", missing}, missing},
		{[]string{"-np", "2", fifo}, fifo + ": a named pipe"},
		{[]string{"-np", "2", "-mode", "gather-any", dir}, "gather-any"},
		{[]string{"-np", "2", "-mode", "root=2", dir}, "root 2 is not a rank"},
	} {
		err := run(c.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bigrams %q: %v; want an error naming %q", c.args, err, c.want)
		}
	}
}
