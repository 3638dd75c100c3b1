package spamcount_test

import (
	"context"
	"testing"

	"github.com/pgasmr/pgasmr/apps/internal/apptest"
	"github.com/pgasmr/pgasmr/apps/spamcount"
	"github.com/pgasmr/pgasmr/pgas"
)

// TestFaults: failing rank 1's transport operations in turn ends every job
// with the injected error and leaks nothing (apptest.FaultSweep).
func TestFaults(t *testing.T) {
	dir := t.TempDir()
	if err := spamcount.Generate(dir, 30, 1); err != nil {
		t.Fatal(err)
	}
	inputs := []string{dir}
	run := func(ctx context.Context, r *pgas.Rank) error {
		_, err := spamcount.Run(ctx, r, inputs, spamcount.Options{})
		return err
	}
	apptest.FaultSweep(t, run)
}
