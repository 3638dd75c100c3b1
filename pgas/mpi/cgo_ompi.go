//go:build mpi && !mpich

package mpi

// The OpenMPI flavour. Each flavour's #cgo directive lives in a file of its
// own, selected by its build tag, so that the build cache never links one
// library's objects into the other (golang/go#73033).

// #cgo pkg-config: ompi
import "C"

const flavour = "OpenMPI"
