package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Large vocabularies: inputs of random 8-letter tokens, nearly all
// distinct, whose intermediate pairs are many times the collectives'
// staging area and the default 16 MiB segments. The default command must
// give the seq baseline's bytes at every rank count and transport.
//
// The sizes run are PGASMR_VOCAB_MB (comma-separated megabytes; default 5).
// A race-built binary is far too slow for these inputs, so this test
// builds mrrun without the race detector (the race-built one runs the same
// code paths on small inputs in the other tests).
//
//	PGASMR_VOCAB_MB=5,50,200 go test -run TestLargeVocabulary -timeout 2h ./cmd/mrrun

var (
	plainOnce sync.Once
	plainBin  string
	plainErr  error
)

// plainMrrun returns an mrrun binary built without the race detector.
func plainMrrun(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		return binPath
	}
	plainOnce.Do(func() {
		plainBin = filepath.Join(filepath.Dir(binPath), "mrrun-plain")
		out, err := exec.Command("go", "build", "-o", plainBin, ".").CombinedOutput()
		if err != nil {
			plainErr = fmt.Errorf("building mrrun without -race: %v\n%s", err, out)
		}
	})
	if plainErr != nil {
		t.Fatal(plainErr)
	}
	return plainBin
}

// vocabSizes returns the input sizes in MB to run.
func vocabSizes(t *testing.T) []int {
	t.Helper()
	s := os.Getenv("PGASMR_VOCAB_MB")
	if s == "" {
		return []int{5}
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			t.Fatalf("PGASMR_VOCAB_MB=%q: %q is not a positive number of megabytes", s, f)
		}
		out = append(out, n)
	}
	return out
}

// writeTokens writes about size bytes of random 8-letter lower-case tokens
// (ten to a line) to w, and returns the first nwords distinct ones.
func writeTokens(w io.Writer, size int64, seed uint64, nwords int) ([]string, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	bw := bufio.NewWriterSize(w, 1<<20)
	var tok [9]byte
	seen := map[string]bool{}
	var words []string
	for i := int64(0); i*9 < size; i++ {
		for j := range 8 {
			tok[j] = byte('a' + rng.IntN(26))
		}
		tok[8] = ' '
		if i%10 == 9 {
			tok[8] = '\n'
		}
		if len(words) < nwords && !seen[string(tok[:8])] {
			seen[string(tok[:8])] = true
			words = append(words, string(tok[:8]))
		}
		if _, err := bw.Write(tok[:]); err != nil {
			return nil, err
		}
	}
	return words, bw.Flush()
}

// vocabInputs makes the inputs for one size: a wordcount file, and a
// spamcount mail directory (one message per 256 KiB of tokens) with a word
// list of 200,000 of its tokens per 5 MB.
func vocabInputs(t *testing.T, mb int) (text, mail, words string) {
	t.Helper()
	dir := t.TempDir()
	size := int64(mb) << 20
	text = filepath.Join(dir, "tokens.txt")
	f, err := os.Create(text)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writeTokens(f, size, uint64(mb), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	mail = filepath.Join(dir, "mail")
	if err := os.Mkdir(mail, 0o755); err != nil {
		t.Fatal(err)
	}
	const perMessage = 256 << 10
	var list []string
	nwords := 200_000 * max(1, mb/5)
	for i := int64(0); i*perMessage < size; i++ {
		var b bytes.Buffer
		fmt.Fprintf(&b, "From: a@example.org\nSubject: tokens %d\n\n", i)
		ws, err := writeTokens(&b, perMessage, uint64(mb)<<32|uint64(i), nwords-len(list))
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, ws...)
		if err := os.WriteFile(filepath.Join(mail, fmt.Sprintf("%06d.eml", i)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Tokens repeat across messages only by chance; the list must not.
	seen := map[string]bool{}
	uniq := list[:0]
	for _, w := range list {
		if !seen[w] {
			seen[w] = true
			uniq = append(uniq, w)
		}
	}
	words = filepath.Join(dir, "words.txt")
	if err := os.WriteFile(words, []byte(strings.Join(uniq, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return text, mail, words
}

// runTo runs bin with args, the result going to a file, and returns the
// file's SHA-256, the wall time and stderr.
func runTo(t *testing.T, bin string, args ...string) (sum string, took time.Duration) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.txt")
	cmd := exec.Command(bin, append([]string{"-q", "-o", out}, args...)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("mrrun %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	took = time.Since(start)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("mrrun %s: empty output", strings.Join(args, " "))
	}
	os.Remove(out)
	return fmt.Sprintf("%x", h.Sum(nil)), took
}

// TestLargeVocabulary: wordcount and spamcount on inputs of distinct
// tokens at 1, 2 and 8 ranks, in-process and under shm, with collectives
// and element by element, give the seq baseline's bytes.
func TestLargeVocabulary(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	bin := plainMrrun(t)
	for _, mb := range vocabSizes(t) {
		t.Run(fmt.Sprintf("%dMB", mb), func(t *testing.T) {
			text, mail, words := vocabInputs(t, mb)
			jobs := map[string][]string{
				"wordcount": {"wordcount", text},
				"spamcount": {"spamcount", "--words", words, mail},
			}
			for _, app := range []string{"wordcount", "spamcount"} {
				job := jobs[app]
				want, seqTime := runTo(t, bin, append([]string{"--baseline", "seq"}, job...)...)
				t.Logf("%s %d MB: seq %v", app, mb, seqTime.Round(time.Millisecond))
				for _, cfg := range [][]string{
					{"-np", "1"},
					{"-np", "2"},
					{"-np", "8"},
					{"-np", "2", "--no-collectives"},
					{"-np", "3", "--gather", "root"},
					{"--transport", "shm", "-np", "2"},
					{"--transport", "shm", "-np", "8"},
				} {
					got, took := runTo(t, bin, append(cfg, job...)...)
					t.Logf("%s %d MB: %s %v", app, mb, strings.Join(cfg, " "), took.Round(time.Millisecond))
					if got != want {
						t.Errorf("%s %d MB: mrrun %s: output differs from --baseline seq", app, mb, strings.Join(cfg, " "))
					}
				}
			}
		})
	}
}
