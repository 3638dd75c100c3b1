//go:build mpi || mpich

package mpi_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	"github.com/pgasmr/pgasmr/pgas/mpi"
)

// The test binary is also the program of the ranks: a test starts it
// under mpirun with MPITEST_BODY naming the SPMD body to run, and TestMain,
// finding itself under an MPI launcher, runs that body instead of the
// tests. MPITEST_ARG passes the body's parameters; MPITEST_JOB marks the
// processes of one launch so that the test can check none is left.
var vars = ranktest.Vars{Body: "MPITEST_BODY", Arg: "MPITEST_ARG"}

const (
	envJob = "MPITEST_JOB"
	// envRequire makes the tests fail, not skip, without mpirun.
	envRequire = "MPITEST_REQUIRE"
)

func TestMain(m *testing.M) {
	if mpi.Launched() {
		os.Exit(rankMain())
	}
	os.Exit(m.Run())
}

// rankMain runs the body MPITEST_BODY names as this process's rank. A body
// that fails through pgas.Run never returns here: the transport aborts the
// MPI job.
func rankMain() int {
	if vars.Name() == "owned" {
		return ownedMain()
	}
	tr, _, err := mpi.FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if code := ranktest.RunBody(context.Background(), vars, bodies, tr.Rank(), tr); code != ranktest.ExitOK {
		tr.Abort(code)
	}
	if err := tr.Finalize(); err != nil {
		fmt.Fprintf(os.Stderr, "rank %d: %v\n", tr.Rank(), err)
		return 1
	}
	return 0
}

// ownedMain is a program that initialises and finalises MPI itself and
// uses the transport in between: the transport must use the MPI it finds
// and leave it initialised at Finalize.
func ownedMain() int {
	runtime.LockOSThread() // MPI_Finalize on the thread of MPI_Init_thread
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := mpi.RawInit(); err != nil {
		return fail(err)
	}
	tr, _, err := mpi.FromEnv()
	if err != nil {
		return fail(err)
	}
	err = pgas.Run(context.Background(), config(tr), func(ctx context.Context, r *pgas.Rank) error {
		return r.Barrier(ctx)
	})
	if err != nil {
		return fail(err)
	}
	if err := tr.Finalize(); err != nil {
		return fail(err)
	}
	fmt.Printf("OWNED %d finalized=%v\n", tr.Rank(), mpi.RawFinalized())
	if err := mpi.RawFinalize(); err != nil {
		return fail(err)
	}
	fmt.Printf("BODYOK %d\n", tr.Rank())
	return 0
}

// config is the pgas configuration of a test rank.
func config(tr *mpi.Transport) pgas.Config {
	return pgas.Config{Ranks: tr.Size(), Transport: tr, SegmentBytes: 8 << 20, SyncTimeout: time.Minute}
}

// launched is what an mpirun produced.
type launched = ranktest.Launched

var jobSeq int

// mpirunPath finds the launcher, or skips the test.
func mpirunPath(t testing.TB) string {
	// The flavour's own launcher first: with OpenMPI and MPICH both
	// installed (Debian's alternatives), mpirun and mpiexec are one of
	// them.
	names := []string{"mpirun.openmpi", "mpirun"}
	if mpi.Flavour == "MPICH" {
		names = []string{"mpiexec.mpich", "mpiexec.hydra", "mpiexec"}
	}
	var p string
	var err error
	for _, name := range names {
		if p, err = exec.LookPath(name); err == nil {
			break
		}
	}
	if err != nil {
		if os.Getenv(envRequire) != "" {
			t.Fatalf("no launcher (%v): %v", names, err)
		}
		t.Skipf("no launcher (%v): %v", names, err)
	}
	return p
}

// launch runs body on ranks processes of this test binary under mpirun,
// with env added to their environment, and checks that no process of the
// launch is left afterwards.
func launch(t testing.TB, ranks int, body, arg string, env ...string) launched {
	t.Helper()
	path := mpirunPath(t)
	jobSeq++
	job := fmt.Sprintf("%d-%d-%s", os.Getpid(), jobSeq, body)
	env = append(append(env, vars.Env(body, arg)...), envJob+"="+job)
	args := []string{"-n", strconv.Itoa(ranks)}
	if mpi.Flavour == "OpenMPI" {
		var flags []string
		flags, env = ranktest.OpenMPIEnv(env, "OMPI_MCA_btl_vader_single_copy_mechanism=none")
		args = append(args, flags...)
	}
	args = append(args, os.Args[0], "-test.run=^$")
	return ranktest.Launch(t, "mpirun", path, args, env, ranks, envJob, job)
}
