package spamcount_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/apps/spamcount"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// TestFaults fails operations of rank 1 spread over the whole job (at most
// about 40 jobs) and checks that each ends, within 5 s, with the injected
// error, and that no goroutine is left behind.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("fault sweep")
	}
	dir := t.TempDir()
	_ = os.MkdirAll(dir, 0o755)
	if err := spamcount.Generate(dir, 30, 1); err != nil {
		t.Fatal(err)
	}
	inputs := []string{dir}
	run := func(ctx context.Context, r *pgas.Rank) error {
		_, err := spamcount.Run(ctx, r, inputs, spamcount.Options{})
		return err
	}
	base := runtime.NumGoroutine()
	clean := wrap.NewFaulty(inproc.New(), 1, -1)
	if err := pgas.Run(context.Background(), pgas.Config{Ranks: 2, Transport: clean}, run); err != nil {
		t.Fatalf("clean run: %v", err)
	}
	ops := clean.Ops(1)
	if ops == 0 {
		t.Fatal("rank 1 issued no operations")
	}
	step := max(1, ops/40)
	injected := 0
	for op := int64(0); op < ops; op += step {
		f := wrap.NewFaulty(inproc.New(), 1, op)
		t0 := time.Now()
		err := pgas.Run(context.Background(), pgas.Config{Ranks: 2, Transport: f, SyncTimeout: 10 * time.Second}, run)
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("op %d of %d: the job took %v to fail", op, ops, d)
		}
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
