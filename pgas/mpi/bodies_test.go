//go:build mpi || mpich

package mpi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	pgaslaunch "github.com/pgasmr/pgasmr/pgas/launch"
	"github.com/pgasmr/pgasmr/pgas/mpi"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// The SPMD bodies the test ranks run. Each reports what the test checks
// on stdout, in lines with a fixed prefix, or fails (and so aborts the MPI
// job).
var bodies = map[string]ranktest.Body[*mpi.Transport]{
	"suites":  suitesBody,
	"fail":    failBody,
	"kill":    killBody,
	"timeout": timeoutBody,
	"bench":   benchBody,
	"launch":  launchBody,
	"panic":   panicBody,
	"wrapped": wrappedBody,
}

// launchBody gets its configuration from launch.FromEnv, as any program
// does, and counts the ranks with FetchAdd on rank 0.
func launchBody(ctx context.Context, tr *mpi.Transport, _ string) error {
	cfg, err := pgaslaunch.FromEnv(pgas.Config{Ranks: 1})
	if err != nil {
		return err
	}
	kind, err := pgaslaunch.Launched()
	if err != nil {
		return err
	}
	if cfg.Transport != pgas.Transport(tr) || cfg.Ranks != tr.Size() {
		return fmt.Errorf("launch.FromEnv = %+v; want the MPI transport and %d ranks", cfg, tr.Size())
	}
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int64](ctx, r, 1, 1)
		if err != nil {
			return err
		}
		if _, err := pgas.FetchAdd(ctx, a, 0, 1); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == 0 {
			fmt.Printf("LAUNCH %s %s %d %d\n", kind, r.TransportName(), r.N(), a.Local()[0])
		}
		return nil
	})
}

// panicBody: rank arg dereferences a nil pointer. Go's panic, not the MPI
// library's signal handler, must see it: pgas.Run recovers it and the
// transport reports it and aborts.
func panicBody(ctx context.Context, tr *mpi.Transport, arg string) error {
	bad := int(ranktest.ArgInts(arg)[0])
	return pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == bad {
			var p *pgas.Rank
			return p.Barrier(ctx)
		}
		return r.Barrier(ctx)
	})
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

// failBody: rank arg returns an error while the others wait in a barrier.
func failBody(ctx context.Context, tr *mpi.Transport, arg string) error {
	bad := int(ranktest.ArgInts(arg)[0])
	return pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == bad {
			time.Sleep(100 * time.Millisecond)
			fmt.Printf("FAILAT %d\n", time.Now().UnixNano())
			return errors.New("boom")
		}
		return r.Barrier(ctx)
	})
}

// killBody: rank arg[0] kills itself with SIGKILL once the others wait:
// in a barrier (arg[1] == 0), in a loop of gets from the killed rank
// (arg[1] == 1), or in a loop of native AllgatherVs (arg[1] == 2).
func killBody(ctx context.Context, tr *mpi.Transport, arg string) error {
	args := ranktest.ArgInts(arg)
	victim, gets, gathers := int(args[0]), args[1] == 1, args[1] == 2
	return pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int64](ctx, r, int64(r.N()), pgas.Cyclic)
		if err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == victim {
			time.Sleep(200 * time.Millisecond) // let the others block
			fmt.Printf("KILLAT %d\n", time.Now().UnixNano())
			os.Stdout.Sync()
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		if gets {
			for {
				if _, err := a.Get(ctx, int64(victim)); err != nil {
					return err
				}
			}
		}
		if gathers {
			if r.Native() == nil {
				return errors.New("no native collectives")
			}
			op := ranktest.AllgatherV(ctx, r, 1<<10)
			for {
				if err := op(); err != nil {
					return err
				}
			}
		}
		return r.Barrier(ctx)
	})
}

// timeoutBody: rank arg[0] never reaches the barrier (arg[1] == 0) or the
// native AllgatherV (arg[1] == 1) the others wait in for SyncTimeout
// (300 ms).
func timeoutBody(ctx context.Context, tr *mpi.Transport, arg string) error {
	args := ranktest.ArgInts(arg)
	absent, gather := int(args[0]), args[1] == 1
	cfg := config(tr)
	cfg.SyncTimeout = 300 * time.Millisecond
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == absent {
			<-ctx.Done()
			return ctx.Err()
		}
		if gather {
			return ranktest.AllgatherV(ctx, r, 64)()
		}
		return r.Barrier(ctx)
	})
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
