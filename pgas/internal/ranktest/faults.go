package ranktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
)

// The fault bodies of the harnesses whose launcher ends the job when a
// rank fails (pgas/mpi under mpirun, pgas/shmem under oshrun): each runs
// one job of cfg in which one rank fails in its own way while the others
// wait, and prints when it did so that WantAbort can time the launcher.

// Fail: rank bad returns an error ("boom") while the others wait in a
// barrier; it prints "FAILAT <unix ns>" first.
func Fail(ctx context.Context, cfg pgas.Config, bad int) error {
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == bad {
			time.Sleep(100 * time.Millisecond)
			fmt.Printf("FAILAT %d\n", time.Now().UnixNano())
			return errors.New("boom")
		}
		return r.Barrier(ctx)
	})
}

// KillMode is what the other ranks do when the victim of Kill dies.
type KillMode int

const (
	KillInBarrier    KillMode = iota // wait in a barrier
	KillInGets                       // get from the victim's segment, in a loop
	KillInAllgatherV                 // run native AllgatherVs with it, in a loop
)

// Kill: rank victim kills itself with SIGKILL 200 ms after a barrier,
// printing "KILLAT <unix ns>" first, while the others do what mode says.
func Kill(ctx context.Context, cfg pgas.Config, victim int, mode KillMode) error {
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
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
		switch mode {
		case KillInGets:
			for {
				if _, err := a.Get(ctx, int64(victim)); err != nil {
					return err
				}
			}
		case KillInAllgatherV:
			if r.Native() == nil {
				return errors.New("no native collectives")
			}
			op := AllgatherV(ctx, r, 1<<10)
			for {
				if err := op(); err != nil {
					return err
				}
			}
		}
		return r.Barrier(ctx)
	})
}

// Panic: rank bad dereferences a nil pointer. Go's panic, not a library's
// signal handler, must see it: pgas.Run recovers it and the transport
// reports it (with this file in the stack) and ends the job.
func Panic(ctx context.Context, cfg pgas.Config, bad int) error {
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == bad {
			var p *pgas.Rank
			return p.Barrier(ctx)
		}
		return r.Barrier(ctx)
	})
}

// Timeout: rank absent never reaches the barrier (or, with gather, the
// native AllgatherV) that the others wait in for cfg.SyncTimeout. With
// gather the call check is off (Config.NoCheck), or the others would wait
// in its barrier instead of in the native call.
func Timeout(ctx context.Context, cfg pgas.Config, absent int, gather bool) error {
	cfg.NoCheck = cfg.NoCheck || gather
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == absent {
			<-ctx.Done()
			return ctx.Err()
		}
		if gather {
			return AllgatherV(ctx, r, 64)()
		}
		return r.Barrier(ctx)
	})
}

// WantAbort checks a launch that must have failed (err, its end, its
// stdout) within 5 s of the time a rank printed with prefix (Fail's
// FAILAT, Kill's KILLAT), with no rank ending its body normally, and
// returns how long the launcher took.
func WantAbort(t *testing.T, err error, end time.Time, stdout, prefix string) time.Duration {
	t.Helper()
	if err == nil {
		t.Fatalf("the launch succeeded; want a failure\nstdout:\n%s", stdout)
	}
	at := Lines(stdout, prefix)
	if len(at) != 1 {
		t.Fatalf("no %s line in %q", prefix, stdout)
	}
	ns, _ := strconv.ParseInt(at[0], 10, 64)
	d := end.Sub(time.Unix(0, ns))
	if d > 5*time.Second {
		t.Errorf("the launcher returned %v after the failure; want at most 5 s", d)
	}
	if ok := Lines(stdout, "BODYOK "); len(ok) > 0 {
		t.Errorf("ranks %v ended their body normally", ok)
	}
	return d
}
