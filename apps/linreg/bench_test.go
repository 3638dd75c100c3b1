package linreg

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgasmr/pgasmr/apps/internal/apptest"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
)

// benchPoints is the size of the benchmark input: 64 Mi int8 points,
// 128 MiB.
const benchPoints = 64 << 20

// benchFile generates the benchmark input once into os.TempDir and reuses
// it in later runs (it is regenerated if its size is wrong).
func benchFile(b *testing.B) (string, int64) {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("pgasmr-linreg-bench-%d-seed1.int8", benchPoints))
	if fi, err := os.Stat(path); err == nil && fi.Size() == 2*benchPoints {
		return path, fi.Size()
	}
	tmp := path + fmt.Sprintf(".%d.tmp", os.Getpid())
	f, err := os.Create(tmp)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if err := Generate(w, benchPoints, "int8", 1); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path, 2 * benchPoints
}

// BenchmarkLinreg measures whole jobs on an int8 file of 128 MiB in the
// page cache, reading included: the sequential and goroutine baselines
// and the pgasmr job (array map, gather to root) on 1 and 2 ranks.
func BenchmarkLinreg(b *testing.B) {
	path, size := benchFile(b)
	files := []string{path}
	if _, err := Seq(context.Background(), files, Options{}); err != nil { // warm the page cache
		b.Fatal(err)
	}
	b.Run("seq", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Seq(context.Background(), files, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("goroutines", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Goroutines(context.Background(), files, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, element := range []bool{false, true} {
		for _, ranks := range []int{1, 2} {
			name := fmt.Sprintf("pgasmr/ranks=%d", ranks)
			if element {
				name = fmt.Sprintf("pgasmr-element/ranks=%d", ranks)
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
					if err := r.Barrier(ctx); err != nil {
						return err
					}
					if r.ID() == 0 {
						b.ResetTimer()
					}
					for range b.N {
						if _, err := Run(ctx, r, files, Options{Options: mr.Options{Map: apptest.MapMode(element)}}); err != nil {
							return err
						}
					}
					if r.ID() == 0 {
						b.StopTimer()
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkRead compares reading binary chunks through a memory map with
// ReadAt into a buffer, in the sequential baseline.
func BenchmarkRead(b *testing.B) {
	path, size := benchFile(b)
	defer func(m bool) { useMmap = m }(useMmap)
	for _, m := range []bool{false, true} {
		name := map[bool]string{false: "pread", true: "mmap"}[m]
		b.Run(name, func(b *testing.B) {
			useMmap = m
			b.SetBytes(size)
			for b.Loop() {
				if _, err := Seq(context.Background(), []string{path}, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
