package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/internal/zio"
	"github.com/pgasmr/pgasmr/internal/zio/ziotest"
)

// TestCompressedWordcount: mrrun wordcount on a copy of testdata/sample
// with every file compressed with zstd (or with gzip, bzip2, zstd and none
// in turn) prints the bytes it prints on testdata/sample, in several
// modes and formats; a truncated file is one error line naming it, or with
// --skip-unreadable a skipped file and the others' counts.
func TestCompressedWordcount(t *testing.T) {
	sample := filepath.Join("..", "..", "testdata", "sample")
	dirs := map[string]string{}
	for name, pick := range map[string]func(int, string) zio.Format{"zstd": ziotest.All(zio.Zstd), "mixed": ziotest.Mixed} {
		dirs[name] = filepath.Join(t.TempDir(), name)
		ziotest.WriteTree(t, sample, dirs[name], pick)
	}
	for _, c := range [][]string{
		{"--baseline", "seq"},
		{"-np", "1"},
		{"-np", "2", "--map", "element", "--gather", "all"},
		{"-np", "4", "--dist", "balanced"},
		{"--transport", "shm", "-np", "2"},
	} {
		for _, format := range []string{"tsv", "json"} {
			args := append(append([]string{}, c...), "-q", "--output-format", format, "wordcount")
			want := mrrun(t, append(args, sample)...).want(t, 0)
			if len(want.stdout) < 100 {
				t.Fatalf("mrrun %q on the sample: output too short: %q", args, want.stdout)
			}
			for name, dir := range dirs {
				got := mrrun(t, append(args, dir)...).want(t, 0)
				if got.stdout != want.stdout || got.stderr != "" {
					t.Errorf("mrrun %q on the %s copy: stdout %.200q, stderr %q; want the sample's %.200q", args, name, got.stdout, got.stderr, want.stdout)
				}
			}
		}
	}

	// A truncated file.
	dir := dirs["zstd"]
	z, err := os.ReadFile(filepath.Join(dir, "d00", "d00", "file0000.txt.zst"))
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "d00", "d00", "file0000.txt.zst")
	if err := os.WriteFile(trunc, z[:len(z)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-np", "2", "--output-format", "tsv", "wordcount", dir}
	r := mrrun(t, args...).want(t, 1)
	checkOneLine(t, args, r.stderr, trunc+": corrupt zstd data: ")
	if r.stdout != "" {
		t.Errorf("mrrun %q: stdout %q, want nothing", args, r.stdout)
	}
	args = []string{"-np", "2", "--output-format", "json", "--skip-unreadable", "wordcount", dir}
	r = mrrun(t, args...).want(t, 0)
	if want := "wordcount: skipped unreadable " + trunc + ": corrupt zstd data: "; !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("mrrun %q: stderr %q; want %q", args, r.stderr, want)
	}
	if !strings.Contains(r.stdout, `"files": 23,`) {
		t.Errorf("mrrun %q: stdout %.300q; want 23 files read", args, r.stdout)
	}
}
