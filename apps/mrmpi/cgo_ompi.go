//go:build mpi && mrmpi && !mpich

package mrmpi

// The libraries, in a file of their own as in pgas/mpi (golang/go#73033).
// Debian's libmrmpi-dev is built against OpenMPI; libMapReduceMPI.so
// brings libmpi_cxx and libstdc++ itself.

// #cgo pkg-config: ompi
// #cgo LDFLAGS: -lMapReduceMPI
import "C"
