package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode"
)

// corpus writes a small tree of text files, generated from a seed: nested
// directories, an empty file, a last line without a newline, CRLF line
// ends, words repeated on a line, mixed case, digits, punctuation and
// non-ASCII letters.
func corpus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	vocab := strings.Fields("the The THE cat dog gopher Gopher café naïve über 42 x1 go-to a,b end. (paren) ünïcode pgas mr")
	rng := rand.New(rand.NewPCG(13, 1))
	text := func(lines int, eol string) string {
		var b strings.Builder
		for range lines {
			for range rng.IntN(9) {
				b.WriteString(vocab[rng.IntN(len(vocab))])
				b.WriteString(" ")
			}
			b.WriteString(eol)
		}
		return b.String()
	}
	files := map[string]string{
		"a/one.txt":      text(40, "\n"),
		"a/b/two.txt":    text(25, "\n"),
		"a/b.txt":        text(10, "\n"),
		"empty.txt":      "",
		"no-newline.txt": text(5, "\n") + "gopher at the end",
		"crlf.txt":       text(12, "\r\n"),
		"z/deep/er.txt":  text(60, "\n"),
	}
	for name, s := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// oracle indexes the files under dir sequentially and prints the index as
// invindex does, with top and word as its flags say.
func oracle(t *testing.T, dir string, top int, word string) string {
	t.Helper()
	idx := map[string][]Pos{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(b), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		for i, line := range lines {
			seen := map[string]bool{}
			var w []rune
			for _, c := range strings.ToLower(line) + " " {
				if unicode.IsLetter(c) || unicode.IsDigit(c) {
					w = append(w, c)
					continue
				}
				if s := string(w); len(w) > 0 && !seen[s] && (word == "" || s == word) {
					seen[s] = true
					idx[s] = append(idx[s], Pos{path, i + 1})
				}
				w = w[:0]
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	words := make([]string, 0, len(idx))
	for w := range idx {
		words = append(words, w)
	}
	slices.Sort(words)
	if top > 0 {
		slices.SortStableFunc(words, func(a, b string) int { return cmp.Compare(len(idx[b]), len(idx[a])) })
		words = words[:min(top, len(words))]
	}
	var out strings.Builder
	for _, w := range words {
		ps := idx[w]
		slices.SortFunc(ps, func(a, b Pos) int {
			if a.File != b.File {
				return strings.Compare(a.File, b.File)
			}
			return a.Line - b.Line
		})
		fmt.Fprintf(&out, "%s\t%d", w, len(ps))
		for _, p := range ps {
			fmt.Fprintf(&out, "\t%s:%d", p.File, p.Line)
		}
		out.WriteString("\n")
	}
	return out.String()
}

// TestIndex: the index invindex prints is the oracle's at 1, 2 and 3 ranks,
// under every gather mode, several distributions and transfers, with and
// without node-level combining, on any root.
func TestIndex(t *testing.T) {
	dir := corpus(t)
	all := oracle(t, dir, 0, "")
	if strings.Count(all, "\n") < 15 || !strings.Contains(all, "gopher\t") {
		t.Fatalf("the oracle's index is too small to test with:\n%s", all)
	}
	for _, n := range []int{1, 2, 3} {
		for _, mode := range []string{
			"default", "gather-all", "gather-root", "gather-none", "gather-partitioned+node=off",
			"cyclic+no-collectives", "balanced+node=on", fmt.Sprintf("gather-root+root=%d", n-1),
		} {
			args := []string{"-np", fmt.Sprint(n), "-mode", mode, dir}
			t.Run(fmt.Sprintf("np=%d/%s", n, mode), func(t *testing.T) {
				if got := runOut(t, args...); got != all {
					t.Fatalf("invindex %q:\n%s\nwant\n%s", args, got, all)
				}
			})
		}
	}
	// Under a memory budget far below the index (-memory): the stores
	// spill, the pairs move in rounds, and nothing is left in -tmp.
	for _, n := range []int{1, 2, 3} {
		for _, mode := range []string{"default", "gather-all", "gather-root+root=0", "gather-partitioned+node=off"} {
			tmp := t.TempDir()
			args := []string{"-np", fmt.Sprint(n), "-mode", mode, "-memory", "4KiB", "-tmp", tmp, dir}
			t.Run(fmt.Sprintf("np=%d/%s/memory=4KiB", n, mode), func(t *testing.T) {
				if got := runOut(t, args...); got != all {
					t.Fatalf("invindex %q:\n%s\nwant\n%s", args, got, all)
				}
				if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
					t.Errorf("-tmp holds %d entries after the job (%v)", len(left), err)
				}
			})
		}
	}
	for _, c := range []struct {
		top  int
		word string
	}{{5, ""}, {1000, ""}, {0, "gopher"}, {0, "missing"}, {2, "the"}} {
		want := oracle(t, dir, c.top, strings.ToLower(c.word))
		for _, n := range []int{1, 3} {
			args := []string{"-np", fmt.Sprint(n), "-top", fmt.Sprint(c.top), "-word", strings.ToUpper(c.word), dir}
			if got := runOut(t, args...); got != want {
				t.Errorf("invindex %q:\n%s\nwant\n%s", args, got, want)
			}
		}
	}
}

func runOut(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(args, &out); err != nil {
		t.Fatalf("invindex %q: %v", args, err)
	}
	return out.String()
}

// TestErrors: an input that cannot be read is an error naming it.
func TestErrors(t *testing.T) {
	dir := corpus(t)
	missing := filepath.Join(dir, "missing.txt")
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-np", "2", dir, missing}, missing},
		{[]string{"-np", "2", fifo}, fifo + ": a named pipe"},
		{[]string{"-np", "2", "-mode", "array", dir}, "element-by-element"},
		{[]string{"-np", "2"}, "usage"},
	} {
		err := run(c.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("invindex %q: %v; want an error naming %q", c.args, err, c.want)
		}
	}
}
