package wordcount_test

import (
	"context"
	"errors"
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

// TestFaultsSpilling: the same sweep under a memory budget that makes the
// ranks spill, move their pairs in rounds and build the result in files:
// every job ends with the injected error, and none leaves a file.
func TestFaultsSpilling(t *testing.T) {
	dir := t.TempDir()
	if err := wordcount.Generate(dir, 200_000, 5, 1); err != nil {
		t.Fatal(err)
	}
	inputs := []string{dir}
	run := func(ctx context.Context, r *pgas.Rank) error {
		res, err := wordcount.Run(ctx, r, inputs, wordcount.Options{ChunkBytes: 16 << 10})
		if res != nil {
			if !res.InFiles() {
				err = errors.Join(err, errors.New("the result is in memory under a 64 KiB budget"))
			}
			err = errors.Join(err, res.Close())
		}
		return err
	}
	apptest.FaultSweepConfig(t, pgas.Config{MemoryBytes: 64 << 10, TmpDir: t.TempDir()}, run)
}
