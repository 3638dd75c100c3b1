package histogram

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/apps/internal/apptest"
	"github.com/pgasmr/pgasmr/pgas"
)

// benchBytes is the size of the generated benchmark image.
const benchBytes = 128 << 20

var bench struct {
	once sync.Once
	path string
	size int64
	err  error
}

// benchFile generates the benchmark image into os.TempDir once and reuses
// it across runs (it is regenerated if its size is wrong).
func benchFile(b *testing.B) (string, int64) {
	bench.once.Do(func() {
		w, h := SizeFor(benchBytes)
		want := 54 + int64(h)*((int64(w)*3+3)&^3)
		bench.path = filepath.Join(os.TempDir(), fmt.Sprintf("pgasmr-histogram-bench-%dx%d.bmp", w, h))
		if fi, err := os.Stat(bench.path); err == nil && fi.Size() == want {
			bench.size = want
			return
		}
		tmp, err := os.CreateTemp(os.TempDir(), "pgasmr-histogram-bench-*.tmp")
		if err != nil {
			bench.err = err
			return
		}
		defer os.Remove(tmp.Name())
		if err := Generate(tmp, w, h, 1); err != nil {
			tmp.Close()
			bench.err = err
			return
		}
		if err := tmp.Close(); err != nil {
			bench.err = err
			return
		}
		bench.err = os.Rename(tmp.Name(), bench.path)
		bench.size = want
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.path, bench.size
}

// BenchmarkJob measures whole jobs (headers, reading from the page cache,
// counting, reduce) on one generated image of benchBytes.
func BenchmarkJob(b *testing.B) {
	path, size := benchFile(b)
	files := []string{path}
	ctx := context.Background()
	o := DefaultOptions()
	for _, base := range []struct {
		name string
		f    func(context.Context, []string, Options) (*Result, error)
	}{{"seq-naive", seqNaive}, {"seq", Seq}, {"goroutines", Goroutines}} {
		b.Run(base.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := base.f(ctx, files, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, c := range []struct {
		ranks   int
		element bool
	}{{1, false}, {2, false}, {2, true}} {
		name := fmt.Sprintf("pgasmr/ranks=%d", c.ranks)
		if c.element {
			name = fmt.Sprintf("pgasmr-element/ranks=%d", c.ranks)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			o := o
			o.Map = apptest.MapMode(c.element)
			err := pgas.Run(ctx, pgas.Config{Ranks: c.ranks}, func(ctx context.Context, r *pgas.Rank) error {
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				if r.ID() == 0 {
					b.ResetTimer()
				}
				for range b.N {
					res, err := Run(ctx, r, files, o)
					if err != nil {
						return err
					}
					if r.ID() == o.Root && res.Pixels*3 > size {
						return fmt.Errorf("%d pixels in a %d-byte file", res.Pixels, size)
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

// seqNaive is Seq with the plain counting loop (one table, one pixel at a
// time): the baseline beside the optimised kernel.
func seqNaive(ctx context.Context, files []string, o Options) (*Result, error) {
	p, err := newPlan(ctx, files, o.ChunkBytes)
	if err != nil {
		return nil, err
	}
	rd := newReader(p)
	defer rd.Close()
	var h [768]int64
	for _, ch := range p.chunks {
		if err := rd.each(ctx, ch, func(px []byte) { naiveCount(&h, px) }); err != nil {
			return nil, err
		}
	}
	res := &Result{Images: len(files), Pixels: p.pixels}
	copy(res.Blue[:], h[512:])
	copy(res.Green[:], h[256:512])
	copy(res.Red[:], h[:256])
	return res, nil
}
