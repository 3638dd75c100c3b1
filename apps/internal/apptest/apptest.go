// Package apptest holds test helpers shared by the applications' tests.
package apptest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// FaultSweep runs job on 2 ranks once cleanly, then fails operations of
// rank 1 spread over the whole job (at most about 40 jobs), and checks that
// each job that reached the fault ends, within 5 s, with the injected
// error, and that no goroutine is left behind.
func FaultSweep(t *testing.T, job func(ctx context.Context, r *pgas.Rank) error) {
	t.Helper()
	FaultSweepConfig(t, pgas.Config{}, job)
}

// FaultSweepConfig is FaultSweep on jobs of cfg (its Ranks and Transport
// are the sweep's); with a TmpDir, it also checks that every job, failed
// or not, leaves nothing there (the files pairs spill to under
// MemoryBytes).
func FaultSweepConfig(t *testing.T, cfg pgas.Config, job func(ctx context.Context, r *pgas.Rank) error) {
	t.Helper()
	if testing.Short() {
		t.Skip("fault sweep")
	}
	cfg.Ranks = 2
	if cfg.SyncTimeout == 0 {
		cfg.SyncTimeout = 10 * time.Second
	}
	checkTmp := func(when string) {
		t.Helper()
		if cfg.TmpDir == "" {
			return
		}
		if left, err := os.ReadDir(cfg.TmpDir); err != nil || len(left) > 0 {
			t.Fatalf("%s: %s holds %d entries (%v)", when, cfg.TmpDir, len(left), err)
		}
	}
	base := runtime.NumGoroutine()
	clean := wrap.NewFaulty(inproc.New(), 1, -1)
	cfg.Transport = clean
	if err := pgas.Run(context.Background(), cfg, job); err != nil {
		t.Fatalf("clean run: %v", err)
	}
	checkTmp("clean run")
	ops := clean.Ops(1)
	if ops == 0 {
		t.Fatal("rank 1 issued no operations")
	}
	step := max(1, ops/40)
	injected := 0
	for op := int64(0); op < ops; op += step {
		f := wrap.NewFaulty(inproc.New(), 1, op)
		t0 := time.Now()
		cfg.Transport = f
		err := pgas.Run(context.Background(), cfg, job)
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("op %d of %d: the job took %v to fail", op, ops, d)
		}
		checkTmp(fmt.Sprintf("op %d of %d", op, ops))
		if !f.Injected() {
			continue // the job took another path and never reached op
		}
		injected++
		if !errors.Is(err, wrap.ErrInjected) {
			t.Fatalf("op %d of %d: err = %v; want the injected failure", op, ops, err)
		}
	}
	if injected == 0 {
		t.Fatal("no fault was injected")
	}
	t.Logf("rank 1 issues %d operations; %d jobs failed at an injected fault", ops, injected)
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		t.Errorf("%d goroutines left after the fault sweep", n-base)
	}
}

// MapMode returns mr.MapElement for element, else mr.MapArray: the map a
// test's loop over both selects.
func MapMode(element bool) mr.MapMode {
	if element {
		return mr.MapElement
	}
	return mr.MapArray
}
