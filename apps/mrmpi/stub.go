//go:build !mpi || !mrmpi || mpich

package mrmpi

import "context"

// Built reports whether this binary was compiled with MR-MPI (the mpi and
// mrmpi build tags).
const Built = false

// Run returns ErrNotBuilt: this binary was built without MR-MPI.
func Run(ctx context.Context, app string, inputs []string, o Options) (Result, error) {
	return nil, ErrNotBuilt
}

// Finalize returns ErrNotBuilt: this binary was built without MR-MPI.
func Finalize() error { return ErrNotBuilt }
