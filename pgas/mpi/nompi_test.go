//go:build !mpi && !mpich

package mpi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/pgas/mpi"
)

// TestNotBuilt: without a launcher FromEnv says so quietly; under one, a
// binary built without MPI says how to rebuild.
func TestNotBuilt(t *testing.T) {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"} {
		t.Setenv(v, "")
	}
	if tr, ok, err := mpi.FromEnv(); tr != nil || ok || err != nil {
		t.Fatalf("FromEnv without a launcher = %v, %v, %v; want nil, false, nil", tr, ok, err)
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	tr, ok, err := mpi.FromEnv()
	if tr != nil || !ok || !errors.Is(err, mpi.ErrNotBuilt) || !strings.Contains(err.Error(), "-tags mpi") {
		t.Fatalf("FromEnv under mpirun = %v, %v, %v; want ok and ErrNotBuilt", tr, ok, err)
	}
}

func TestOptionsFromEnv(t *testing.T) {
	t.Setenv(mpi.EnvNative, "0")
	t.Setenv(mpi.EnvChunkBytes, "4096")
	t.Setenv(mpi.EnvProgress, "0")
	t.Setenv(mpi.EnvSerialize, "1")
	o, err := mpi.OptionsFromEnv()
	if err != nil || !o.NoNative || o.ChunkBytes != 4096 || o.Progress >= 0 || !o.Serialize {
		t.Errorf("OptionsFromEnv = %+v, %v", o, err)
	}
	t.Setenv(mpi.EnvNative, "maybe")
	t.Setenv(mpi.EnvChunkBytes, "-1")
	t.Setenv(mpi.EnvProgress, "soon")
	_, err = mpi.OptionsFromEnv()
	for _, w := range []string{mpi.EnvNative, mpi.EnvChunkBytes, mpi.EnvProgress} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("OptionsFromEnv = %v; want it to name %s", err, w)
		}
	}
}
