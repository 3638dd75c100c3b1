package histogram_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgasmr/pgasmr/apps/histogram"
	"github.com/pgasmr/pgasmr/apps/internal/apptest"
	"github.com/pgasmr/pgasmr/pgas"
)

// TestFaults: failing rank 1's transport operations in turn ends every job
// with the injected error and leaks nothing (apptest.FaultSweep).
func TestFaults(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "img.bmp"))
	if err != nil {
		t.Fatal(err)
	}
	if err := histogram.Generate(f, 64, 48, 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	inputs := []string{filepath.Join(dir, "img.bmp")}
	run := func(ctx context.Context, r *pgas.Rank) error {
		o := histogram.DefaultOptions()
		o.ChunkBytes = 1 << 10
		_, err := histogram.Run(ctx, r, inputs, o)
		return err
	}
	apptest.FaultSweep(t, run)
}
