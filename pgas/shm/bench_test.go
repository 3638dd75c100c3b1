//go:build linux

package shm_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/shm"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Benchmarks of the shm transport with 2 rank processes. A benchmark
// launches the ranks once per b.N; rank 0 times the b.N operations between
// two barriers and prints the time, which is reported as ns/op and MB/s
// (the process start-up is not in them). Beside each one runs a baseline
// in this process: copy() of the same bytes, and for AllgatherV the
// in-process transport.

const (
	benchPut        = iota // pgas Rank.PutBytes
	benchGet               // pgas Rank.GetBytes
	benchAllgatherV        // coll.AllgatherV, private to private
	benchEPPut             // transport Endpoint.Put
	benchEPGet             // transport Endpoint.Get
	benchPingPong          // FetchAdd on the peer's word, Load on one's own
	benchBarrier           // Endpoint.Barrier
)

var benchSizes = []int{8, 64 << 10, 4 << 20}

const benchSegBytes = 64 << 20

func BenchmarkPut(b *testing.B) { benchOneSided(b, benchPut) }

func BenchmarkGet(b *testing.B) { benchOneSided(b, benchGet) }

// benchOneSided: rank 0 puts to (gets from) rank 1's segment, through the
// pgas runtime (shm-pgas: Rank.PutBytes/GetBytes, with their counters and
// handles) and through the endpoint alone (shm-endpoint). A put or get is
// a copy done when the call returns, so ns/op at 8 bytes is the cost of
// the call; BenchmarkPingPong measures how long a value takes to be seen
// by the other process.
func benchOneSided(b *testing.B, kind int) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("ranks=2/size=%d/shm-pgas", size), func(b *testing.B) {
			runBench(b, kind, size, int64(size))
		})
		b.Run(fmt.Sprintf("ranks=2/size=%d/shm-endpoint", size), func(b *testing.B) {
			runBench(b, kind+benchEPPut, size, int64(size))
		})
		b.Run(fmt.Sprintf("ranks=2/size=%d/inproc-pgas", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			cfg := pgas.Config{Ranks: 2, SegmentBytes: benchSegBytes}
			err := pgas.Run(b.Context(), cfg, func(ctx context.Context, r *pgas.Rank) error {
				buf := make([]byte, size)
				if r.ID() == 0 {
					b.ResetTimer()
					for range b.N {
						var err error
						if kind == benchPut {
							err = r.PutBytes(ctx, 1, 0, buf)
						} else {
							err = r.GetBytes(ctx, 1, 0, buf)
						}
						if err != nil {
							return err
						}
					}
					b.StopTimer()
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
		b.Run(fmt.Sprintf("ranks=2/size=%d/copy", size), func(b *testing.B) {
			src, dst := make([]byte, size), make([]byte, size)
			b.SetBytes(int64(size))
			for b.Loop() {
				copy(dst, src)
			}
		})
	}
}

// BenchmarkPingPong: rank 0 adds 1 to a word of rank 1 and waits (spinning
// on Load) until rank 1 has added 1 to a word of rank 0 in reply. ns/op is
// half the round trip: the one-way latency of a value between processes.
func BenchmarkPingPong(b *testing.B) {
	b.Run("ranks=2/shm-endpoint", func(b *testing.B) {
		runBench(b, benchPingPong, 8, 0)
	})
}

// BenchmarkBarrier: Endpoint.Barrier on every rank. With more ranks than
// cores the waiters sleep on the futex.
func BenchmarkBarrier(b *testing.B) {
	for _, ranks := range []int{2, 4} {
		b.Run(fmt.Sprintf("ranks=%d/shm-endpoint", ranks), func(b *testing.B) {
			runBenchRanks(b, ranks, benchBarrier, 0, 0)
		})
	}
}

// BenchmarkAllgatherV: coll.AllgatherV of size bytes per rank from private
// to private memory on 2 ranks. MB/s counts the bytes one rank ends up
// with (2*size), as the benchmarks of package coll do.
func BenchmarkAllgatherV(b *testing.B) {
	for _, size := range []int{64 << 10, 4 << 20} {
		b.Run(fmt.Sprintf("ranks=2/size=%d/shm", size), func(b *testing.B) {
			runBench(b, benchAllgatherV, size, 2*int64(size))
		})
		b.Run(fmt.Sprintf("ranks=2/size=%d/inproc", size), func(b *testing.B) {
			b.SetBytes(2 * int64(size))
			cfg := pgas.Config{Ranks: 2, SegmentBytes: benchSegBytes, FragmentBytes: 4 << 20}
			err := pgas.Run(b.Context(), cfg, func(ctx context.Context, r *pgas.Rank) error {
				op := allgatherV(ctx, r, size)
				if err := op(); err != nil {
					return err
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				if r.ID() == 0 {
					b.ResetTimer()
				}
				for range b.N {
					if err := op(); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
		b.Run(fmt.Sprintf("ranks=2/size=%d/copy", size), func(b *testing.B) {
			src, dst := make([]byte, 2*size), make([]byte, 2*size)
			b.SetBytes(2 * int64(size))
			for b.Loop() {
				copy(dst, src)
			}
		})
	}
}

func allgatherV(ctx context.Context, r *pgas.Rank, size int) func() error {
	n := size / 8
	mine := make([]float64, n)
	for i := range mine {
		mine[i] = float64(r.ID()*n + i)
	}
	all := make([]float64, n*r.N())
	counts := make([]int, r.N())
	for i := range counts {
		counts[i] = n
	}
	return func() error {
		return coll.AllgatherV(ctx, r.World(), coll.Private(all), coll.Private(mine), counts, nil, nil)
	}
}

// runBench launches 2 ranks that run b.N operations of the given kind and
// size and reports rank 0's time.
func runBench(b *testing.B, kind, size int, bytesPerOp int64) {
	runBenchRanks(b, 2, kind, size, bytesPerOp)
}

func runBenchRanks(b *testing.B, ranks, kind, size int, bytesPerOp int64) {
	res := launch(b, ranks, "bench", fmt.Sprintf("%d,%d,%d", kind, size, b.N), benchSegBytes)
	if res.err != nil {
		b.Fatalf("%v\nstderr:\n%s", res.err, res.stderr)
	}
	got := lines(res.stdout, "RESULT ")
	if len(got) != 1 {
		b.Fatalf("stdout %q; want one RESULT line", res.stdout)
	}
	ns, err := strconv.ParseFloat(got[0], 64)
	if err != nil || ns <= 0 {
		b.Fatalf("bad RESULT %q", got[0])
	}
	if kind == benchPingPong {
		ns /= 2
	}
	b.ReportMetric(ns/float64(b.N), "ns/op")
	if bytesPerOp > 0 {
		b.ReportMetric(float64(bytesPerOp)*float64(b.N)/ns*1e3, "MB/s")
	}
}

// benchBody runs in the ranks of runBench: SHMTEST_ARG is "kind,size,n".
// Puts and gets go from rank 0 to rank 1's segment; rank 1 waits in the
// closing barrier.
func benchBody(ctx context.Context, tr *shm.Transport, arg string) error {
	args := argInts(arg)
	kind, size, n := int(args[0]), int(args[1]), int(args[2])
	if kind >= benchEPPut {
		return benchEndpoint(ctx, tr, kind, size, n)
	}
	cfg := config(tr)
	cfg.FragmentBytes = 4 << 20
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		reg, err := r.AllAlloc(ctx, int64(size))
		if err != nil {
			return err
		}
		buf := make([]byte, size)
		var op func() error
		switch kind {
		case benchPut:
			op = func() error { return r.PutBytes(ctx, 1, reg.Off, buf) }
		case benchGet:
			op = func() error { return r.GetBytes(ctx, 1, reg.Off, buf) }
		case benchAllgatherV:
			op = allgatherV(ctx, r, size)
		}
		if kind != benchAllgatherV && r.ID() != 0 {
			op = nil // rank 1 is the passive target
		}
		if op != nil {
			if err := op(); err != nil { // warm up: touch pages, allocate staging
				return err
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		start := time.Now()
		if op != nil {
			for range n {
				if err := op(); err != nil {
					return err
				}
			}
			if err := r.Fence(ctx); err != nil {
				return err
			}
		}
		if kind == benchAllgatherV {
			// Both ranks are done when the slower one is.
			if err := r.Barrier(ctx); err != nil {
				return err
			}
		}
		if r.ID() == 0 {
			fmt.Printf("RESULT %d\n", time.Since(start).Nanoseconds())
		}
		return nil
	})
}

// benchEndpoint runs the endpoint benchmarks on the transport without the
// pgas runtime.
func benchEndpoint(ctx context.Context, tr *shm.Transport, kind, size, n int) (err error) {
	eps, err := tr.Open(ctx, transport.Job{ID: tr.JobID(), Ranks: tr.Size(), SegmentBytes: tr.SegmentBytes(), SyncTimeout: time.Minute})
	if err != nil {
		return err
	}
	ep := eps[0]
	defer func() {
		if err != nil {
			ep.Fail(err)
		}
		if cerr := ep.Close(); err == nil {
			err = cerr
		}
	}()
	me := ep.Rank()
	buf := make([]byte, size)
	var op func(i int) error
	switch {
	case kind == benchEPPut && me == 0:
		op = func(int) error { return ep.Put(ctx, 1, 0, buf) }
	case kind == benchEPGet && me == 0:
		op = func(int) error { return ep.Get(ctx, 1, 0, buf) }
	case kind == benchBarrier:
		op = func(int) error { return ep.Barrier(ctx) }
	case kind == benchPingPong:
		// Iteration i: rank 0 adds 1 to rank 1's word and waits for its
		// own word to reach i+1; rank 1 waits for its word to reach i+1
		// and adds 1 to rank 0's.
		peer := 1 - me
		op = func(i int) error {
			if me == 0 {
				if _, err := ep.FetchAdd(ctx, peer, 0, 1); err != nil {
					return err
				}
			}
			for {
				v, err := ep.Load(ctx, me, 0)
				if err != nil {
					return err
				}
				if v > int64(i) {
					break
				}
			}
			if me == 1 {
				_, err := ep.FetchAdd(ctx, peer, 0, 1)
				return err
			}
			return nil
		}
	}
	if op != nil && kind != benchPingPong && kind != benchBarrier {
		if err := op(0); err != nil { // warm up
			return err
		}
	}
	if err := ep.Barrier(ctx); err != nil {
		return err
	}
	start := time.Now()
	if op != nil {
		for i := range n {
			if err := op(i); err != nil {
				return err
			}
		}
		if err := ep.Fence(ctx); err != nil {
			return err
		}
	}
	d := time.Since(start)
	if err := ep.Barrier(ctx); err != nil {
		return err
	}
	if me == 0 {
		fmt.Printf("RESULT %d\n", d.Nanoseconds())
	}
	return nil
}
