//go:build shmem

package shmem_test

import (
	"context"
	"fmt"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
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

// launchBody checks launch.FromEnv under the launcher
// (ranktest.LaunchCount).
func launchBody(ctx context.Context, tr *shmem.Transport, _ string) error {
	return ranktest.LaunchCount(ctx, tr, tr.Size())
}

// panicBody: rank arg dereferences a nil pointer (ranktest.Panic).
func panicBody(ctx context.Context, tr *shmem.Transport, arg string) error {
	return ranktest.Panic(ctx, config(tr), int(ranktest.ArgInts(arg)[0]))
}

// failBody: rank arg returns an error while the others wait in a barrier
// (ranktest.Fail).
func failBody(ctx context.Context, tr *shmem.Transport, arg string) error {
	return ranktest.Fail(ctx, config(tr), int(ranktest.ArgInts(arg)[0]))
}

// killBody: rank arg[0] kills itself with SIGKILL once the others wait in
// a barrier (arg[1] == 0) or in a loop of gets from the killed rank
// (arg[1] == 1) (ranktest.Kill).
func killBody(ctx context.Context, tr *shmem.Transport, arg string) error {
	args := ranktest.ArgInts(arg)
	return ranktest.Kill(ctx, config(tr), int(args[0]), ranktest.KillMode(args[1]))
}

// timeoutBody: rank arg never reaches the barrier the others wait in for
// SyncTimeout (300 ms).
func timeoutBody(ctx context.Context, tr *shmem.Transport, arg string) error {
	cfg := config(tr)
	cfg.SyncTimeout = 300 * time.Millisecond
	return ranktest.Timeout(ctx, cfg, int(ranktest.ArgInts(arg)[0]), false)
}
