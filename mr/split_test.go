package mr_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// writeFiles writes files of the given sizes with deterministic contents
// into a temporary directory and returns their paths and contents.
func writeFiles(t *testing.T, sizes ...int) ([]string, [][]byte) {
	t.Helper()
	dir := t.TempDir()
	paths := make([]string, len(sizes))
	data := make([][]byte, len(sizes))
	x := uint32(99)
	for i, n := range sizes {
		b := make([]byte, n)
		for j := range b {
			x = x*1664525 + 1013904223
			b[j] = byte(x >> 24)
		}
		paths[i] = filepath.Join(dir, fmt.Sprintf("f%02d-%d.bin", i, n))
		if err := os.WriteFile(paths[i], b, 0o644); err != nil {
			t.Fatal(err)
		}
		data[i] = b
	}
	return paths, data
}

// fileSplits cuts the files into splits of size bytes with mr.Files.
func fileSplits(paths []string, size int64) (mr.Input[mr.Split], error) {
	in, skips, err := mr.Files(context.Background(), mr.FileOptions{SplitBytes: size}, paths...)
	if err == nil && skips != nil {
		return nil, fmt.Errorf("skips %v without SkipUnreadable", skips)
	}
	return in, err
}

func allSplits(t *testing.T, in mr.Input[mr.Split]) []mr.Split {
	t.Helper()
	out := make([]mr.Split, in.Len())
	for i := range out {
		s, err := in.At(context.Background(), int64(i))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = s
	}
	return out
}

func TestFileSplitsBoundaries(t *testing.T) {
	sizes := []int{0, 1, 99, 100, 101, 250, 1000, 4096 + 7}
	paths, data := writeFiles(t, sizes...)
	for _, size := range []int64{1, 7, 100, 4096, 1 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			in, err := fileSplits(paths, size)
			if err != nil {
				t.Fatal(err)
			}
			// The expected cut: ceil(n/size) splits per file, one for an
			// empty file, in the order of the paths.
			var want []mr.Split
			for i, n := range sizes {
				if n == 0 {
					want = append(want, mr.Split{Path: paths[i]})
				}
				for off := int64(0); off < int64(n); off += size {
					want = append(want, mr.Split{Path: paths[i], Off: off, Len: min(size, int64(n)-off)})
				}
			}
			got := allSplits(t, in)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("splits\n%v\nwant\n%v", got, want)
			}
			w, ok := in.(mr.Weighter)
			if !ok {
				t.Fatal("Files is not a Weighter")
			}
			if _, ok := in.(mr.Hasher); !ok {
				t.Fatal("Files is not a Hasher")
			}
			// Reassemble every file from its splits with Read and Open.
			var buf []byte
			got2 := make([][]byte, len(paths))
			got3 := make([][]byte, len(paths))
			for i, s := range got {
				if w.Weight(int64(i)) != float64(s.Len) {
					t.Fatalf("split %v weighs %v", s, w.Weight(int64(i)))
				}
				if s.Len > size || s.Len == 0 && s.Off != 0 {
					t.Fatalf("split %v of split size %d", s, size)
				}
				f := slicesIndex(paths, s.Path)
				buf, err = s.Read(buf)
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(buf)) != s.Len || !bytes.Equal(buf, data[f][s.Off:s.Off+s.Len]) {
					t.Fatalf("Read of %v returned %d wrong bytes", s, len(buf))
				}
				got2[f] = append(got2[f], buf...)
				rc, err := s.Open()
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(rc)
				if err != nil {
					t.Fatal(err)
				}
				if err := rc.Close(); err != nil {
					t.Fatal(err)
				}
				got3[f] = append(got3[f], b...)
			}
			for f := range paths {
				if !bytes.Equal(got2[f], data[f]) || !bytes.Equal(got3[f], data[f]) {
					t.Fatalf("file %d (%d bytes) reassembled as %d / %d bytes", f, len(data[f]), len(got2[f]), len(got3[f]))
				}
			}
		})
	}
}

func slicesIndex(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

func TestFileSplitsEdgeCases(t *testing.T) {
	paths, data := writeFiles(t, 10, 0)
	t.Run("no files", func(t *testing.T) {
		in, err := fileSplits(nil, 10)
		if err != nil || in.Len() != 0 {
			t.Fatalf("Files(nil): %v, %v", in, err)
		}
	})
	t.Run("negative size", func(t *testing.T) {
		for _, size := range []int64{-1, -4096} {
			if _, err := fileSplits(paths, size); err == nil || !strings.Contains(err.Error(), fmt.Sprint(size)) {
				t.Errorf("Files with split size %d: %v; want an error naming %d", size, err, size)
			}
		}
	})
	t.Run("size 0 is whole files", func(t *testing.T) {
		in, err := fileSplits(paths, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(allSplits(t, in))
		want := fmt.Sprint([]mr.Split{{Path: paths[0], Len: 10}, {Path: paths[1]}})
		if got != want {
			t.Fatalf("Files(SplitBytes 0) = %s; want %s", got, want)
		}
	})
	t.Run("order as given, duplicates kept", func(t *testing.T) {
		in, err := fileSplits([]string{paths[1], paths[0], paths[1]}, 4)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(allSplits(t, in))
		want := fmt.Sprint([]mr.Split{{Path: paths[1]}, {Path: paths[0], Len: 4}, {Path: paths[0], Off: 4, Len: 4}, {Path: paths[0], Off: 8, Len: 2}, {Path: paths[1]}})
		if got != want {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
	t.Run("At out of range", func(t *testing.T) {
		in, _ := fileSplits(paths, 4)
		for _, i := range []int64{-1, in.Len()} {
			if _, err := in.At(context.Background(), i); err == nil {
				t.Errorf("At(%d) of %d succeeded", i, in.Len())
			}
		}
	})
	t.Run("read buffer reuse", func(t *testing.T) {
		s := mr.Split{Path: paths[0], Off: 3, Len: 5}
		big := make([]byte, 2, 64)
		got, err := s.Read(big)
		if err != nil || !bytes.Equal(got, data[0][3:8]) || &got[0] != &big[:1][0] {
			t.Fatalf("Read into a large buffer: %v %v (reused: %v)", got, err, err == nil && &got[0] == &big[:1][0])
		}
		got, err = s.Read(make([]byte, 0, 2))
		if err != nil || !bytes.Equal(got, data[0][3:8]) {
			t.Fatalf("Read into a small buffer: %v %v", got, err)
		}
		got, err = mr.Split{Path: paths[1]}.Read(nil)
		if err != nil || len(got) != 0 {
			t.Fatalf("Read of an empty split: %v %v", got, err)
		}
	})
	t.Run("open stops at the range", func(t *testing.T) {
		rc, err := mr.Split{Path: paths[0], Off: 2, Len: 3}.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b := make([]byte, 100)
		n, _ := io.ReadFull(rc, b)
		if n != 3 || !bytes.Equal(b[:n], data[0][2:5]) {
			t.Fatalf("read %d bytes %v through Open", n, b[:n])
		}
	})
}

func TestFileSplitsErrorsNamePath(t *testing.T) {
	paths, _ := writeFiles(t, 10, 20)
	dir := filepath.Dir(paths[0])
	missing := filepath.Join(dir, "no-such-file.txt")
	t.Run("missing", func(t *testing.T) {
		_, err := fileSplits([]string{paths[0], missing, paths[1]}, 4)
		if err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Files with a missing file: %v", err)
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads files whatever their mode")
		}
		p := filepath.Join(dir, "secret")
		if err := os.WriteFile(p, []byte("x"), 0); err != nil {
			t.Fatal(err)
		}
		_, err := fileSplits([]string{p}, 4)
		if err == nil || !strings.Contains(err.Error(), p) || !errors.Is(err, fs.ErrPermission) {
			t.Fatalf("Files with an unreadable file: %v", err)
		}
	})
	t.Run("read after the file shrank", func(t *testing.T) {
		p := filepath.Join(dir, "shrinks")
		if err := os.WriteFile(p, make([]byte, 100), 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := fileSplits([]string{p}, 40)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, 50); err != nil {
			t.Fatal(err)
		}
		ss := allSplits(t, in)
		if _, err := ss[0].Read(nil); err != nil {
			t.Fatalf("split before the cut: %v", err)
		}
		for _, s := range ss[1:] {
			_, err := s.Read(nil)
			if err == nil || !strings.Contains(err.Error(), p) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("Read of %v beyond the end: %v", s, err)
			}
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		for _, f := range []func() error{
			func() error { _, err := ss[0].Read(nil); return err },
			func() error { _, err := ss[0].Open(); return err },
		} {
			if err := f(); err == nil || !strings.Contains(err.Error(), p) || !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("reading a removed file: %v", err)
			}
		}
	})
	t.Run("negative range", func(t *testing.T) {
		for _, s := range []mr.Split{{Path: paths[0], Off: -1, Len: 2}, {Path: paths[0], Len: -2}} {
			if _, err := s.Read(nil); err == nil || !strings.Contains(err.Error(), paths[0]) {
				t.Errorf("Read of %v: %v", s, err)
			}
			if _, err := s.Open(); err == nil {
				t.Errorf("Open of %v succeeded", s)
			}
		}
	})
}

func TestFileSplitsHash(t *testing.T) {
	paths, _ := writeFiles(t, 10, 30)
	hash := func(ps []string, size int64) uint64 {
		in, err := fileSplits(ps, size)
		if err != nil {
			t.Fatal(err)
		}
		return in.(mr.Hasher).Hash()
	}
	h := hash(paths, 8)
	if hash(paths, 8) != h {
		t.Fatal("hash differs between two identical inputs")
	}
	for name, other := range map[string]uint64{
		"size":  hash(paths, 9),
		"order": hash([]string{paths[1], paths[0]}, 8),
		"files": hash(paths[:1], 8),
		"header": func() uint64 {
			in, _, err := mr.Files(context.Background(), mr.FileOptions{SplitBytes: 8, Header: true}, paths...)
			if err != nil {
				t.Fatal(err)
			}
			return in.(mr.Hasher).Hash()
		}(),
	} {
		if other == h {
			t.Errorf("hash does not depend on the %s", name)
		}
	}
}

// TestApplyMapFileSplits counts the bytes of every file, and sums them,
// with a map over its splits: the counts are the file sizes for every
// rank count and distribution.
func TestApplyMapFileSplits(t *testing.T) {
	sizes := []int{0, 1, 333, 1000, 2048, 5000, 77}
	paths, data := writeFiles(t, sizes...)
	var wantLines []string
	for i, p := range paths {
		var sum int64
		for _, b := range data[i] {
			sum += int64(b)
		}
		if sizes[i] > 0 {
			wantLines = append(wantLines, fmt.Sprintf("%s bytes %d\n", filepath.Base(p), sizes[i]), fmt.Sprintf("%s sum %d\n", filepath.Base(p), sum))
		}
	}
	slices.Sort(wantLines)
	want := strings.Join(wantLines, "")
	in, err := fileSplits(paths, 512)
	if err != nil {
		t.Fatal(err)
	}
	for _, ranks := range []int{1, 2, 3} {
		for _, dist := range []distrib.Kind{distrib.Block, distrib.Cyclic, distrib.Balanced, distrib.BestFit} {
			t.Run(fmt.Sprintf("ranks=%d/%v", ranks, dist), func(t *testing.T) {
				var mu sync.Mutex
				outs := make([]string, ranks)
				var elements int64
				err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
					st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
					if err != nil {
						return err
					}
					var buf []byte
					ms, err := mr.ApplyMap(ctx, r, in, func(ctx context.Context, s mr.Split, emit func(string, int64)) error {
						buf, err = s.Read(buf)
						if err != nil {
							return err
						}
						var sum int64
						for _, b := range buf {
							sum += int64(b)
						}
						if len(buf) > 0 {
							emit(s.Path+"\x00bytes", int64(len(buf)))
							emit(s.Path+"\x00sum", sum)
						}
						return nil
					}, st, mr.WithDistribution(dist), mr.WithThreshold(600))
					if err != nil {
						return err
					}
					mu.Lock()
					elements += ms.Elements
					mu.Unlock()
					out, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (string, error) {
						var b strings.Builder
						for i := range p.Len() {
							path, what, _ := strings.Cut(p.Keys[i], "\x00")
							fmt.Fprintf(&b, "%s %s %d\n", filepath.Base(path), what, p.Value(i))
						}
						return b.String(), nil
					}, mr.Gather(reduce.GatherAll))
					if err != nil {
						return err
					}
					outs[r.ID()] = out.Value
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if elements != in.Len() {
					t.Errorf("ranks mapped %d splits, want %d", elements, in.Len())
				}
				for q, out := range outs {
					if out != want {
						t.Fatalf("rank %d:\n%s\nwant:\n%s", q, out, want)
					}
				}
			})
		}
	}
}

// TestFileSplitsWordAlignment: splits cut words; a map that realigns
// (skips the word in progress at its start, reads past its end to finish
// its last word) counts every word exactly once.
func TestFileSplitsWordAlignment(t *testing.T) {
	dir := t.TempDir()
	text := strings.Join(lines(50), "\n")
	p := filepath.Join(dir, "text")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	want := wordOracle([]string{text})
	isSpace := func(b byte) bool { return b == ' ' || b == '\n' }
	for _, size := range []int64{1, 5, 64, 1 << 20} {
		in, err := fileSplits([]string{p}, size)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int64{}
		for i := range in.Len() {
			s, _ := in.At(context.Background(), i)
			// Read one byte before (to know whether a word is in
			// progress) and enough after to finish the last word.
			lo := max(s.Off-1, 0)
			ext := mr.Split{Path: s.Path, Off: lo, Len: min(s.Off+s.Len+64, int64(len(text))) - lo}
			b, err := ext.Read(nil)
			if err != nil {
				t.Fatal(err)
			}
			start := int(s.Off - lo)
			if s.Off > 0 && !isSpace(b[0]) {
				for start < len(b) && !isSpace(b[start]) {
					start++ // the word belongs to the previous split
				}
			}
			end := int(s.Off + s.Len - lo)
			for end < len(b) && end > 0 && !isSpace(b[end-1]) && !isSpace(b[end]) {
				end++ // finish the word in progress
			}
			if start < end {
				for _, w := range strings.Fields(string(b[start:end])) {
					counts[w]++
				}
			}
		}
		var got strings.Builder
		for _, w := range sortedKeys(counts) {
			fmt.Fprintf(&got, "%s %d\n", w, counts[w])
		}
		if got.String() != want {
			t.Fatalf("split size %d: word counts differ:\n%s\nwant\n%s", size, got.String(), want)
		}
	}
}

// TestKeepAllTwoMapsOrder: two ApplyMap calls into one KeepAll store
// (say, two inputs of file splits) should keep each key's values in the
// order (input index, emit order) the package documents; both inputs have
// index 0, and the second call's values come after the first's in emit
// order. SetTag restarts the emit sequence at 0 for every element, so the
// values of the two calls interleave instead.
func TestKeepAllTwoMapsOrder(t *testing.T) {
	var got string
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 1, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
		st, err := reduce.NewHashStore[string, string](reduce.KeepAll[string]())
		if err != nil {
			return err
		}
		for _, in := range []string{"a", "b"} {
			if _, err := mr.ApplyMap(ctx, r, mr.Slice([]string{in}), func(ctx context.Context, x string, emit func(string, string)) error {
				emit("k", x+".0")
				emit("k", x+".1")
				return nil
			}, st); err != nil {
				return err
			}
		}
		res, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, string]) (string, error) {
			return fmt.Sprint(p.Values(0)), nil
		})
		got = res.Value
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[a.0 a.1 b.0 b.1]"; got != want {
		t.Fatalf("values %s, want %s", got, want)
	}
}

// TestFiles: directories are walked as ListFiles walks them, files given
// directly are taken as they are, splits cut every file at SplitBytes
// (whole files for 0, for Files and AllFiles alike) and weigh their
// length, and an input that cannot be listed is an error naming it.
func TestFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Repeat([]byte("x"), n), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c := write("in/a.txt", 250), write("in/sub/b.txt", 0), write("in/c.txt", 99)
	extra := write("extra.txt", 10)
	in := filepath.Join(dir, "in")
	type part struct {
		path     string
		off, len int64
	}
	list := func(s mr.Input[mr.Split]) []part {
		var ps []part
		for i := range s.Len() {
			x, err := s.At(ctx, i)
			if err != nil {
				t.Fatal(err)
			}
			if w := s.(mr.Weighter).Weight(i); w != float64(x.Len) {
				t.Errorf("split %d weighs %v, want its length %d", i, w, x.Len)
			}
			ps = append(ps, part{x.Path, x.Off, x.Len})
		}
		return ps
	}
	whole, skips, err := mr.Files(ctx, mr.FileOptions{}, in, extra)
	if err != nil || skips != nil {
		t.Fatal(skips, err)
	}
	wantWhole := []part{{a, 0, 250}, {c, 0, 99}, {b, 0, 0}, {extra, 0, 10}}
	if got := list(whole); !slices.Equal(got, wantWhole) {
		t.Errorf("Files(SplitBytes 0) = %v, want %v", got, wantWhole)
	}
	cut, _, err := mr.Files(ctx, mr.FileOptions{SplitBytes: 100}, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []part{{a, 0, 100}, {a, 100, 100}, {a, 200, 50}, {c, 0, 99}, {b, 0, 0}}
	if got := list(cut); !slices.Equal(got, want) {
		t.Errorf("Files(SplitBytes 100) = %v, want %v", got, want)
	}
	missing := filepath.Join(dir, "nope")
	if _, _, err := mr.Files(ctx, mr.FileOptions{}, in, missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Files with a missing input: %v; want an error naming %s", err, missing)
	}
	if none, _, err := mr.Files(ctx, mr.FileOptions{}); err != nil || none.Len() != 0 {
		t.Errorf("Files without paths: %v, %v; want an empty input", none, err)
	}
	if _, _, err := mr.Files(ctx, mr.FileOptions{SplitBytes: -3}, in); err == nil || !strings.Contains(err.Error(), "-3") {
		t.Errorf("Files with SplitBytes -3: %v; want an error naming -3", err)
	}

	// AllFiles: every rank gets rank 0's splits, the same hash, and rank
	// 0's error.
	for _, ranks := range []int{1, 3} {
		err := pgas.Run(ctx, pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
			got, _, err := mr.AllFiles(ctx, r, mr.FileOptions{SplitBytes: 100}, in)
			if err != nil {
				return err
			}
			if ps := list(got); !slices.Equal(ps, want) {
				return fmt.Errorf("rank %d: %v, want %v", r.ID(), ps, want)
			}
			if got.(mr.Hasher).Hash() != cut.(mr.Hasher).Hash() {
				return fmt.Errorf("rank %d: hash differs from Files'", r.ID())
			}
			got, _, err = mr.AllFiles(ctx, r, mr.FileOptions{}, in, extra)
			if err != nil {
				return err
			}
			if ps := list(got); !slices.Equal(ps, wantWhole) {
				return fmt.Errorf("rank %d: SplitBytes 0: %v, want %v", r.ID(), ps, wantWhole)
			}
			if _, _, err := mr.AllFiles(ctx, r, mr.FileOptions{}, in, missing); err == nil || !strings.Contains(err.Error(), missing) {
				return fmt.Errorf("rank %d: AllFiles with a missing input: %v; want an error naming %s", r.ID(), err, missing)
			}
			if _, _, err := mr.AllFiles(ctx, r, mr.FileOptions{SplitBytes: -1}, in); err == nil || !strings.Contains(err.Error(), "-1") {
				return fmt.Errorf("rank %d: AllFiles with SplitBytes -1: %v; want an error naming -1", r.ID(), err)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%d ranks: %v", ranks, err)
		}
	}
}
