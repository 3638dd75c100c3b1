//go:build shmem

package shmem_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	"github.com/pgasmr/pgasmr/pgas/shmem"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Benchmarks of the OpenSHMEM transport with 2 PEs, as pgas/mpi's: one
// oshrun per b.N; rank 0 times the b.N operations between two barriers
// and prints the time, reported as ns/op and MB/s (start-up is not in
// them). Run the small sizes with a fixed count, -benchtime=20000x.

const (
	benchEPPut      = iota // transport Endpoint.Put (shmem_putmem)
	benchEPGet             // transport Endpoint.Get (shmem_getmem)
	benchPgasPut           // pgas Rank.PutBytes
	benchPgasGet           // pgas Rank.GetBytes
	benchAllgatherV        // coll.AllgatherV (one-sided: no native collectives)
)

var benchSizes = []int{8, 64 << 10, 4 << 20}

func BenchmarkPut(b *testing.B) {
	for _, size := range benchSizes {
		for _, v := range []struct {
			name string
			kind int
		}{{"shmem-endpoint", benchEPPut}, {"shmem-pgas", benchPgasPut}} {
			b.Run(fmt.Sprintf("ranks=2/size=%d/%s", size, v.name), func(b *testing.B) { runBench(b, v.kind, size, int64(size)) })
		}
	}
}

func BenchmarkGet(b *testing.B) {
	for _, size := range benchSizes {
		for _, v := range []struct {
			name string
			kind int
		}{{"shmem-endpoint", benchEPGet}, {"shmem-pgas", benchPgasGet}} {
			b.Run(fmt.Sprintf("ranks=2/size=%d/%s", size, v.name), func(b *testing.B) { runBench(b, v.kind, size, int64(size)) })
		}
	}
}

// BenchmarkAllgatherV: size bytes per rank, private to private, on 2
// PEs. MB/s counts the bytes one rank ends up with (2*size).
func BenchmarkAllgatherV(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("ranks=2/size=%d/coll", size), func(b *testing.B) { runBench(b, benchAllgatherV, size, 2*int64(size)) })
	}
}

func runBench(b *testing.B, kind, size int, bytesPerOp int64) {
	res := launch(b, 2, "bench", fmt.Sprintf("%d,%d,%d", kind, size, b.N))
	if res.Err != nil {
		b.Fatalf("%v\nstderr:\n%s", res.Err, res.Stderr)
	}
	ranktest.Report(b, ranktest.Result(b, res.Stdout), bytesPerOp)
}

// benchBody runs in the PEs of runBench: SHMEMTEST_ARG is "kind,size,n".
// Puts and gets go from rank 0 to rank 1's segment.
func benchBody(ctx context.Context, tr *shmem.Transport, arg string) error {
	args := ranktest.ArgInts(arg)
	kind, size, n := int(args[0]), int(args[1]), int(args[2])
	cfg := config(tr)
	cfg.FragmentBytes = 4 << 20
	cfg.SegmentBytes = 16 << 20
	if kind == benchEPPut || kind == benchEPGet {
		return benchEndpoint(ctx, tr, cfg, kind, size, n)
	}
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		if kind == benchAllgatherV {
			return ranktest.TimeOps(ctx, r, ranktest.AllgatherV(ctx, r, size), n, false)
		}
		op, err := ranktest.OneSided(ctx, r, size, kind == benchPgasGet)
		if err != nil {
			return err
		}
		return ranktest.TimeOps(ctx, r, op, n, false)
	})
}

// benchEndpoint times the endpoint's Put or Get without the pgas runtime.
func benchEndpoint(ctx context.Context, tr *shmem.Transport, cfg pgas.Config, kind, size, n int) (err error) {
	eps, err := tr.Open(ctx, transport.Job{ID: "bench", Ranks: tr.Size(), SegmentBytes: cfg.SegmentBytes, SyncTimeout: time.Minute})
	if err != nil {
		return err
	}
	ep := eps[0]
	defer func() {
		if cerr := ep.Close(); err == nil {
			err = cerr
		}
	}()
	buf := make([]byte, size)
	var loop func(n int) error
	if ep.Rank() == 0 {
		loop = func(n int) error {
			for range n {
				var err error
				if kind == benchEPPut {
					err = ep.Put(ctx, 1, 0, buf)
				} else {
					err = ep.Get(ctx, 1, 0, buf)
				}
				if err != nil {
					return err
				}
			}
			return nil
		}
	}
	return ranktest.TimeEndpoint(ctx, ep, loop, n, true)
}
