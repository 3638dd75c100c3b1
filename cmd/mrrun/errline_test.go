package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestErrorLines: a failed job prints exactly one line: the first failing
// rank's error with its rank named once, each layer's prefix at most once,
// and the ranks that failed with the same text counted, not repeated.
// Which ranks fail on their own before the first failure stops the rest
// depends on timing, so the rank number and the count may vary where
// every rank reads the bad input; the rest of the line is exact.
func TestErrorLines(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(i*7 + 1)
	}
	junkBMP := write("junk.bmp", junk)
	csv := write("bad.csv", []byte("1,2\n3,4\nhello,5\n"))
	odd := write("odd.bin", []byte{1, 2, 3})
	words := write("words.txt", []byte("Hello\n"))
	missing := filepath.Join(dir, "missing.txt")
	q := regexp.QuoteMeta
	count := `( \(and 1 more rank\)| \(and [2-9] more ranks\))?`
	anyRank := `rank [0-9]: `
	for _, c := range []struct {
		args []string
		want string // a regular expression for the whole of stderr
	}{
		{[]string{"-np", "4", "histogram", junkBMP},
			`mrrun: ` + anyRank + q(`histogram: `+junkBMP+`: not a valid BMP: signature "\x01\b", want "BM"`) + count},
		{[]string{"--transport", "shm", "-np", "3", "histogram", junkBMP},
			`mrrun: ` + anyRank + q(`histogram: `+junkBMP+`: not a valid BMP: signature "\x01\b", want "BM"`) + count},
		{[]string{"--baseline", "seq", "histogram", junkBMP},
			q(`mrrun: histogram: ` + junkBMP + `: not a valid BMP: signature "\x01\b", want "BM"`)},
		{[]string{"-np", "2", "linreg", "--input-format", "csv", csv},
			q(`mrrun: rank 0: linreg: ` + csv + `:3 (offset 8): x "hello" is not a finite number`)},
		{[]string{"-np", "2", "--map", "element", "linreg", "--input-format", "csv", csv},
			q(`mrrun: rank 0: linreg: ` + csv + `:3 (offset 8): x "hello" is not a finite number`)},
		{[]string{"--transport", "shm", "-np", "2", "linreg", "--input-format", "csv", csv},
			q(`mrrun: rank 0: linreg: ` + csv + `:3 (offset 8): x "hello" is not a finite number`)},
		{[]string{"-np", "2", "linreg", odd},
			`mrrun: ` + anyRank + q(`linreg: `+odd+`: size 3 is not a multiple of the 2-byte record: 1 trailing bytes at offset 2`) + count},
		{[]string{"-np", "2", "spamcount", "--words", words, csv},
			`mrrun: ` + anyRank + q(`spamcount: word list line 1: "Hello" is not a single lower-case word (letters and numbers only) (in `+words+`)`) + count},
		{[]string{"-np", "3", "wordcount", missing},
			q(`mrrun: wordcount: input stat ` + missing + `: no such file or directory`)},
	} {
		r := mrrun(t, c.args...)
		if r.code != 1 {
			t.Errorf("mrrun %s: exit %d, want 1 (stderr %q)", strings.Join(c.args, " "), r.code, r.stderr)
			continue
		}
		if !regexp.MustCompile(`^` + c.want + `\n$`).MatchString(r.stderr) {
			t.Errorf("mrrun %s: stderr\n%q\nwant one line matching\n%q", strings.Join(c.args, " "), r.stderr, c.want)
		}
		if r.stdout != "" {
			t.Errorf("mrrun %s: stdout %q, want nothing", strings.Join(c.args, " "), r.stdout)
		}
	}
}
