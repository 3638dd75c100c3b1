package wordcount

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/internal/zio"
	"github.com/pgasmr/pgasmr/internal/zio/ziotest"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/reduce"
)

// compressedModes are the modes the compressed tests compare: the
// baselines, and Run at 1, 2 and 4 ranks over both maps, three gathers
// and two distributions (all: every combination; else two), with small
// chunks (the uncompressed files of a mixed tree are cut).
func compressedModes(all bool) []mode {
	ms := []mode{
		{"seq", Seq},
		{"goroutines", Goroutines},
		{"goroutines/chunk=1000", func(ctx context.Context, paths []string, o Options) (*Result, error) {
			o.ChunkBytes = 1000
			return Goroutines(ctx, paths, o)
		}},
	}
	for _, ranks := range []int{1, 2, 4} {
		for _, dist := range []distrib.Kind{distrib.Block, distrib.Balanced} {
			for _, m := range []mr.MapMode{mr.MapElement, mr.MapArray} {
				for _, g := range []reduce.Gather{reduce.GatherPartitioned, reduce.GatherAll, reduce.GatherRoot} {
					if !all && (dist == distrib.Block) != (m == mr.MapArray) || !all && g == reduce.GatherRoot {
						continue
					}
					name := fmt.Sprintf("ranks=%d/%v/%v/%v", ranks, dist, m, g)
					ms = append(ms, mode{name, func(ctx context.Context, paths []string, o Options) (*Result, error) {
						o.Dist, o.Map, o.Gather, o.Root, o.ChunkBytes = dist, m, g, ranks-1, 1000
						return pgasMode(ranks)(ctx, paths, o)
					}})
				}
			}
		}
	}
	return ms
}

// withoutExt strips compressed extensions off paths.
func withoutExt(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = strings.TrimSuffix(p, zio.ByName(p).Ext())
	}
	return out
}

// compressedTree writes the plain corpus the compressed tests compress:
// small, a file longer than the buffer a small compressed file gets
// (words across its blocks), and one with a NUL past its first 8 KiB
// (text).
func compressedTree(t *testing.T) (dir string, files map[string]string) {
	dir = t.TempDir()
	files = map[string]string{
		"big.txt":      strings.Repeat(strings.ReplaceAll(randomText(rand.New(rand.NewPCG(34, 1)), 6000), "\x00", " ")+"\n", 10),
		"late-nul.txt": strings.Repeat("word ", 2000) + "\x00 after",
		"hidden.txt":   strings.ReplaceAll(randomText(rand.New(rand.NewPCG(34, 2)), 3000), "\x00", " "),
	}
	for k, v := range small {
		files[k] = v
	}
	writeTree(t, dir, files)
	return dir, files
}

// writeCompressed writes the corpus of plain to a new directory, each file
// compressed in the format pick gives it, but hidden.txt as zstd data
// under its plain name (cut into chunks: its first chunk reads it whole).
func writeCompressed(t *testing.T, plain string, files map[string]string, pick func(int, string) zio.Format) string {
	dir := filepath.Join(t.TempDir(), "z")
	for _, p := range ziotest.WriteTree(t, plain, dir, pick) {
		if strings.HasPrefix(filepath.Base(p), "hidden.txt") {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	ziotest.WriteFile(t, filepath.Join(dir, "hidden.txt"), zio.Zstd, []byte(files["hidden.txt"]))
	return dir
}

// compressedTrees are the trees of TestCompressed: all gzip, all bzip2,
// all zstd, and the three and plain files mixed.
func compressedTrees() map[string]func(int, string) zio.Format {
	trees := map[string]func(int, string) zio.Format{"mixed": ziotest.Mixed}
	for _, f := range ziotest.Formats {
		trees[f.String()] = ziotest.All(f)
	}
	return trees
}

// TestCompressed: a tree of gzip, bzip2 or zstd files, or of all of them
// and plain files mixed, counts as the plain tree does, in every format
// and mode (every one on the mixed tree), with the same files read and skipped as binary (a NUL in the
// first 8 KiB of the decompressed bytes).
func TestCompressed(t *testing.T) {
	plain, files := compressedTree(t)
	ctx := context.Background()
	seq, err := Seq(ctx, []string{plain}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range Formats {
		want[f] = render(t, seq, f)
	}
	if seq.Files != 8 || len(seq.SkippedBinary) != 1 {
		t.Fatalf("plain tree: %d files, %d binary; want 8, 1", seq.Files, len(seq.SkippedBinary))
	}
	for name, pick := range compressedTrees() {
		dir := writeCompressed(t, plain, files, pick)
		for _, m := range compressedModes(name == "mixed") {
			r, err := m.run(ctx, []string{dir}, Options{})
			if err != nil {
				t.Fatalf("%s/%s: %v", name, m.name, err)
			}
			if bin := []string{filepath.Join(dir, "bin.dat")}; r.Files != seq.Files || !slices.Equal(withoutExt(r.SkippedBinary), bin) {
				t.Errorf("%s/%s: %d files, binary %q; want %d, %q", name, m.name, r.Files, r.SkippedBinary, seq.Files, bin)
			}
			for _, f := range Formats {
				if got := render(t, r, f); got != want[f] {
					t.Fatalf("%s/%s: %s output =\n%s\nwant (seq of the plain files)\n%s", name, m.name, f, got, want[f])
				}
			}
		}
	}
}

// TestCompressedCorrupt: a damaged compressed file is one error line
// naming it, wrapping zio.ErrCorrupt, in every mode; under SkipUnreadable
// it is a skipped file with the reason, and every mode gives the same
// result.
func TestCompressedCorrupt(t *testing.T) {
	plain, files := compressedTree(t)
	text := []byte(files["big.txt"])
	gz := ziotest.Compress(zio.Gzip, text)
	zst := ziotest.Compress(zio.Zstd, text)
	zst[len(zst)/2] ^= 0x10
	ctx := context.Background()
	good, err := Seq(ctx, []string{plain}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		data   []byte
		reason string
		clean  bool // nothing of the file is counted
	}{
		{"truncated.txt.gz", gz[:len(gz)/2], "corrupt gzip data: unexpected EOF", false},
		{"flipped.txt.zst", zst, "corrupt zstd data", false},
		{"bad-head.txt.bz2", ziotest.Compress(zio.Bzip2, text)[:9], "not bzip2 data", true},
		{"text.txt.gz", text, `not gzip data (starts "`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeCompressed(t, plain, files, ziotest.Mixed)
			bad := filepath.Join(dir, c.name)
			if err := os.WriteFile(bad, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			var skipped string // seq's result under SkipUnreadable
			for _, m := range compressedModes(false) {
				_, err := m.run(ctx, []string{dir}, Options{})
				if err == nil || !errors.Is(err, zio.ErrCorrupt) || !strings.Contains(err.Error(), bad+": "+c.reason) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s: %v; want one line wrapping zio.ErrCorrupt, with %q", m.name, err, bad+": "+c.reason)
				}
				r, err := m.run(ctx, []string{dir}, Options{SkipUnreadable: true})
				if err != nil {
					t.Fatalf("%s, SkipUnreadable: %v", m.name, err)
				}
				if len(r.Unreadable) != 1 || r.Unreadable[0].Path != bad || !strings.Contains(r.Unreadable[0].Reason, c.reason) || r.Files != good.Files {
					t.Errorf("%s, SkipUnreadable: %d files, unreadable %+v; want %d and %s: %s", m.name, r.Files, r.Unreadable, good.Files, bad, c.reason)
				}
				got := render(t, r, "json")
				if skipped == "" {
					skipped = got
					if c.clean && got != render(t, good, "json") {
						t.Errorf("%s, SkipUnreadable: counted words of %s", m.name, c.name)
					}
				} else if got != skipped {
					t.Fatalf("%s, SkipUnreadable:\n%s\nwant (seq)\n%s", m.name, got, skipped)
				}
			}
		})
	}
}
