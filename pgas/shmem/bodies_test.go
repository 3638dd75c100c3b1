//go:build shmem

package shmem_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	pgaslaunch "github.com/pgasmr/pgasmr/pgas/launch"
	"github.com/pgasmr/pgasmr/pgas/shmem"
)

// The SPMD bodies the test PEs run. Each reports what the test checks on
// stdout, in lines with a fixed prefix, or fails (and so ends every PE).
var bodies = map[string]ranktest.Body[*shmem.Transport]{
	"suites":  suitesBody,
	"fail":    failBody,
	"kill":    killBody,
	"timeout": timeoutBody,
	"launch":  launchBody,
	"panic":   panicBody,
	"jobs":    jobsBody,
	"bench":   benchBody,
}

// suitesBody runs the transport's conformance suite and the collectives'
// as two jobs one after the other.
func suitesBody(ctx context.Context, tr *shmem.Transport, arg string) error {
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
		fmt.Printf("SUITES native=%v level=%s pgastest=%v colltest=%v\n",
			native, tr.ThreadLevel(), conf.Round(time.Millisecond), (time.Since(start) - conf).Round(time.Millisecond))
	}
	return nil
}

// jobsBody runs jobs of different segment sizes one after another, each
// finding its segment zeroed and its ranks' writes.
func jobsBody(ctx context.Context, tr *shmem.Transport, _ string) error {
	for _, seg := range []int64{128 << 10, 8 << 20, 96 << 10, 3 << 20} {
		cfg := config(tr)
		cfg.SegmentBytes = seg
		err := pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
			a, err := pgas.AllAllocArray[int64](ctx, r, int64(r.N()), 1)
			if err != nil {
				return err
			}
			if v := a.Local()[0]; v != 0 {
				return fmt.Errorf("segment %d: a fresh array holds %d", seg, v)
			}
			if err := r.Barrier(ctx); err != nil { // everyone has looked
				return err
			}
			if err := a.Put(ctx, int64((r.ID()+1)%r.N()), int64(seg+int64(r.ID()))); err != nil {
				return err
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			from := (r.ID() + r.N() - 1) % r.N()
			if v := a.Local()[0]; v != seg+int64(from) {
				return fmt.Errorf("segment %d: rank %d holds %d, want %d", seg, r.ID(), v, seg+int64(from))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if tr.Rank() == 0 {
		fmt.Println("JOBS ok")
	}
	return nil
}

// launchBody gets its configuration from launch.FromEnv, as any program
// does, and counts the ranks with FetchAdd on rank 0.
func launchBody(ctx context.Context, tr *shmem.Transport, _ string) error {
	cfg, err := pgaslaunch.FromEnv(pgas.Config{Ranks: 1})
	if err != nil {
		return err
	}
	kind, err := pgaslaunch.Launched()
	if err != nil {
		return err
	}
	if cfg.Transport != pgas.Transport(tr) || cfg.Ranks != tr.Size() {
		return fmt.Errorf("launch.FromEnv = %+v; want the shmem transport and %d ranks", cfg, tr.Size())
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

// panicBody: rank arg dereferences a nil pointer; Go's panic, not a
// library's signal handler, must see it.
func panicBody(ctx context.Context, tr *shmem.Transport, arg string) error {
	bad := int(ranktest.ArgInts(arg)[0])
	return pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == bad {
			var p *pgas.Rank
			return p.Barrier(ctx)
		}
		return r.Barrier(ctx)
	})
}

// failBody: rank arg returns an error while the others wait in a barrier.
func failBody(ctx context.Context, tr *shmem.Transport, arg string) error {
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

// killBody: rank arg[0] kills itself with SIGKILL once the others wait in
// a barrier (arg[1] == 0) or in a loop of gets from the killed rank
// (arg[1] == 1).
func killBody(ctx context.Context, tr *shmem.Transport, arg string) error {
	args := ranktest.ArgInts(arg)
	victim, gets := int(args[0]), args[1] == 1
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
		return r.Barrier(ctx)
	})
}

// timeoutBody: rank arg never reaches the barrier the others wait in for
// SyncTimeout (300 ms).
func timeoutBody(ctx context.Context, tr *shmem.Transport, arg string) error {
	absent := int(ranktest.ArgInts(arg)[0])
	cfg := config(tr)
	cfg.SyncTimeout = 300 * time.Millisecond
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == absent {
			<-ctx.Done()
			return ctx.Err()
		}
		return r.Barrier(ctx)
	})
}
