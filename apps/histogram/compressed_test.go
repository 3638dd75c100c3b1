package histogram

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/internal/zio"
	"github.com/pgasmr/pgasmr/internal/zio/ziotest"
	"github.com/pgasmr/pgasmr/reduce"
)

// bigFiles writes a BMP with rows wider than the read buffer and one with
// more rows than a read holds, and returns them with the oracle's result.
func bigFiles(t *testing.T) ([]string, *Result) {
	rng := rand.New(rand.NewPCG(34, 3))
	dir := t.TempDir()
	want := &Result{}
	var files []string
	for i, wh := range [][2]int{{readBytes/3 + 5, 1}, {301, 150}} {
		pic := randomPicture(rng, wh[0], wh[1])
		files = append(files, writeFile(t, dir, fmt.Sprintf("big%d.bmp", i), encodeBMP(pic, encoding{info: 40, topDown: i == 1})))
		oracle(want, pic)
	}
	return files, want
}

// compressAll writes each of files compressed in the format pick gives
// its index, named with the format's extension, and returns their paths
// (a file listed twice is written once, and listed twice).
func compressAll(t *testing.T, files []string, pick func(int, string) zio.Format) []string {
	dir := t.TempDir()
	out := make([]string, len(files))
	done := map[string]string{}
	for i, f := range files {
		if p, ok := done[f]; ok {
			out[i] = p
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		format := pick(i, f)
		out[i] = filepath.Join(dir, fmt.Sprintf("%02d-%s%s", i, filepath.Base(f), format.Ext()))
		ziotest.WriteFile(t, out[i], format, b)
		done[f] = out[i]
	}
	return out
}

type compressedMode struct {
	name string
	run  func(files []string) (*Result, error)
}

// compressedModes are the baselines (chunks of a row, of a few rows, and
// whole files) and Run at 1, 2 and 4 ranks, with the array map and the
// element map over three distributions, gathered to the root or
// partitioned (all: every combination; else the array map at each rank
// count and the element map at 2 ranks).
func compressedModes(all bool) []compressedMode {
	ctx := context.Background()
	var ms []compressedMode
	for _, chunk := range []int64{1, 40, 0} {
		ms = append(ms,
			compressedMode{fmt.Sprintf("chunk=%d/seq", chunk), func(files []string) (*Result, error) {
				return Seq(ctx, files, Options{ChunkBytes: chunk})
			}},
			compressedMode{fmt.Sprintf("chunk=%d/seq-naive", chunk), func(files []string) (*Result, error) {
				return seqNaive(ctx, files, Options{ChunkBytes: chunk})
			}},
			compressedMode{fmt.Sprintf("chunk=%d/goroutines", chunk), func(files []string) (*Result, error) {
				return Goroutines(ctx, files, Options{ChunkBytes: chunk})
			}})
	}
	for _, ranks := range []int{1, 2, 4} {
		for _, element := range []bool{false, true} {
			dists := []distrib.Kind{distrib.Block}
			if element {
				dists = []distrib.Kind{distrib.Block, distrib.Cyclic, distrib.Balanced}
			}
			for _, d := range dists {
				for _, g := range []reduce.Gather{reduce.GatherRoot, reduce.GatherPartitioned} {
					if !all && (g == reduce.GatherRoot || element && (ranks != 2 || d != distrib.Cyclic)) {
						continue
					}
					c := config{ranks, element, d, g, reduce.Collective, ranks - 1}
					ms = append(ms, compressedMode{c.String(), func(files []string) (*Result, error) {
						return runJob(ctx, c, files, 40)
					}})
				}
			}
		}
	}
	return ms
}

// TestCompressed: BMPs of every layout compressed with gzip, bzip2 or
// zstd, or all of them and plain files mixed, give the oracle's output in
// every format and mode; so do large ones (rows wider than a read, more
// rows than a read) in fewer modes.
func TestCompressed(t *testing.T) {
	small, smallWant := testFiles(t)
	big, bigWant := bigFiles(t)
	trees := map[string]func(int, string) zio.Format{"mixed": ziotest.Mixed}
	for _, f := range ziotest.Formats {
		trees[f.String()] = ziotest.All(f)
	}
	for name, pick := range trees {
		zfiles := compressAll(t, small, pick)
		h, err := ReadHeader(zfiles[0])
		if want, _ := ReadHeader(small[0]); err != nil || h != want {
			t.Errorf("%s: ReadHeader(%s) = %+v, %v; want %+v", name, zfiles[0], h, err, want)
		}
		check(t, name, zfiles, smallWant, compressedModes(true))
		check(t, name+"/big", compressAll(t, big, pick), bigWant, compressedModes(false))
	}
}

// check runs modes on files and compares their outputs with want's.
func check(t *testing.T, name string, files []string, want *Result, modes []compressedMode) {
	t.Helper()
	for _, m := range modes {
		got, err := m.run(files)
		if err != nil {
			t.Fatalf("%s/%s: %v", name, m.name, err)
		}
		for _, f := range Formats {
			if g, w := format(t, got, f), format(t, want, f); g != w {
				t.Fatalf("%s/%s: %s output differs from the oracle's:\n%s\nwant\n%s", name, m.name, f, g, w)
			}
		}
	}
}

// TestCompressedBad: bad compressed data is an error naming the file
// wrapping zio.ErrCorrupt, and a BMP that decompresses short one wrapping
// ErrTruncated, in every mode.
func TestCompressedBad(t *testing.T) {
	files, _ := testFiles(t)
	bmp := encodeBMP(randomPicture(rand.New(rand.NewPCG(34, 4)), 60, 40), encoding{info: 40})
	gz := ziotest.Compress(zio.Gzip, bmp)
	zst := ziotest.Compress(zio.Zstd, bmp)
	zst[len(zst)/2] ^= 0x10
	dir := t.TempDir()
	for _, c := range []struct {
		name, reason string
		data         []byte
		want         error
	}{
		{"truncated.bmp.gz", "corrupt gzip data: unexpected EOF", gz[:len(gz)/2], zio.ErrCorrupt},
		{"flipped.bmp.zst", "corrupt zstd data", zst, zio.ErrCorrupt},
		{"plain.bmp.bz2", "not bzip2 data", bmp, zio.ErrCorrupt},
		{"short-rows.bmp.bz2", "decompressed data ends", ziotest.Compress(zio.Bzip2, bmp[:len(bmp)-500]), ErrTruncated},
		{"short-header.bmp.gz", "ends inside the 40-byte DIB header", ziotest.Compress(zio.Gzip, bmp[:30]), ErrTruncated},
	} {
		bad := writeFile(t, dir, c.name, c.data)
		in := append(compressAll(t, files[:3], ziotest.Mixed), bad)
		for _, m := range compressedModes(false) {
			_, err := m.run(in)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), c.reason) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%s/%s: %v; want one line wrapping %v, naming the file, with %q", c.name, m.name, err, c.want, c.reason)
			}
		}
	}
}
