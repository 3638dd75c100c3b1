package launch

import (
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/shm"
)

// TestNotLaunched: without a launcher's environment the config is kept.
// (The launched case is tested by examples/embed and cmd/mrrun, which
// start real rank processes.)
func TestNotLaunched(t *testing.T) {
	t.Setenv(shm.EnvSegment, "")
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
