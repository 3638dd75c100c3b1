package shmem

import (
	"errors"
	"fmt"
	"os"
	"strconv"
)

// launcherVars: oshrun (OpenMPI's mpirun) sets OMPI_COMM_WORLD_SIZE in
// every PE; PMIx launchers set PMIX_RANK.
var launcherVars = []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK"}

// EnvHeapBytes sets Options.HeapBytes.
const EnvHeapBytes = "PGASMR_SHMEM_HEAP_BYTES"

// DefaultHeapBytes is the symmetric heap asked for when neither
// Options.HeapBytes nor SHMEM_SYMMETRIC_SIZE says: room for segments of up
// to about 1 GiB. OSHMEM maps it lazily, so pages cost memory only once
// written.
const DefaultHeapBytes = 1<<30 + 64<<20

// ErrNotBuilt is returned by FromEnv and Init when pgasmr was compiled
// without the shmem build tag.
var ErrNotBuilt = errors.New("shmem: pgasmr was built without OpenSHMEM: rebuild with -tags shmem (OpenMPI's OSHMEM)")

// Launched reports whether a launcher (oshrun) started this process as a
// PE, judging by its environment. It does not initialise OpenSHMEM.
func Launched() bool {
	for _, v := range launcherVars {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// Options tune the transport. The zero value is ready to use.
type Options struct {
	// HeapBytes is the size of the symmetric heap (SHMEM_SYMMETRIC_SIZE),
	// from which every job's segment is allocated; zero means
	// DefaultHeapBytes. It has no effect when SHMEM_SYMMETRIC_SIZE is set
	// in the environment, which then wins.
	HeapBytes int64
}

// Validate reports what is wrong with o, or nil.
func (o Options) Validate() error {
	if o.HeapBytes < 0 {
		return fmt.Errorf("shmem: HeapBytes = %d, want at least 0", o.HeapBytes)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.HeapBytes == 0 {
		o.HeapBytes = DefaultHeapBytes
	}
	return o
}

// OptionsFromEnv reads Options from EnvHeapBytes.
func OptionsFromEnv() (Options, error) {
	var o Options
	if v := os.Getenv(EnvHeapBytes); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return o, fmt.Errorf("shmem: %s=%q: want a positive number of bytes", EnvHeapBytes, v)
		}
		o.HeapBytes = n
	}
	return o, o.Validate()
}

// FromEnv initialises OpenSHMEM with the Options of the environment if a
// launcher started this process, and returns the transport. ok is false,
// with no error, when none did. Built without the tag, it returns ok and
// ErrNotBuilt under a launcher.
func FromEnv() (t *Transport, ok bool, err error) {
	if !Launched() {
		return nil, false, nil
	}
	o, err := OptionsFromEnv()
	if err != nil {
		return nil, true, err
	}
	t, err = Init(o)
	return t, true, err
}
