//go:build linux

package shm_test

import (
	"bytes"
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
	"github.com/pgasmr/pgasmr/pgas/pgastest"
	"github.com/pgasmr/pgasmr/pgas/shm"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// The SPMD bodies the test ranks run. Each reports what the test checks
// on stdout, in lines with a fixed prefix, or fails.

// jobsBody runs every conformance check as its own job, one after another
// in the same processes, with segment sizes that change from job to job;
// before each job it checks that its segment starts zeroed though the job
// before scribbled over its end.
func jobsBody(ctx context.Context, tr *shm.Transport, _ string) error {
	for k, c := range pgastest.Checks() {
		cfg := config(tr)
		cfg.SegmentBytes = tr.SegmentBytes() / int64(1+k%2)
		err := pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
			tail := r.Segment()[len(r.Segment())-4096:]
			if i := slices.IndexFunc(tail, func(b byte) bool { return b != 0 }); i >= 0 {
				return fmt.Errorf("job %d: byte %d of the segment is %#x at the start of the job", k, len(r.Segment())-4096+i, tail[i])
			}
			if err := c.Run(ctx, r); err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			for i := range tail {
				tail[i] = 0xa5
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	fmt.Printf("JOBS %d\n", len(pgastest.Checks()))
	return nil
}

// pidsBody: every rank puts its pid into rank 0's segment; rank 0 checks
// that they are distinct processes, none of them the launcher, and that
// each runs with the rank's environment.
func pidsBody(ctx context.Context, tr *shm.Transport, _ string) error {
	return pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		n := int64(r.N())
		a, err := pgas.AllAllocArray[int64](ctx, r, n, n) // one block, on rank 0
		if err != nil {
			return err
		}
		if err := a.Put(ctx, int64(r.ID()), int64(os.Getpid())); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() != 0 {
			return nil
		}
		pids := slices.Clone(a.Local())
		for q, pid := range pids {
			if pid == int64(os.Getppid()) {
				return fmt.Errorf("rank %d runs in the launcher's process %d", q, pid)
			}
			if i := slices.Index(pids, pid); i != q {
				return fmt.Errorf("ranks %d and %d run in the same process %d", i, q, pid)
			}
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err != nil {
				return err
			}
			want := fmt.Sprintf("%s=%d\x00", shm.EnvRank, q)
			if !bytes.Contains(env, []byte(want)) || !bytes.Contains(env, []byte(shm.EnvJob+"="+tr.JobID()+"\x00")) {
				return fmt.Errorf("process %d of rank %d does not have %s and job %s in its environment", pid, q, want, tr.JobID())
			}
		}
		fmt.Printf("PIDS %v\n", pids)
		return nil
	})
}

// failBody: rank arg returns an error once the others wait in a barrier.
func failBody(ctx context.Context, tr *shm.Transport, arg string) error {
	bad := int(ranktest.ArgInts(arg)[0])
	return pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == bad {
			time.Sleep(50 * time.Millisecond)
			return errors.New("boom")
		}
		err := r.Barrier(ctx)
		report(r.ID(), err, time.Time{})
		return err
	})
}

// busyBody: rank bad fails while the others wait on their context only,
// making no transport call; pgas.Run must cancel it when the job fails.
// A survivor prints "CANCELLED <rank> <ms>" when its context ends.
func busyBody(ctx context.Context, tr *shm.Transport, arg string) error {
	bad := int(ranktest.ArgInts(arg)[0])
	return pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == bad {
			time.Sleep(50 * time.Millisecond)
			return errors.New("boom")
		}
		start := time.Now()
		select {
		case <-ctx.Done():
			fmt.Printf("CANCELLED %d %.1f\n", r.ID(), float64(time.Since(start).Microseconds())/1000)
			return ctx.Err()
		case <-time.After(time.Minute):
			return errors.New("not cancelled within a minute")
		}
	})
}

// report prints what a surviving rank saw: "SAW <rank> <failed rank>
// <ms since the failure>", or "BAD <rank> <error>".
func report(me int, err error, at time.Time) {
	var rf *pgas.RankFailedError
	if !errors.As(err, &rf) {
		fmt.Printf("BAD %d %v\n", me, err)
		return
	}
	ms := -1.0
	if !at.IsZero() {
		ms = float64(time.Since(at).Microseconds()) / 1000
	}
	fmt.Printf("SAW %d %d %.1f\n", me, rf.Rank, ms)
}

// killBody: rank arg[0] kills itself with SIGKILL once the others wait:
// in a barrier (arg[1] == 0) or in a loop of gets from the killed rank
// (arg[1] == 1). It first puts the time into every rank's segment, so
// that the survivors can say how long they took to notice.
func killBody(ctx context.Context, tr *shm.Transport, arg string) error {
	args := ranktest.ArgInts(arg)
	victim, gets := int(args[0]), args[1] == 1
	return pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		at, err := pgas.AllAllocArray[int64](ctx, r, int64(r.N()), pgas.Cyclic)
		if err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == victim {
			time.Sleep(100 * time.Millisecond) // let the others block
			now := time.Now().UnixNano()
			for q := range r.N() {
				if err := at.Put(ctx, int64(q), now); err != nil {
					return err
				}
			}
			if err := r.Fence(ctx); err != nil {
				return err
			}
			fmt.Printf("KILLAT %d\n", now)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		if gets {
			for {
				if _, err = at.Get(ctx, int64(victim)); err != nil {
					break
				}
			}
		} else {
			err = r.Barrier(ctx)
		}
		report(r.ID(), err, time.Unix(0, at.Local()[0]))
		return err
	})
}

// exit0Body: rank arg[0] exits with status 0 while the others wait for it
// in a barrier: in the middle of a job (arg[1] == 0), or between two jobs
// (arg[1] == 1: the others wait in the second job's Open).
func exit0Body(ctx context.Context, tr *shm.Transport, arg string) error {
	args := ranktest.ArgInts(arg)
	quitter, between := int(args[0]), args[1] == 1
	err := pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == quitter && !between {
			time.Sleep(50 * time.Millisecond)
			os.Exit(0)
		}
		if between {
			return nil
		}
		err := r.Barrier(ctx)
		report(r.ID(), err, time.Time{})
		return err
	})
	if err != nil || !between {
		return err
	}
	if tr.Rank() == quitter {
		os.Exit(0)
	}
	err = pgas.Run(ctx, config(tr), func(context.Context, *pgas.Rank) error { return nil })
	report(tr.Rank(), err, time.Time{})
	return err
}

// hangBody: rank 0 waits for its context to end, the others wait for it
// in a barrier.
func hangBody(ctx context.Context, tr *shm.Transport, _ string) error {
	cfg := config(tr)
	cfg.SyncTimeout = -1
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		fmt.Printf("WAITING %d\n", r.ID())
		if r.ID() == 0 {
			<-ctx.Done()
			return ctx.Err()
		}
		err := r.Barrier(ctx)
		fmt.Printf("ENDED %d %v\n", r.ID(), errors.Is(err, context.Canceled))
		return err
	})
}

// timeoutBody: rank arg never reaches a barrier (it polls Fence, the way a
// rank busy with its own work would notice the job's failure at its next
// transport call); the others wait for it for SyncTimeout (300 ms) and
// report the time-out.
func timeoutBody(ctx context.Context, tr *shm.Transport, arg string) error {
	absent := int(ranktest.ArgInts(arg)[0])
	cfg := config(tr)
	cfg.SyncTimeout = 300 * time.Millisecond
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == absent {
			for {
				if err := r.Fence(ctx); err != nil {
					return err
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		start := time.Now()
		err := r.Barrier(ctx)
		fmt.Printf("TIMEOUT %d %v %d %q\n", r.ID(), errors.Is(err, pgas.ErrTimeout), time.Since(start).Milliseconds(), err)
		return err
	})
}

// failedChanBody: rank 1 fails its endpoint; rank 0 waits on its
// endpoint's Failed channel, not in a transport call, and reports the
// error its next call returns.
func failedChanBody(ctx context.Context, tr *shm.Transport, _ string) error {
	eps, err := tr.Open(ctx, transport.Job{ID: tr.JobID(), Ranks: tr.Size(), SegmentBytes: tr.SegmentBytes(), SyncTimeout: time.Minute})
	if err != nil {
		return err
	}
	ep := eps[0]
	defer ep.Close()
	if ep.Rank() == 1 {
		time.Sleep(50 * time.Millisecond)
		ep.Fail(errors.New("boom"))
		return errors.New("boom")
	}
	select {
	case <-transport.Extend(ep).Failed():
	case <-time.After(5 * time.Second):
		return errors.New("Failed did not close within 5 s")
	}
	err = ep.Fence(ctx)
	fmt.Printf("FAILEDCHAN %v\n", err)
	return err
}

// chainBody broadcasts 1 MiB private messages from every rank in turn with
// the default algorithm, which on one node sends them along the chain
// (coll.Chain): the ranks' rings and counters are memory of other
// processes. Every rank checks every element, and rank 0 prints "CHAIN
// <remote atomics>" (the chain's signals; the staged broadcast has none).
func chainBody(ctx context.Context, tr *shm.Transport, _ string) error {
	return pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		const n = 1 << 17 // 1 MiB of float64
		buf := make([]float64, n)
		for call := range 2 * r.N() {
			root := call % r.N()
			if r.ID() == root {
				for i := range buf {
					buf[i] = float64(call*n + i)
				}
			}
			if err := coll.BroadcastInPlace(ctx, r.World(), coll.Private(buf), n, coll.Root(root)); err != nil {
				return err
			}
			for i, v := range buf {
				if v != float64(call*n+i) {
					return fmt.Errorf("call %d (root %d): rank %d element %d = %v", call, root, r.ID(), i, v)
				}
			}
		}
		if r.ID() == 0 {
			fmt.Printf("CHAIN %d\n", r.Stats().Remote[pgas.OpAtomic])
		}
		return nil
	})
}
