//go:build mpich

package mpi

// The MPICH flavour (see cgo_ompi.go). With both tags, MPICH wins.

// #cgo pkg-config: mpich
import "C"

const flavour = "MPICH"
