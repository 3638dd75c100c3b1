//go:build mpi || mpich

package mpi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	"github.com/pgasmr/pgasmr/pgas/mpi"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// The SPMD bodies the test ranks run. Each reports what the test checks
// on stdout, in lines with a fixed prefix, or fails (and so aborts the MPI
// job).
var bodies = map[string]ranktest.Body[*mpi.Transport]{
	"suites":    suitesBody,
	"fail":      failBody,
	"kill":      killBody,
	"timeout":   timeoutBody,
	"bench":     benchBody,
	"launch":    launchBody,
	"panic":     panicBody,
	"wrapped":   wrappedBody,
	"interrupt": interruptBody,
	"shmdir":    shmDirBody,
}

// launchBody checks launch.FromEnv under the launcher
// (ranktest.LaunchCount).
func launchBody(ctx context.Context, tr *mpi.Transport, _ string) error {
	return ranktest.LaunchCount(ctx, tr, tr.Size())
}

// panicBody: rank arg dereferences a nil pointer (ranktest.Panic).
func panicBody(ctx context.Context, tr *mpi.Transport, arg string) error {
	return ranktest.Panic(ctx, config(tr), int(ranktest.ArgInts(arg)[0]))
}

// suitesBody runs the transport's conformance suite and the collectives'
// as two jobs one after the other, and reports whether the endpoints
// offered native collectives and how many calls they served.
func suitesBody(ctx context.Context, tr *mpi.Transport, arg string) error {
	cfg := config(tr)
	cc, err := pgas.ParseCacheConfig(arg) // arg: the cache setting, "" for none
	if err != nil {
		return err
	}
	cfg.Cache = cc
	start := time.Now()
	if err := ranktest.Conformance(ctx, cfg); err != nil {
		return err
	}
	conf := time.Since(start)
	native, err := ranktest.Collectives(ctx, cfg)
	if err != nil {
		return err
	}
	if tr.Rank() == 0 {
		fmt.Printf("SUITES native=%v calls=%d chunked=%d level=%s serialized=%v progress=%v pgastest=%v colltest=%v\n",
			native, tr.NativeCalls(), mpi.LargeCalls(tr), tr.ThreadLevel(), tr.Serialized(), max(0, tr.Options().Progress), conf.Round(time.Millisecond), (time.Since(start) - conf).Round(time.Millisecond))
	}
	return nil
}

// failBody: rank arg returns an error while the others wait in a barrier
// (ranktest.Fail).
func failBody(ctx context.Context, tr *mpi.Transport, arg string) error {
	return ranktest.Fail(ctx, config(tr), int(ranktest.ArgInts(arg)[0]))
}

// killBody: rank arg[0] kills itself with SIGKILL once the others wait:
// in a barrier (arg[1] == 0), in a loop of gets from the killed rank
// (arg[1] == 1), or in a loop of native AllgatherVs (arg[1] == 2)
// (ranktest.Kill).
func killBody(ctx context.Context, tr *mpi.Transport, arg string) error {
	args := ranktest.ArgInts(arg)
	return ranktest.Kill(ctx, config(tr), int(args[0]), ranktest.KillMode(args[1]))
}

// timeoutBody: rank arg[0] never reaches the barrier (arg[1] == 0) or the
// native AllgatherV (arg[1] == 1) the others wait in for SyncTimeout
// (300 ms).
func timeoutBody(ctx context.Context, tr *mpi.Transport, arg string) error {
	args := ranktest.ArgInts(arg)
	cfg := config(tr)
	cfg.SyncTimeout = 300 * time.Millisecond
	return ranktest.Timeout(ctx, cfg, int(args[0]), args[1] == 1)
}

// wrappedBody runs a private AllgatherV with and without native
// collectives on the MPI transport behind a stack of every wrapper of
// package wrap, which must pass MPI's collectives on. Every rank reports
// whether it had them, whether both results were right, and how many
// native calls the counting wrapper saw and MPI served.
func wrappedBody(ctx context.Context, tr *mpi.Transport, _ string) error {
	c := wrap.NewCounting(wrap.NewLatency(wrap.NewFaulty(tr, 0, -1), 0))
	cfg := config(tr)
	cfg.Transport = c
	before := tr.NativeCalls()
	native, same := false, true
	err := pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		native = r.Native() != nil
		n := r.N()
		counts := make([]int, n)
		want := make([]int64, 0, 2*n)
		for q := range n {
			counts[q] = 2
			want = append(want, int64(100*q), int64(100*q+1))
		}
		mine := []int64{int64(100 * r.ID()), int64(100*r.ID() + 1)}
		for _, opts := range [][]coll.Option{nil, {coll.NoNative()}} {
			all := make([]int64, 2*n)
			if err := coll.AllgatherV(ctx, r.World(), coll.Private(all), coll.Private(mine), counts, nil, nil, opts...); err != nil {
				return err
			}
			same = same && slices.Equal(all, want)
		}
		return nil
	})
	if err != nil {
		return err
	}
	cs := c.Counts(tr.Rank())
	counted := cs.Ops[wrap.OpBroadcast] + cs.Ops[wrap.OpAllgatherv] + cs.Ops[wrap.OpAlltoallv]
	fmt.Printf("WRAPPED rank=%d name=%s native=%v right=%v counted=%d calls=%d\n",
		tr.Rank(), c.Name(), native, same, counted, tr.NativeCalls()-before)
	return nil
}

// sigCause is the cause of a job cancelled by a signal, as mrrun gives
// it: an error with a Signal method.
type sigCause struct{}

func (sigCause) Error() string     { return "interrupted by SIGTERM" }
func (sigCause) Signal() os.Signal { return syscall.SIGTERM }

// interruptBody: once every rank is in the job, every rank cancels its
// context with a cause naming a signal (arg "signal") and waits in a
// barrier, as ranks that all got a signal do; or rank 1 alone cancels it
// without a cause (arg "plain"), a failure that aborts the job. An
// interrupted rank prints "INTERRUPTED <rank> <Finalize's error>" and
// exits with status 130 on its own.
func interruptBody(ctx context.Context, tr *mpi.Transport, arg string) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	err := pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		switch {
		case arg == "signal":
			cancel(sigCause{})
		case r.ID() == 1:
			cancel(nil)
		}
		return r.Barrier(ctx)
	})
	if !errors.Is(err, context.Canceled) {
		return fmt.Errorf("pgas.Run returned %v; want the cancellation", err)
	}
	ferr := tr.Finalize()
	fmt.Printf("INTERRUPTED %d %v\n", tr.Rank(), ferr)
	os.Stdout.Sync()
	os.Exit(130)
	return nil
}

// shmDirBody reports, once every rank has initialised MPI, where OpenMPI's
// shared-memory files go, how many vader segments are there, and whether
// mpirun's session directory is marked as a pgasmr job's:
// "SHMDIR <rank> <directory> <segments> <marked>".
func shmDirBody(ctx context.Context, tr *mpi.Transport, _ string) error {
	return pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		dir := os.Getenv("OMPI_MCA_btl_vader_backing_directory")
		segs, _ := filepath.Glob(filepath.Join(dir, "vader_segment.*"))
		_, err := os.Stat(filepath.Join(os.Getenv("OMPI_MCA_orte_jobfam_session_dir"), "pgasmr-ranks.lock"))
		fmt.Printf("SHMDIR %d %s %d %v\n", r.ID(), dir, len(segs), err == nil)
		return r.Barrier(ctx)
	})
}
