//go:build linux

package shm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
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
	benchElemSeq           // Array.Get of the next element (size: 1 with the cache on, 0 off)
	benchElemRand          // Array.Get of a random element (size as above)
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

// BenchmarkElemGet: rank 0 reads rank 1's int64s one Array.Get at a
// time, the next one or one at random (ranktest.ElemGets), with the
// remote-reference cache off and on (MuPC's default geometry, 256 lines
// of 1 KiB per remote rank, half the 512 KiB read).
func BenchmarkElemGet(b *testing.B) {
	for _, kind := range []int{benchElemSeq, benchElemRand} {
		for _, cache := range []int{0, 1} {
			name := fmt.Sprintf("ranks=2/%s/cache=%s", map[int]string{benchElemSeq: "stride1", benchElemRand: "random"}[kind], map[int]string{0: "off", 1: "on"}[cache])
			b.Run(name, func(b *testing.B) {
				runBench(b, kind, cache, 8)
			})
		}
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
				op := ranktest.AllgatherV(ctx, r, size)
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
	ns := ranktest.Result(b, res.stdout)
	if kind == benchPingPong {
		ns /= 2
	}
	ranktest.Report(b, ns, bytesPerOp)
}

// benchBody runs in the ranks of runBench: SHMTEST_ARG is "kind,size,n".
// Puts and gets go from rank 0 to rank 1's segment; rank 1 waits in the
// closing barrier.
func benchBody(ctx context.Context, tr *shm.Transport, arg string) error {
	args := ranktest.ArgInts(arg)
	kind, size, n := int(args[0]), int(args[1]), int(args[2])
	if kind >= benchEPPut && kind <= benchBarrier {
		return benchEndpoint(ctx, tr, kind, size, n)
	}
	cfg := config(tr)
	cfg.FragmentBytes = 4 << 20
	if kind == benchElemSeq || kind == benchElemRand {
		if size == 1 {
			cfg.Cache = pgas.CacheConfig{Lines: pgas.DefaultCacheLines}
		}
		return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
			op, err := ranktest.ElemGets(ctx, r, kind == benchElemRand, 1)
			if err != nil {
				return err
			}
			return ranktest.TimeOps(ctx, r, op, n, false)
		})
	}
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		if kind == benchAllgatherV {
			// Done on both ranks when the slower one is.
			return ranktest.TimeOps(ctx, r, ranktest.AllgatherV(ctx, r, size), n, true)
		}
		op, err := ranktest.OneSided(ctx, r, size, kind == benchGet)
		if err != nil {
			return err
		}
		return ranktest.TimeOps(ctx, r, op, n, false)
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
	var loop func(n int) error
	if op != nil {
		loop = func(n int) error {
			for i := range n {
				if err := op(i); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return ranktest.TimeEndpoint(ctx, ep, loop, n, kind != benchPingPong && kind != benchBarrier)
}
