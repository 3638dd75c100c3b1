package spamcount

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

var bench struct {
	sync.Once
	gen string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.gen != "" {
		os.RemoveAll(bench.gen)
	}
	os.Exit(code)
}

// benchCorpora returns the corpora to measure: the real one if present and
// 3,000 generated messages.
func benchCorpora(b *testing.B) map[string]string {
	bench.Do(func() {
		dir, err := os.MkdirTemp("", "spamcount-bench")
		if err != nil {
			b.Fatal(err)
		}
		if err := Generate(dir, 3000, 1); err != nil {
			b.Fatal(err)
		}
		bench.gen = dir // removed by TestMain
	})
	cs := map[string]string{"generated": bench.gen}
	if testing.Short() {
		return cs
	}
	cs["real"] = extractCorpus(b)
	return cs
}

func inputBytes(b *testing.B, dir string) int64 {
	msgs, err := Scan(context.Background(), []string{dir})
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, m := range msgs {
		n += m.Len
	}
	return n
}

// BenchmarkSpamcount measures whole jobs (scanning, reading, decoding,
// counting, reducing) on the real SpamAssassin corpus and on generated
// messages: the seq and goroutines baselines beside pgasmr on 1 and 2
// in-process ranks.
func BenchmarkSpamcount(b *testing.B) {
	ctx := context.Background()
	corpora := benchCorpora(b)
	for _, name := range []string{"real", "generated"} {
		dir, ok := corpora[name]
		if !ok {
			continue
		}
		size := inputBytes(b, dir)
		paths := []string{dir}
		b.Run(fmt.Sprintf("corpus=%s/mode=seq", name), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Seq(ctx, paths, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("corpus=%s/mode=goroutines", name), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Goroutines(ctx, paths, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, ranks := range []int{1, 2} {
			b.Run(fmt.Sprintf("corpus=%s/mode=pgasmr/ranks=%d", name, ranks), func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				o := Options{Options: mr.Options{Dist: distrib.Balanced, Gather: reduce.GatherRoot}}
				for b.Loop() {
					err := pgas.Run(ctx, pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
						_, err := Run(ctx, r, paths, o)
						return err
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDecode measures decoding and counting one message in memory,
// beside the matcher alone on the same bytes (the naive floor).
func BenchmarkDecode(b *testing.B) {
	dir := b.TempDir()
	if err := Generate(dir, 5, 3); err != nil {
		b.Fatal(err)
	}
	words := DefaultWords()
	for i := range 5 {
		raw, err := os.ReadFile(fmt.Sprintf("%s/%06d.eml", dir, i))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("shape=%d/decode+count", i), func(b *testing.B) {
			c := newCounter(words)
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.count(context.Background(), raw, func(int32, counts) {}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("shape=%d/count-raw", i), func(b *testing.B) {
			m := newMatcher(words)
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				m.add(raw)
				m.flush(func(int32, int64) {})
			}
		})
	}
}
