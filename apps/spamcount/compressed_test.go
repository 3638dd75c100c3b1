package spamcount

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/internal/zio"
	"github.com/pgasmr/pgasmr/internal/zio/ziotest"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// compressedPlain writes the plain corpus the compressed tests compress:
// the hand-made messages and mbox, generated messages, and an mbox of
// generated messages (many messages in one compressed file).
func compressedPlain(t *testing.T) string {
	dir, _ := handDir(t)
	gen := filepath.Join(dir, "gen")
	if err := Generate(gen, 12, 34); err != nil {
		t.Fatal(err)
	}
	var box strings.Builder
	for i := range 12 {
		b, err := os.ReadFile(filepath.Join(gen, fmt.Sprintf("%06d.eml", i)))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&box, "From sender%d@example.com Mon Jan  1 00:00:%02d 2024\n%s\n", i, i, b)
	}
	if err := os.WriteFile(filepath.Join(dir, "gen.mbox"), []byte(box.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

type runMode struct {
	name string
	run  func(t *testing.T, paths []string) (*Result, error)
}

// compressedModes are the baselines and Run at 1, 2 and 4 ranks over
// three distributions (cyclic: a rank reads every other message of an
// mbox) and two gathers (all: every combination; else one a rank count).
func compressedModes(all bool) []runMode {
	ms := []runMode{
		{"seq", func(t *testing.T, paths []string) (*Result, error) {
			return Seq(context.Background(), paths, Options{})
		}},
		{"goroutines", func(t *testing.T, paths []string) (*Result, error) {
			return Goroutines(context.Background(), paths, Options{})
		}},
	}
	for _, ranks := range []int{1, 2, 4} {
		for _, d := range []distrib.Kind{distrib.Block, distrib.Cyclic, distrib.Balanced} {
			for _, g := range []reduce.Gather{reduce.GatherPartitioned, reduce.GatherAll} {
				// Else: block at 1 rank, cyclic at 2, balanced and
				// GatherAll at 4.
				if one := map[int]distrib.Kind{1: distrib.Block, 2: distrib.Cyclic, 4: distrib.Balanced}[ranks]; !all && (d != one || (g == reduce.GatherAll) != (ranks == 4)) {
					continue
				}
				c := config{ranks, Options{Options: mr.Options{Dist: d, Gather: g, Root: ranks - 1}}}
				ms = append(ms, runMode{c.String(), func(t *testing.T, paths []string) (*Result, error) {
					return runJob(t, c, paths), nil
				}})
			}
		}
	}
	return ms
}

// TestCompressed: trees of gzip, bzip2 or zstd files (messages and
// mboxes), or of all of them and plain files mixed, give the plain tree's
// output in every format and mode (every one on the mixed tree), and
// through a Counter.
func TestCompressed(t *testing.T) {
	plain := compressedPlain(t)
	ctx := context.Background()
	seq, err := Seq(ctx, []string{plain}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range Formats {
		want[f] = output(t, seq, f)
	}
	trees := map[string]func(int, string) zio.Format{"mixed": ziotest.Mixed}
	for _, f := range ziotest.Formats {
		trees[f.String()] = ziotest.All(f)
	}
	for name, pick := range trees {
		dir := filepath.Join(t.TempDir(), name)
		ziotest.WriteTree(t, plain, dir, pick)
		for _, m := range compressedModes(name == "mixed") {
			r, err := m.run(t, []string{dir})
			if err != nil {
				t.Fatalf("%s/%s: %v", name, m.name, err)
			}
			for _, f := range Formats {
				if got := output(t, r, f); got != want[f] {
					t.Fatalf("%s/%s: %s output =\n%s\nwant (seq of the plain files)\n%s", name, m.name, f, got, want[f])
				}
			}
		}
		// A Counter over the messages Scan lists, file by file (the
		// MapReduce-MPI baseline's order), closes each compressed file
		// at its end.
		files, err := Files(ctx, []string{dir})
		if err != nil {
			t.Fatal(err)
		}
		words, err := Words(Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := NewCounter(words)
		got := newTable(len(words))
		for _, f := range files {
			msgs, err := Scan(ctx, []string{f})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if m.Compressed != (zio.ByName(f) != zio.None) {
					t.Errorf("%s: message %v: Compressed %v", name, m, m.Compressed)
				}
				bad, err := c.Count(ctx, m, func(w int, n int64) { got.emit(int32(w), counts{n, 1}) })
				if err != nil {
					t.Fatal(err)
				}
				got.emit(int32(len(words)), counts{1, map[bool]int64{true: 1}[bad]})
			}
			if c.c.z.rc != nil {
				t.Errorf("%s: %s left open after its last message", name, f)
			}
		}
		if out := output(t, got.result(words), "json"); out != want["json"] {
			t.Errorf("%s: Counter:\n%s\nwant\n%s", name, out, want["json"])
		}
	}
}

// TestCompressedCorrupt: a damaged compressed file is one error line
// naming it, wrapping zio.ErrCorrupt, in every mode.
func TestCompressedCorrupt(t *testing.T) {
	plain := compressedPlain(t)
	box, err := os.ReadFile(filepath.Join(plain, "gen.mbox"))
	if err != nil {
		t.Fatal(err)
	}
	gz := ziotest.Compress(zio.Gzip, box)
	zst := ziotest.Compress(zio.Zstd, box)
	zst[len(zst)/2] ^= 0x10
	for _, c := range []struct {
		name   string
		data   []byte
		reason string
	}{
		{"truncated.mbox.gz", gz[:len(gz)/2], "corrupt gzip data: unexpected EOF"},
		{"flipped.mbox.zst", zst, "corrupt zstd data"},
		{"text.eml.bz2", box, "not bzip2 data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "z")
			ziotest.WriteTree(t, plain, dir, ziotest.Mixed)
			bad := filepath.Join(dir, c.name)
			if err := os.WriteFile(bad, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			check := func(mode string, err error) {
				t.Helper()
				if err == nil || !errors.Is(err, zio.ErrCorrupt) || !strings.Contains(err.Error(), bad+": "+c.reason) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s: %v; want one line wrapping zio.ErrCorrupt, with %q", mode, err, bad+": "+c.reason)
				}
			}
			ctx := context.Background()
			_, err := Seq(ctx, []string{dir}, Options{})
			check("seq", err)
			_, err = Goroutines(ctx, []string{dir}, Options{})
			check("goroutines", err)
			_, err = Scan(ctx, []string{bad})
			check("scan", err)
			for _, ranks := range []int{1, 2, 4} {
				err := runErr(ranks, []string{dir})
				check(fmt.Sprintf("ranks=%d", ranks), err)
			}
		})
	}
}

// runErr runs Run on ranks in-process ranks and returns its error.
func runErr(ranks int, paths []string) error {
	return pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
		_, err := Run(ctx, r, paths, Options{})
		return err
	})
}
