package linreg_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgasmr/pgasmr/apps/internal/apptest"
	"github.com/pgasmr/pgasmr/apps/linreg"
	"github.com/pgasmr/pgasmr/pgas"
)

// TestFaults: failing rank 1's transport operations in turn ends every job
// with the injected error and leaks nothing (apptest.FaultSweep).
func TestFaults(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "pts.int8"))
	if err != nil {
		t.Fatal(err)
	}
	if err := linreg.Generate(f, 20000, "int8", 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	inputs := []string{filepath.Join(dir, "pts.int8")}
	run := func(ctx context.Context, r *pgas.Rank) error {
		_, err := linreg.Run(ctx, r, inputs, linreg.Options{ChunkBytes: 4096})
		return err
	}
	apptest.FaultSweep(t, run)
}
