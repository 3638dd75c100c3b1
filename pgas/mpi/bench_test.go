//go:build mpi || mpich

package mpi_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	"github.com/pgasmr/pgasmr/pgas/mpi"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Benchmarks of the MPI transport with 2 ranks. A benchmark starts mpirun
// once per b.N; rank 0 times the b.N operations between two barriers and
// prints the time, which is reported as ns/op and MB/s (start-up is not in
// them). mpirun's start-up makes the framework's choice of b.N too small
// for the small sizes: run them with a fixed count, -benchtime=20000x.
// Beside each one runs the raw MPI baseline: the same MPI calls in a C
// loop (MPI_Put + MPI_Win_flush_local, MPI_Get + MPI_Win_flush, blocking
// MPI_Allgatherv). Each runs over shared memory (path=shm, OpenMPI's
// default between ranks of a host) and, under OpenMPI, over its network
// path (path=tcp: btl tcp, osc pt2pt, calls serialised; tcpEnv).

const (
	benchEPPut         = iota // transport Endpoint.Put
	benchEPGet                // transport Endpoint.Get
	benchRawPut               // MPI_Put loop in C
	benchRawGet               // MPI_Get loop in C
	benchPgasPut              // pgas Rank.PutBytes
	benchPgasGet              // pgas Rank.GetBytes
	benchAllgatherV           // coll.AllgatherV, native
	benchAllgatherVNo         // coll.AllgatherV, NoNative
	benchEPAllgatherv         // Endpoint.Allgatherv (MPI_Iallgatherv)
	benchRawAllgatherv        // MPI_Allgatherv loop in C
)

var benchSizes = []int{8, 64 << 10, 4 << 20}

func BenchmarkPut(b *testing.B) {
	for _, size := range benchSizes {
		for _, v := range []struct {
			name string
			kind int
		}{{"mpi-endpoint", benchEPPut}, {"mpi-pgas", benchPgasPut}, {"raw-mpi", benchRawPut}} {
			for _, p := range benchPaths() {
				b.Run(fmt.Sprintf("ranks=2/size=%d/path=%s/%s", size, p.name, v.name), func(b *testing.B) {
					runBench(b, v.kind, size, int64(size), p.env...)
				})
			}
		}
	}
}

func BenchmarkGet(b *testing.B) {
	for _, size := range benchSizes {
		for _, v := range []struct {
			name string
			kind int
		}{{"mpi-endpoint", benchEPGet}, {"mpi-pgas", benchPgasGet}, {"raw-mpi", benchRawGet}} {
			for _, p := range benchPaths() {
				b.Run(fmt.Sprintf("ranks=2/size=%d/path=%s/%s", size, p.name, v.name), func(b *testing.B) {
					runBench(b, v.kind, size, int64(size), p.env...)
				})
			}
		}
	}
}

// BenchmarkAllgatherV: size bytes per rank, private to private, on 2
// ranks. MB/s counts the bytes one rank ends up with (2*size).
func BenchmarkAllgatherV(b *testing.B) {
	for _, size := range benchSizes {
		for _, v := range []struct {
			name string
			kind int
		}{
			{"coll-native", benchAllgatherV}, {"coll-nonative", benchAllgatherVNo},
			{"mpi-endpoint", benchEPAllgatherv}, {"raw-mpi", benchRawAllgatherv},
		} {
			for _, p := range benchPaths() {
				b.Run(fmt.Sprintf("ranks=2/size=%d/path=%s/%s", size, p.name, v.name), func(b *testing.B) {
					runBench(b, v.kind, size, 2*int64(size), p.env...)
				})
			}
		}
	}
}

// benchPath is a way between the ranks: its name and environment.
type benchPath struct {
	name string
	env  []string
}

// benchPaths are shared memory, and under OpenMPI its network path.
func benchPaths() []benchPath {
	paths := []benchPath{{"shm", nil}}
	if mpi.Flavour == "OpenMPI" {
		paths = append(paths, benchPath{"tcp", append(tcpEnv(), mpi.EnvSerialize+"=1")})
	}
	return paths
}

func runBench(b *testing.B, kind, size int, bytesPerOp int64, env ...string) {
	res := launch(b, 2, "bench", fmt.Sprintf("%d,%d,%d", kind, size, b.N), env...)
	if res.Err != nil {
		b.Fatalf("%v\nstderr:\n%s", res.Err, res.Stderr)
	}
	ranktest.Report(b, ranktest.Result(b, res.Stdout), bytesPerOp)
}

// benchBody runs in the ranks of runBench: MPITEST_ARG is "kind,size,n".
// Puts and gets go from rank 0 to rank 1's segment.
func benchBody(ctx context.Context, tr *mpi.Transport, arg string) error {
	args := ranktest.ArgInts(arg)
	kind, size, n := int(args[0]), int(args[1]), int(args[2])
	cfg := config(tr)
	cfg.FragmentBytes = 4 << 20
	cfg.SegmentBytes = 16 << 20
	if kind < benchPgasPut || kind >= benchEPAllgatherv {
		return benchEndpoint(ctx, tr, cfg, kind, size, n)
	}
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		switch kind {
		case benchAllgatherV:
			return ranktest.TimeOps(ctx, r, ranktest.AllgatherV(ctx, r, size), n, false)
		case benchAllgatherVNo:
			return ranktest.TimeOps(ctx, r, ranktest.AllgatherV(ctx, r, size, coll.NoNative()), n, false)
		}
		op, err := ranktest.OneSided(ctx, r, size, kind == benchPgasGet)
		if err != nil {
			return err
		}
		return ranktest.TimeOps(ctx, r, op, n, false)
	})
}

// benchEndpoint runs the endpoint and raw benchmarks on the transport
// without the pgas runtime.
func benchEndpoint(ctx context.Context, tr *mpi.Transport, cfg pgas.Config, kind, size, n int) (err error) {
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
	me := ep.Rank()
	buf := make([]byte, size)
	all := make([]byte, size*ep.Size())
	counts, displs := make([]int, ep.Size()), make([]int, ep.Size())
	for q := range counts {
		counts[q], displs[q] = size, q*size
	}
	// loop runs n operations; raw loops run them in C.
	var loop func(n int) error
	each := func(op func() error) func(int) error {
		return func(n int) error {
			for range n {
				if err := op(); err != nil {
					return err
				}
			}
			return nil
		}
	}
	switch {
	case kind == benchEPPut && me == 0:
		loop = each(func() error { return ep.Put(ctx, 1, 0, buf) })
	case kind == benchEPGet && me == 0:
		loop = each(func() error { return ep.Get(ctx, 1, 0, buf) })
	case kind == benchRawPut && me == 0:
		loop = func(n int) error { return mpi.RawPutLoop(ep, 1, buf, n) }
	case kind == benchRawGet && me == 0:
		loop = func(n int) error { return mpi.RawGetLoop(ep, 1, buf, n) }
	case kind == benchEPAllgatherv:
		nat := transport.Extend(ep).Collectives()
		if nat == nil {
			return errors.New("endpoint has no native collectives")
		}
		loop = each(func() error { return nat.Allgatherv(ctx, buf, all, counts, displs) })
	case kind == benchRawAllgatherv:
		loop = func(n int) error { return mpi.RawAllgathervLoop(ep, buf, all, counts, displs, n) }
	}
	return ranktest.TimeEndpoint(ctx, ep, loop, n, true)
}
