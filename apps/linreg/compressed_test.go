package linreg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/apps/internal/apptest"
	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/internal/zio"
	"github.com/pgasmr/pgasmr/internal/zio/ziotest"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// compressedInputs writes, for each input format, TestMetamorphic's files
// (300, 0, 41 and 1000 points) and returns their paths by format.
func compressedInputs(t *testing.T) map[string][]string {
	dir := t.TempDir()
	inputs := map[string][]string{}
	for _, format := range []string{"int8", "f64", "csv"} {
		for i, points := range []int64{300, 0, 41, 1000} {
			var b bytes.Buffer
			if err := Generate(&b, points, format, uint64(i)); err != nil {
				t.Fatal(err)
			}
			inputs[format] = append(inputs[format], write(t, dir, fmt.Sprintf("%s%d", format, i), b.Bytes()))
		}
	}
	return inputs
}

// compressFiles writes each of files compressed in the format pick gives
// it, named with the format's extension, and returns the paths in order.
func compressFiles(t *testing.T, files []string, pick func(int, string) zio.Format) []string {
	dir := t.TempDir()
	var out []string
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		format := pick(i, f)
		p := filepath.Join(dir, filepath.Base(f)+format.Ext())
		ziotest.WriteFile(t, p, format, b)
		out = append(out, p)
	}
	return out
}

type linregMode struct {
	name string
	run  func(t *testing.T, files []string, o Options) (*Result, error)
}

// compressedModes are the baselines and Run at 1, 2 and 4 ranks with the
// array map, and the element map over the cyclic and balanced
// distributions, gathered to the root or partitioned.
func compressedModes() []linregMode {
	ms := []linregMode{
		{"seq", func(t *testing.T, files []string, o Options) (*Result, error) {
			return Seq(context.Background(), files, o)
		}},
		{"goroutines", func(t *testing.T, files []string, o Options) (*Result, error) {
			return Goroutines(context.Background(), files, o)
		}},
	}
	for _, ranks := range []int{1, 2, 4} {
		for _, m := range []struct {
			element bool
			dist    distrib.Kind
		}{{false, distrib.Block}, {true, distrib.Cyclic}, {true, distrib.Balanced}} {
			for _, g := range []reduce.Gather{reduce.GatherRoot, reduce.GatherPartitioned} {
				c := config{ranks, m.element, m.dist, g, reduce.Collective}
				ms = append(ms, linregMode{c.String(), func(t *testing.T, files []string, o Options) (*Result, error) {
					o.Map, o.Dist, o.Threshold, o.Gather, o.Root = apptest.MapMode(c.element), c.dist, 500, c.gather, c.ranks-1
					return runJob(t, files, o, c.ranks), nil
				}})
			}
		}
	}
	return ms
}

// TestCompressed: files of every input format compressed with gzip,
// bzip2 or zstd, or all of them and plain files mixed, give the bytes Seq
// gives on the plain files in every mode, the float sums included (a
// compressed file's chunks are summed and keyed as the plain file's).
func TestCompressed(t *testing.T) {
	inputs := compressedInputs(t)
	trees := map[string]func(int, string) zio.Format{"mixed": ziotest.Mixed}
	for _, f := range ziotest.Formats {
		trees[f.String()] = ziotest.All(f)
	}
	for _, format := range []string{"int8", "f64", "csv"} {
		for _, chunk := range []int64{96, 4096} {
			o := Options{Format: format, ChunkBytes: chunk}
			want := render(t, seq(t, inputs[format], o))
			for name, pick := range trees {
				files := compressFiles(t, inputs[format], pick)
				for _, m := range compressedModes() {
					r, err := m.run(t, files, o)
					if err != nil {
						t.Fatalf("%s/chunk=%d/%s/%s: %v", format, chunk, name, m.name, err)
					}
					if got := render(t, r); got != want {
						t.Fatalf("%s/chunk=%d/%s/%s: output:\n%s\nwant (seq of the plain files):\n%s", format, chunk, name, m.name, got, want)
					}
				}
			}
		}
	}
}

// TestCompressedErrors: bad compressed data, a name that promises a
// compression the content lacks, and bad points in a compressed file are
// one error line naming the file (and the offset of the decompressed
// bytes, or the CSV line), in every mode.
func TestCompressedErrors(t *testing.T) {
	var i8, f64 bytes.Buffer
	if err := Generate(&i8, 5000, "int8", 1); err != nil {
		t.Fatal(err)
	}
	if err := Generate(&f64, 50, "f64", 1); err != nil {
		t.Fatal(err)
	}
	gz := ziotest.Compress(zio.Gzip, i8.Bytes())
	zst := ziotest.Compress(zio.Zstd, i8.Bytes())
	zst[len(zst)/2] ^= 0x10
	nan := bytes.Clone(f64.Bytes())
	copy(nan[16*7+8:], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}) // y of point 7
	dir := t.TempDir()
	for _, c := range []struct {
		name, format string
		data         []byte
		want         string
		corrupt      bool
	}{
		{"truncated.gz", "int8", gz[:len(gz)/2], ": corrupt gzip data: unexpected EOF", true},
		{"flipped.zst", "int8", zst, ": corrupt zstd data", true},
		{"plain.bz2", "int8", i8.Bytes(), ": not bzip2 data", true},
		{"odd.gz", "int8", ziotest.Compress(zio.Gzip, i8.Bytes()[:101]), ": decompressed size 101 is not a multiple of the 2-byte record: 1 trailing bytes at offset 100", false},
		{"nan.zst", "f64", ziotest.Compress(zio.Zstd, nan), fmt.Sprintf(": point at offset %d: y is NaN", 16*7), false},
		{"bad.csv.bz2", "csv", ziotest.Compress(zio.Bzip2, []byte("x,y\n1,2\n\n3,4\n5;6\n")), ":5 (offset 13): want \"x,y\"", false},
	} {
		bad := write(t, dir, c.name, c.data)
		o := Options{Format: c.format, ChunkBytes: 64}
		check := func(mode string, err error) {
			t.Helper()
			if err == nil || !strings.Contains(err.Error(), bad+c.want) || strings.Contains(err.Error(), "\n") || c.corrupt != errors.Is(err, zio.ErrCorrupt) {
				t.Errorf("%s/%s: %v; want one line with %q (wrapping zio.ErrCorrupt: %v)", c.name, mode, err, bad+c.want, c.corrupt)
			}
		}
		_, err := Seq(context.Background(), []string{bad}, o)
		check("seq", err)
		_, err = Goroutines(context.Background(), []string{bad}, o)
		check("goroutines", err)
		for _, ranks := range []int{1, 2, 4} {
			for _, element := range []bool{false, true} {
				o := o
				o.Map, o.Dist = apptest.MapMode(element), distrib.Cyclic
				err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
					_, err := Run(ctx, r, []string{bad}, o)
					return err
				})
				check(fmt.Sprintf("ranks=%d/%v", ranks, o.Map), err)
			}
		}
	}
}
