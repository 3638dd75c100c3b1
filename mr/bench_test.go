package mr_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// Framework overhead at 1 rank against a hand-written sequential loop on
// the same data, for a wordcount-like and a histogram-like job.

func benchLines() ([]string, int64) {
	ls := lines(20000)
	var n int64
	for _, l := range ls {
		n += int64(len(l))
	}
	return ls, n
}

func BenchmarkWordcount(b *testing.B) {
	ls, size := benchLines()
	b.Run("sequential", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			counts := map[string]int64{}
			for _, l := range ls {
				for _, w := range strings.Fields(l) {
					counts[w]++
				}
			}
			if len(counts) == 0 {
				b.Fatal("no words")
			}
		}
	})
	for _, ranks := range []int{1, 2} {
		b.Run(fmt.Sprintf("pgasmr/ranks=%d", ranks), func(b *testing.B) {
			b.SetBytes(size)
			benchJob(b, ranks, func(ctx context.Context, r *pgas.Rank) error {
				st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
				if err != nil {
					return err
				}
				if _, err := mr.ApplyMap(ctx, r, mr.Slice(ls), wordCount, st); err != nil {
					return err
				}
				_, err = mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (int, error) {
					return p.Len(), nil
				}, mr.Gather(reduce.GatherRoot))
				return err
			})
		})
	}
}

func BenchmarkHistogram(b *testing.B) {
	px := pixels(64, 1<<16)
	size := int64(len(px) * len(px[0]))
	b.Run("sequential", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			var h [768]int64
			for _, c := range px {
				for j := 0; j+2 < len(c); j += 3 {
					h[c[j]]++
					h[256+int(c[j+1])]++
					h[512+int(c[j+2])]++
				}
			}
			if h[0] < 0 {
				b.Fatal()
			}
		}
	})
	for _, ranks := range []int{1, 2} {
		b.Run(fmt.Sprintf("pgasmr/ranks=%d", ranks), func(b *testing.B) {
			b.SetBytes(size)
			benchJob(b, ranks, func(ctx context.Context, r *pgas.Rank) error {
				st, err := reduce.NewArrayStore[uint16, int64](768, reduce.Sum[int64]())
				if err != nil {
					return err
				}
				// The array-based fast path: count this rank's share of
				// the pixels locally, emit one combined pair per value
				// (BenchmarkEmit measures per-pixel emission).
				if _, err := mr.ApplyMapArray(ctx, r, mr.Slice(px), func(ctx context.Context, s mr.Share[[]byte], emit func(uint16, int64)) error {
					var h [768]int64
					for i := range s.Elements() {
						c, _ := s.Input.At(ctx, i)
						for j := 0; j+2 < len(c); j += 3 {
							h[c[j]]++
							h[256+int(c[j+1])]++
							h[512+int(c[j+2])]++
						}
					}
					for k, v := range h {
						if v > 0 {
							emit(uint16(k), v)
						}
					}
					return nil
				}, st); err != nil {
					return err
				}
				_, err = mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[uint16, int64]) (int, error) {
					return p.Len(), nil
				}, mr.Gather(reduce.GatherRoot))
				return err
			})
		})
	}
}

// BenchmarkEmit compares per-pixel emission into a dense container with a
// sum combiner, per-pixel emission keeping every value (no combining, a
// hash container), and in-mapper combining (local counts, 768 emits per
// rank), on the same pixels at 1 rank.
func BenchmarkEmit(b *testing.B) {
	px := pixels(16, 1<<14)
	size := int64(len(px) * len(px[0]))
	run := func(b *testing.B, mk func() (*reduce.Store[uint16, int64], error), inMapper bool) {
		b.SetBytes(size)
		benchJob(b, 1, func(ctx context.Context, r *pgas.Rank) error {
			st, err := mk()
			if err != nil {
				return err
			}
			if _, err := mr.ApplyMapArray(ctx, r, mr.Slice(px), func(ctx context.Context, s mr.Share[[]byte], emit func(uint16, int64)) error {
				var h [768]int64
				for i := range s.Input.Len() {
					c, _ := s.Input.At(ctx, i)
					for j := 0; j+2 < len(c); j += 3 {
						if inMapper {
							h[c[j]]++
							h[256+int(c[j+1])]++
							h[512+int(c[j+2])]++
							continue
						}
						emit(uint16(c[j]), 1)
						emit(256+uint16(c[j+1]), 1)
						emit(512+uint16(c[j+2]), 1)
					}
				}
				if inMapper {
					for k, v := range h {
						if v > 0 {
							emit(uint16(k), v)
						}
					}
				}
				return nil
			}, st); err != nil {
				return err
			}
			_, err = mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[uint16, int64]) (int, error) {
				return p.Len(), nil
			}, mr.Gather(reduce.GatherRoot))
			return err
		})
	}
	b.Run("sequential", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			var h [768]int64
			for _, c := range px {
				for j := 0; j+2 < len(c); j += 3 {
					h[c[j]]++
					h[256+int(c[j+1])]++
					h[512+int(c[j+2])]++
				}
			}
			if h[0] < 0 {
				b.Fatal()
			}
		}
	})
	b.Run("dense-sum", func(b *testing.B) {
		run(b, func() (*reduce.Store[uint16, int64], error) {
			return reduce.NewArrayStore[uint16, int64](768, reduce.Sum[int64]())
		}, false)
	})
	b.Run("hash-sum", func(b *testing.B) {
		run(b, func() (*reduce.Store[uint16, int64], error) {
			return reduce.NewHashStore[uint16, int64](reduce.Sum[int64]())
		}, false)
	})
	b.Run("hash-keepall", func(b *testing.B) {
		run(b, func() (*reduce.Store[uint16, int64], error) {
			return reduce.NewHashStore[uint16, int64](reduce.KeepAll[int64]())
		}, false)
	})
	b.Run("in-mapper", func(b *testing.B) {
		run(b, func() (*reduce.Store[uint16, int64], error) {
			return reduce.NewArrayStore[uint16, int64](768, reduce.Sum[int64]())
		}, true)
	})
}

// BenchmarkGather compares gather modes and transfers on a job with many
// distinct keys (every element its own key), where the shuffle dominates.
func BenchmarkGather(b *testing.B) {
	const keys = 1 << 15
	in := make([]uint64, keys)
	for i := range in {
		in[i] = uint64(i) * 2654435761
	}
	for _, ranks := range []int{8, 64} {
		for _, g := range []reduce.Gather{reduce.GatherAll, reduce.GatherPartitioned} {
			for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
				if tr == reduce.ElementByElement && ranks == 64 && g == reduce.GatherAll {
					continue // 64 x 32768 single puts per call
				}
				b.Run(fmt.Sprintf("ranks=%d/%v/%v", ranks, g, tr), func(b *testing.B) {
					benchJob(b, ranks, func(ctx context.Context, r *pgas.Rank) error {
						st, err := reduce.NewHashStore[uint64, int64](reduce.Sum[int64]())
						if err != nil {
							return err
						}
						if _, err := mr.ApplyMap(ctx, r, mr.Slice(in), func(ctx context.Context, k uint64, emit func(uint64, int64)) error {
							emit(k, 1)
							return nil
						}, st); err != nil {
							return err
						}
						_, err = mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[uint64, int64]) (int, error) {
							return p.Len(), nil
						}, mr.Gather(g), mr.WithTransfer(tr))
						return err
					})
				})
			}
		}
	}
}

// benchJob runs job b.N times inside one pgas job; rank 0 owns the timer.
func benchJob(b *testing.B, ranks int, job func(ctx context.Context, r *pgas.Rank) error) {
	b.Helper()
	b.ReportAllocs()
	err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks, SegmentBytes: segFor(ranks)}, func(ctx context.Context, r *pgas.Rank) error {
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == 0 {
			b.ResetTimer()
		}
		for range b.N {
			if err := job(ctx, r); err != nil {
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
}

// segFor keeps the job's segments within memory at 64 ranks.
func segFor(ranks int) int64 {
	if ranks > 8 {
		return 8 << 20
	}
	return 64 << 20
}
