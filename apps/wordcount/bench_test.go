package wordcount

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/wrap"
	"github.com/pgasmr/pgasmr/reduce"
)

const (
	benchBytes = 100 << 20
	benchFiles = 40
	benchSeed  = 1
)

// benchCorpus generates the benchmark corpus into os.TempDir once and
// reuses it (a marker file says it is complete); it returns the directory
// and its size.
func benchCorpus(b *testing.B) (string, int64) {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("pgasmr-wordcount-bench-%d-%d-%d", benchBytes, benchFiles, benchSeed))
	done := filepath.Join(dir, "complete")
	if _, err := os.Stat(done); err != nil {
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		if err := Generate(filepath.Join(dir, "corpus"), benchBytes, benchFiles, benchSeed); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	corpus := filepath.Join(dir, "corpus")
	var size int64
	err := filepath.WalkDir(corpus, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			size += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return corpus, size
}

// BenchmarkWordcount measures whole jobs (listing, reading, counting,
// reduce, sorting) on the generated corpus: the baselines and pgasmr at 1
// and 2 ranks.
func BenchmarkWordcount(b *testing.B) {
	dir, size := benchCorpus(b)
	paths := []string{dir}
	ctx := context.Background()
	for _, m := range []mode{{"seq", Seq}, {"goroutines", Goroutines}} {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.run(ctx, paths, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"element/block", Options{Options: mr.Options{Map: mr.MapElement}}},
		{"element/balanced", Options{Options: mr.Options{Dist: distrib.Balanced, Map: mr.MapElement}}},
		{"array/block", Options{}}, {"array/balanced", Options{Options: mr.Options{Map: mr.MapArray, Dist: distrib.Balanced}}},
	} {
		for _, ranks := range []int{1, 2} {
			b.Run(fmt.Sprintf("pgasmr/ranks=%d/%s", ranks, c.name), func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				err := pgas.Run(ctx, pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
					if err := r.Barrier(ctx); err != nil {
						return err
					}
					if r.ID() == 0 {
						b.ResetTimer()
					}
					for range b.N {
						if _, err := Run(ctx, r, paths, c.o); err != nil {
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

// BenchmarkWords measures the tokenizer alone on the first file of the
// corpus, against strings.FieldsFunc with lower-casing.
func BenchmarkWords(b *testing.B) {
	dir, _ := benchCorpus(b)
	var text []byte
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && text == nil {
			text, err = os.ReadFile(path)
		}
		return err
	})
	b.Run("Words", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		n := 0
		for b.Loop() {
			Words(text, func([]byte) { n++ })
		}
	})
	b.Run("batch", func(b *testing.B) { // as the jobs tokenize
		b.SetBytes(int64(len(text)))
		n := 0
		bt := newBatch(func(ws [][]byte) { n += len(ws) })
		for b.Loop() {
			bt.words(text)
			bt.flush()
		}
	})
	b.Run("oracle", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			oracleWords(string(text))
		}
	})
}

// BenchmarkCounter compares reduce.CountTable with a map[string]int64
// (lookups with m[string(b)], which do not allocate) on the words of the
// first corpus file.
func BenchmarkCounter(b *testing.B) {
	dir, _ := benchCorpus(b)
	var text []byte
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && text == nil {
			text, err = os.ReadFile(path)
		}
		return err
	})
	b.Run("counter", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			c := reduce.NewCountTable()
			Words(text, c.Add)
		}
	})
	// How the jobs count: batches of words to AddAll.
	b.Run("batch", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			c := reduce.NewCountTable()
			bt := newBatch(c.AddAll)
			bt.words(text)
			bt.flush()
		}
	})
	b.Run("map", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			m := map[string]int64{}
			Words(text, func(w []byte) {
				if _, ok := m[string(w)]; ok {
					m[string(w)]++
				} else {
					m[string(w)] = 1
				}
			})
		}
	})
}

// BenchmarkCheck measures what the cross-rank checks of collective calls
// and map inputs, on by default, cost a whole 2-rank job: the same job
// with and without pgas.Config.NoCheck (run with -count N, the two
// alternate). barriers/op and gets/op are rank 1's endpoint calls of one
// job, which the checks add to.
func BenchmarkCheck(b *testing.B) {
	dir, size := benchCorpus(b)
	paths := []string{dir}
	for _, noCheck := range []bool{false, true} {
		name := "checked"
		if noCheck {
			name = "nocheck"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			tr := wrap.NewCounting(inproc.New())
			var ops wrap.Counts
			err := pgas.Run(context.Background(), pgas.Config{Ranks: 2, NoCheck: noCheck, Transport: tr}, func(ctx context.Context, r *pgas.Rank) error {
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				if r.ID() == 0 {
					b.ResetTimer()
				}
				before := tr.Counts(1)
				for range b.N {
					if _, err := Run(ctx, r, paths, Options{}); err != nil {
						return err
					}
				}
				if r.ID() == 1 {
					after := tr.Counts(1)
					for i := range ops.Ops {
						ops.Ops[i] = after.Ops[i] - before.Ops[i]
					}
				}
				if r.ID() == 0 {
					b.StopTimer()
				}
				return r.Barrier(ctx)
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(ops.Ops[wrap.OpBarrier])/float64(b.N), "barriers/op")
			b.ReportMetric(float64(ops.Ops[wrap.OpGet])/float64(b.N), "gets/op")
		})
	}
}
