package launch

import (
	"errors"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/mpi"
	"github.com/pgasmr/pgasmr/pgas/shm"
)

// noMPI clears the variables by which an MPI launcher is recognised.
func noMPI(t *testing.T) {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"} {
		t.Setenv(v, "")
	}
}

// TestNotLaunched: without a launcher's environment the config is kept.
// (The launched case is tested by examples/embed and cmd/mrrun, which
// start real rank processes.)
func TestNotLaunched(t *testing.T) {
	t.Setenv(shm.EnvSegment, "")
	noMPI(t)
	cfg := pgas.Config{Ranks: 3, SegmentBytes: 1 << 20}
	got, err := FromEnv(cfg)
	if err != nil || got != cfg {
		t.Fatalf("FromEnv = %+v, %v; want %+v unchanged", got, err, cfg)
	}
	if kind, err := Launched(); kind != "" || err != nil {
		t.Fatalf("Launched = %q, %v; want \"\"", kind, err)
	}
}

// TestBadEnvironment: a half-set environment is an error, not a silent
// in-process run.
func TestBadEnvironment(t *testing.T) {
	t.Setenv(shm.EnvSegment, "/dev/shm/pgasmr-shm-does-not-exist")
	t.Setenv(shm.EnvRank, "0")
	t.Setenv(shm.EnvSize, "2")
	t.Setenv(shm.EnvJob, "x")
	t.Setenv(shm.EnvSegmentBytes, "1048576")
	if _, err := FromEnv(pgas.Config{}); err == nil {
		t.Fatal("FromEnv with a missing segment file succeeded")
	}
}

// TestMPIWithoutTag: under an MPI launcher, a program built without MPI
// fails with an error that says how to rebuild, not a silent in-process
// run. (With the tag, pgas/mpi's tests run real MPI jobs.)
func TestMPIWithoutTag(t *testing.T) {
	if mpi.Built {
		t.Skip("built with MPI")
	}
	t.Setenv(shm.EnvSegment, "")
	noMPI(t)
	t.Setenv("PMI_SIZE", "2")
	if _, err := FromEnv(pgas.Config{Ranks: 3}); !errors.Is(err, mpi.ErrNotBuilt) {
		t.Errorf("FromEnv = %v; want mpi.ErrNotBuilt", err)
	}
	if kind, err := Launched(); kind != "mpi" || !errors.Is(err, mpi.ErrNotBuilt) {
		t.Errorf("Launched = %q, %v; want \"mpi\" and mpi.ErrNotBuilt", kind, err)
	}
}

// TestCacheFromEnv: EnvCache sets the job's cache, launched or not; a
// bad value is an error naming the variable.
func TestCacheFromEnv(t *testing.T) {
	t.Setenv(shm.EnvSegment, "")
	noMPI(t)
	t.Setenv(EnvCache, "lines=8,line=64")
	got, err := FromEnv(pgas.Config{Ranks: 2})
	if want := (pgas.CacheConfig{Lines: 8, LineBytes: 64, VictimLines: pgas.DefaultVictimLines}); err != nil || got.Cache != want {
		t.Fatalf("FromEnv with %s=lines=8,line=64: %+v, %v; want cache %+v", EnvCache, got.Cache, err, want)
	}
	t.Setenv(EnvCache, "off")
	if got, err := FromEnv(pgas.Config{Ranks: 2, Cache: pgas.CacheConfig{Lines: 4}}); err != nil || got.Cache.On() {
		t.Fatalf("FromEnv with %s=off: %+v, %v; want the cache off", EnvCache, got.Cache, err)
	}
	t.Setenv(EnvCache, "lines=4,line=12")
	if _, err := FromEnv(pgas.Config{Ranks: 2}); err == nil || !strings.Contains(err.Error(), EnvCache) {
		t.Fatalf("FromEnv with a bad %s: %v; want an error naming it", EnvCache, err)
	}
}
