package ranktest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// The benchmarks of a process-per-rank transport launch the ranks once per
// b.N; rank 0 times the b.N operations between two barriers and prints
// "RESULT <ns>", which the benchmark reports as ns/op and MB/s (the start-up
// is not in them).

// TimeOps times n calls of op on r: one call to warm up (touch pages,
// allocate staging), a barrier, the n calls and a Fence; with sync, a
// barrier after the fence, so that the time is the slowest rank's. A nil
// op (a passive target) only joins the barriers. Rank 0 prints the time.
func TimeOps(ctx context.Context, r *pgas.Rank, op func() error, n int, sync bool) error {
	if op != nil {
		if err := op(); err != nil {
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
	if sync {
		if err := r.Barrier(ctx); err != nil {
			return err
		}
	}
	if r.ID() == 0 {
		printResult(time.Since(start))
	}
	return nil
}

// TimeEndpoint times loop(n), which runs n operations, on ep without the
// pgas runtime: after loop(1) to warm up if warm, between two barriers,
// with a Fence before the clock stops. A nil loop (a passive target) only
// joins the barriers. Rank 0 prints the time.
func TimeEndpoint(ctx context.Context, ep transport.Endpoint, loop func(n int) error, n int, warm bool) error {
	if loop != nil && warm {
		if err := loop(1); err != nil {
			return err
		}
	}
	if err := ep.Barrier(ctx); err != nil {
		return err
	}
	start := time.Now()
	if loop != nil {
		if err := loop(n); err != nil {
			return err
		}
		if err := ep.Fence(ctx); err != nil {
			return err
		}
	}
	d := time.Since(start)
	if err := ep.Barrier(ctx); err != nil {
		return err
	}
	if ep.Rank() == 0 {
		printResult(d)
	}
	return nil
}

func printResult(d time.Duration) { fmt.Printf("RESULT %d\n", d.Nanoseconds()) }

// Result returns the nanoseconds of the one RESULT line of stdout, and
// fails b if there is not exactly one, valid and positive.
func Result(b testing.TB, stdout string) float64 {
	b.Helper()
	got := Lines(stdout, "RESULT ")
	if len(got) != 1 {
		b.Fatalf("stdout %q; want one RESULT line", stdout)
	}
	ns, err := strconv.ParseFloat(got[0], 64)
	if err != nil || ns <= 0 {
		b.Fatalf("bad RESULT %q", got[0])
	}
	return ns
}

// Report reports ns nanoseconds for b.N operations as ns/op, and as MB/s
// of bytesPerOp if it is positive.
func Report(b *testing.B, ns float64, bytesPerOp int64) {
	b.ReportMetric(ns/float64(b.N), "ns/op")
	if bytesPerOp > 0 {
		b.ReportMetric(float64(bytesPerOp)*float64(b.N)/ns*1e3, "MB/s")
	}
}

// AllgatherV returns an operation that gathers size bytes (at least one
// float64) of private memory from every rank of r's world into private
// memory with coll.AllgatherV and opts.
func AllgatherV(ctx context.Context, r *pgas.Rank, size int, opts ...coll.Option) func() error {
	n := max(1, size/8)
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
		return coll.AllgatherV(ctx, r.World(), coll.Private(all), coll.Private(mine), counts, nil, nil, opts...)
	}
}

// OneSided allocates size bytes on every rank of r's job (a collective
// call) and returns an operation by which rank 0 puts size bytes into rank
// 1's allocation, or with get gets them from it. The other ranks get a nil
// operation: they are the passive target.
func OneSided(ctx context.Context, r *pgas.Rank, size int, get bool) (func() error, error) {
	reg, err := r.AllAlloc(ctx, int64(size))
	if err != nil || r.ID() != 0 {
		return nil, err
	}
	buf := make([]byte, size)
	if get {
		return func() error { return r.GetBytes(ctx, 1, reg.Off, buf) }, nil
	}
	return func() error { return r.PutBytes(ctx, 1, reg.Off, buf) }, nil
}

// ElemGetElems is the length of the array ElemGets reads: 512 KiB of
// int64s on rank 1, twice MuPC's default cache of 256 lines of 1 KiB.
const ElemGetElems = 64 << 10

// ElemGets allocates an int64 array of ElemGetElems elements on each rank
// (a collective call) and returns an operation by which rank 0 reads one
// element with Array.Get: the next one (stride 1) or, with random, one
// at random, the two access patterns of the seeds' streaming remote
// access benchmark, from rank peer's elements. The other ranks get a nil
// operation.
func ElemGets(ctx context.Context, r *pgas.Rank, random bool, peer int) (func() error, error) {
	// Block b of ElemGetElems elements is on rank b%N: read block peer.
	a, err := pgas.AllAllocArray[int64](ctx, r, int64(r.N())*ElemGetElems, ElemGetElems)
	if err != nil || r.ID() != 0 {
		return nil, err
	}
	var i, x uint64
	return func() error {
		if random {
			x = x*6364136223846793005 + 1442695040888963407
			i = (x >> 33) % ElemGetElems
		} else {
			i = (i + 1) % ElemGetElems
		}
		_, err := a.Get(ctx, int64(peer)*ElemGetElems+int64(i))
		return err
	}, nil
}
