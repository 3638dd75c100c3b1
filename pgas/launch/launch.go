// Package launch lets one SPMD program run unchanged in one process and as
// one process per rank: FromEnv looks at the environment a launcher left
// and returns the pgas.Config of the job this process is part of.
//
//	func main() {
//		cfg, err := launch.FromEnv(pgas.Config{Ranks: 4})
//		if err != nil {
//			log.Fatal(err)
//		}
//		err = pgas.Run(ctx, cfg, body)
//		...
//	}
//
// Run directly, the program runs cfg as given (4 in-process ranks); started
// by `mrrun exec --transport shm -np N -- ./prog` (or any shm.Launch), each
// process runs its one rank of N over the shared-memory transport; started
// by an MPI launcher (`mpirun -np N ./prog`, mpiexec, srun --mpi=pmix), each
// runs its rank over the MPI transport, if the program was built with
// -tags mpi or -tags mpich (FromEnv says how to rebuild if it was not);
// started by oshrun and built with -tags shmem, each runs its rank over
// the OpenSHMEM transport.
//
// Settings a user may want to change without rebuilding come from the
// environment too: EnvCache turns on the remote-reference cache
// (pgas.Config.Cache) in any of these cases.
package launch

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/mpi"
	"github.com/pgasmr/pgasmr/pgas/shm"
	"github.com/pgasmr/pgasmr/pgas/shmem"
)

// Launched says which launcher started this process as a rank: "shm",
// "mpi", "shmem" (oshrun, in a program built with -tags shmem), or "" when
// it was not started as one. Under an MPI launcher in a program built
// without MPI or OpenSHMEM it returns "mpi" and mpi.ErrNotBuilt. It only
// reads the environment: it neither maps an shm job nor initialises MPI.
func Launched() (string, error) {
	if os.Getenv(shm.EnvSegment) != "" { // FromEnv checks the rest when it maps the job
		return "shm", nil
	}
	if shmem.Built && shmem.Launched() {
		return "shmem", nil
	}
	if mpi.Launched() {
		if !mpi.Built {
			return "mpi", mpi.ErrNotBuilt
		}
		return "mpi", nil
	}
	return "", nil
}

// FromEnv returns cfg adjusted to the job a launcher started this process
// in: its transport, its number of ranks, and a segment size within what
// the launcher reserved (cfg's, if it fits; an error if it asks for more).
// When no launcher started the process, cfg is returned unchanged.
//
// Under an MPI launcher FromEnv initialises MPI (mpi.FromEnv); the segment
// size is cfg's (pgas.DefaultSegmentBytes if zero), since MPI allocates
// segments per job. The process should call mpi.Transport.Finalize, which
// the returned cfg.Transport is, once its last job is done.
func FromEnv(cfg pgas.Config) (pgas.Config, error) {
	cfg, err := cacheFromEnv(cfg)
	if err != nil {
		return cfg, err
	}
	tr, ok, err := shmFromEnv()
	if err != nil {
		return cfg, fmt.Errorf("launch: %w", err)
	}
	if !ok {
		if shmem.Built && shmem.Launched() {
			return fromSHMEM(cfg)
		}
		return fromMPI(cfg)
	}
	cfg.Transport = tr
	cfg.Ranks = tr.Size()
	switch {
	case cfg.SegmentBytes == 0:
		cfg.SegmentBytes = min(tr.SegmentBytes(), pgas.DefaultSegmentBytes)
	case cfg.SegmentBytes > tr.SegmentBytes():
		return cfg, fmt.Errorf("launch: the job asks for %d-byte segments but the shm launcher reserved %d per rank", cfg.SegmentBytes, tr.SegmentBytes())
	}
	return cfg, nil
}

// EnvCache, when set, is the remote-reference cache setting of every job
// FromEnv configures, in pgas.ParseCacheConfig's form ("on", "off",
// "lines=64,line=1024,victim=16"); it replaces cfg.Cache. mrrun's --cache
// flag sets it for the ranks it launches.
const EnvCache = "PGASMR_CACHE"

// cacheFromEnv applies EnvCache to cfg.
func cacheFromEnv(cfg pgas.Config) (pgas.Config, error) {
	v, ok := os.LookupEnv(EnvCache)
	if !ok || strings.TrimSpace(v) == "" {
		return cfg, nil
	}
	cc, err := pgas.ParseCacheConfig(v)
	if err != nil {
		return cfg, fmt.Errorf("launch: %s=%q: %w", EnvCache, v, err)
	}
	cfg.Cache = cc
	return cfg, nil
}

// shmJob is this process's shm transport, attached once however often
// FromEnv is called for the same job (a program may size its job in two
// steps, as examples/spmv does, and run several jobs).
var shmJob struct {
	sync.Mutex
	path string
	t    *shm.Transport
}

func shmFromEnv() (*shm.Transport, bool, error) {
	shmJob.Lock()
	defer shmJob.Unlock()
	if shmJob.t != nil && shmJob.path == os.Getenv(shm.EnvSegment) {
		return shmJob.t, true, nil
	}
	t, ok, err := shm.FromEnv()
	if ok && err == nil {
		shmJob.path, shmJob.t = os.Getenv(shm.EnvSegment), t
	}
	return t, ok, err
}

// Leader says whether this process hosts rank 0 of cfg's job: true in one
// process (inproc hosts every rank), and in the rank-0 process of a
// launched job. Programs print their report only on the leader.
func Leader(cfg pgas.Config) bool {
	if r, ok := cfg.Transport.(interface{ Rank() int }); ok {
		return r.Rank() == 0
	}
	return true
}

// fromMPI is FromEnv for a process an MPI launcher started, if one did.
func fromMPI(cfg pgas.Config) (pgas.Config, error) {
	tr, ok, err := mpi.FromEnv()
	if err != nil {
		return cfg, fmt.Errorf("launch: %w", err)
	}
	if !ok {
		return cfg, nil
	}
	cfg.Transport = tr
	cfg.Ranks = tr.Size()
	return cfg, nil
}

// fromSHMEM is FromEnv for a PE that oshrun started, in a program built
// with -tags shmem.
func fromSHMEM(cfg pgas.Config) (pgas.Config, error) {
	tr, _, err := shmem.FromEnv()
	if err != nil {
		return cfg, fmt.Errorf("launch: %w", err)
	}
	cfg.Transport = tr
	cfg.Ranks = tr.Size()
	return cfg, nil
}

// Done releases what FromEnv set up for the process, once its last job has
// run: it finalises MPI when FromEnv started it (and leaves alone an MPI
// that the program initialised itself). It does nothing otherwise.
func Done(cfg pgas.Config) error {
	if f, ok := cfg.Transport.(interface{ Finalize() error }); ok {
		return f.Finalize()
	}
	return nil
}
