package mpi

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Launcher environment: a process started by an MPI launcher has at least
// one of these variables set (to a non-empty value). OpenMPI's mpirun sets
// OMPI_COMM_WORLD_SIZE; MPICH's Hydra (mpiexec) sets PMI_SIZE; Slurm's
// srun --mpi=pmix and PMIx launchers set PMIX_RANK.
var launcherVars = []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}

// Environment variables that FromEnv reads into Options.
const (
	// EnvNative set to 0 (or false) makes endpoints offer no native
	// collectives (Options.NoNative).
	EnvNative = "PGASMR_MPI_NATIVE"
	// EnvChunkBytes sets Options.ChunkBytes.
	EnvChunkBytes = "PGASMR_MPI_CHUNK_BYTES"
	// EnvProgress sets Options.Progress (a Go duration; 0 turns the
	// progress goroutine off).
	EnvProgress = "PGASMR_MPI_PROGRESS"
	// EnvSerialize set to 1 (or true) sets Options.Serialize.
	EnvSerialize = "PGASMR_MPI_SERIALIZE"
)

// Defaults of Options.
const (
	// DefaultChunkBytes is the largest transfer one MPI call carries:
	// MPI counts are C ints, so larger puts, gets and collectives are
	// split into chunks of this size.
	DefaultChunkBytes = 1 << 30
	// DefaultProgress is how often the progress goroutine enters MPI.
	DefaultProgress = time.Millisecond
)

// ErrNotBuilt is returned by FromEnv and Init when pgasmr was compiled
// without an MPI build tag.
var ErrNotBuilt = errors.New("mpi: pgasmr was built without MPI: rebuild with -tags mpi (OpenMPI, pkg-config ompi) or -tags mpich (MPICH, pkg-config mpich)")

// Launched reports whether an MPI launcher (mpirun, mpiexec, srun
// --mpi=pmix) started this process, judging by its environment. It does
// not initialise MPI.
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
	// NoNative hides the native collectives: endpoints' Collectives
	// returns nil, so package coll uses its own algorithms over one-sided
	// operations. For tests and comparisons.
	NoNative bool
	// ChunkBytes is the largest transfer a single MPI call carries; larger
	// ones are split. Zero means DefaultChunkBytes; at most 1<<30.
	ChunkBytes int64
	// Progress is how often a goroutine enters MPI (MPI_Iprobe) so that
	// passive-target operations of other ranks progress while this rank
	// computes, for MPI libraries whose one-sided operations need the
	// target's help (over TCP, for instance). Zero means DefaultProgress
	// if the ranks span several nodes, and no goroutine if they all share
	// one (their windows are then shared memory, which needs no progress,
	// and the goroutine's wake-ups slowed 4 MiB collectives by a third); a
	// negative value turns the goroutine off.
	Progress time.Duration
	// Serialize makes the transport initialise MPI for
	// MPI_THREAD_SERIALIZED and serialise its MPI calls with a mutex, as
	// it does when the library provides less than MPI_THREAD_MULTIPLE.
	// For tests of that mode, and for components that refuse
	// MPI_THREAD_MULTIPLE (OpenMPI 4's osc pt2pt: one-sided operations
	// over TCP, mpirun --mca btl tcp,self --mca osc pt2pt). It has no
	// effect on the thread level if MPI was initialised before Init.
	Serialize bool
}

// Validate reports every problem with o, joined into one error, or nil.
func (o Options) Validate() error {
	var errs []error
	if o.ChunkBytes < 0 || o.ChunkBytes > DefaultChunkBytes {
		errs = append(errs, fmt.Errorf("mpi: ChunkBytes = %d, want 0 to %d", o.ChunkBytes, DefaultChunkBytes))
	}
	return errors.Join(errs...)
}

func (o Options) withDefaults() Options {
	if o.ChunkBytes == 0 {
		o.ChunkBytes = DefaultChunkBytes
	}
	return o
}

// OptionsFromEnv reads Options from EnvNative, EnvChunkBytes, EnvProgress
// and EnvSerialize; unset variables leave the defaults.
func OptionsFromEnv() (Options, error) {
	var o Options
	var errs []error
	if v := os.Getenv(EnvNative); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("mpi: %s=%q: want a boolean", EnvNative, v))
		}
		o.NoNative = !b
	}
	if v := os.Getenv(EnvSerialize); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("mpi: %s=%q: want a boolean", EnvSerialize, v))
		}
		o.Serialize = b
	}
	if v := os.Getenv(EnvChunkBytes); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("mpi: %s=%q: want a positive number of bytes", EnvChunkBytes, v))
		}
		o.ChunkBytes = n
	}
	if v := os.Getenv(EnvProgress); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("mpi: %s=%q: want a duration", EnvProgress, v))
		}
		if d == 0 {
			d = -1
		}
		o.Progress = d
	}
	if err := errors.Join(errs...); err != nil {
		return o, err
	}
	return o, o.Validate()
}

// FromEnv initialises MPI with the Options of the environment
// (OptionsFromEnv) if an MPI launcher started this process, and returns
// the transport. ok is false, with no error, when no launcher did (see
// Launched). Built without an MPI tag, it returns ok and ErrNotBuilt under
// a launcher.
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
