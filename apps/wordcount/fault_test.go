package wordcount_test

import (
	"context"
	"testing"

	"github.com/pgasmr/pgasmr/apps/internal/apptest"
	"github.com/pgasmr/pgasmr/apps/wordcount"
	"github.com/pgasmr/pgasmr/pgas"
)

// TestFaults: failing rank 1's transport operations in turn ends every job
// with the injected error and leaks nothing (apptest.FaultSweep).
func TestFaults(t *testing.T) {
	dir := t.TempDir()
	if err := wordcount.Generate(dir, 200_000, 5, 1); err != nil {
		t.Fatal(err)
	}
	inputs := []string{dir}
	run := func(ctx context.Context, r *pgas.Rank) error {
		_, err := wordcount.Run(ctx, r, inputs, wordcount.Options{ChunkBytes: 16 << 10})
		return err
	}
	apptest.FaultSweep(t, run)
}
