//go:build !shmem

package shmem_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/pgas/shmem"
)

// TestNotBuilt: without a launcher FromEnv says so quietly; under one, a
// binary built without OpenSHMEM says how to rebuild.
func TestNotBuilt(t *testing.T) {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK"} {
		t.Setenv(v, "")
	}
	if tr, ok, err := shmem.FromEnv(); tr != nil || ok || err != nil {
		t.Fatalf("FromEnv without a launcher = %v, %v, %v; want nil, false, nil", tr, ok, err)
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	tr, ok, err := shmem.FromEnv()
	if tr != nil || !ok || !errors.Is(err, shmem.ErrNotBuilt) || !strings.Contains(err.Error(), "-tags shmem") {
		t.Fatalf("FromEnv under oshrun = %v, %v, %v; want ok and ErrNotBuilt", tr, ok, err)
	}
}

func TestOptionsFromEnv(t *testing.T) {
	t.Setenv(shmem.EnvHeapBytes, "4096")
	o, err := shmem.OptionsFromEnv()
	if err != nil || o.HeapBytes != 4096 {
		t.Errorf("OptionsFromEnv = %+v, %v", o, err)
	}
	for _, bad := range []string{"-1", "lots"} {
		t.Setenv(shmem.EnvHeapBytes, bad)
		if _, err := shmem.OptionsFromEnv(); err == nil || !strings.Contains(err.Error(), shmem.EnvHeapBytes) {
			t.Errorf("OptionsFromEnv with %q = %v; want an error naming %s", bad, err, shmem.EnvHeapBytes)
		}
	}
}
