//go:build shmem

package shmem_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	"github.com/pgasmr/pgasmr/pgas/shmem"
)

// The test binary is also the program of the PEs: a test starts it under
// oshrun with SHMEMTEST_BODY naming the SPMD body to run, and TestMain,
// finding itself under a launcher, runs that body instead of the tests.
// SHMEMTEST_ARG passes the body's parameters; SHMEMTEST_JOB marks the
// processes of one launch so that the test can check none is left.
var vars = ranktest.Vars{Body: "SHMEMTEST_BODY", Arg: "SHMEMTEST_ARG"}

const (
	envJob = "SHMEMTEST_JOB"
	// envRequire makes the tests fail, not skip, without oshrun.
	envRequire = "SHMEMTEST_REQUIRE"
)

func TestMain(m *testing.M) {
	if shmem.Launched() {
		os.Exit(rankMain())
	}
	os.Exit(m.Run())
}

// rankMain runs the body SHMEMTEST_BODY names as this process's rank. A
// body that fails through pgas.Run never returns here: the transport ends
// every PE.
func rankMain() int {
	tr, _, err := shmem.FromEnv()
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

// config is the pgas configuration of a test rank.
func config(tr *shmem.Transport) pgas.Config {
	return pgas.Config{Ranks: tr.Size(), Transport: tr, SegmentBytes: 8 << 20, SyncTimeout: time.Minute}
}

// launched is what an oshrun produced.
type launched = ranktest.Launched

var jobSeq int

// launch runs body on ranks processes of this test binary under oshrun,
// with env added to their environment, and checks that no process of the
// launch is left afterwards.
func launch(t testing.TB, ranks int, body, arg string, env ...string) launched {
	t.Helper()
	path, err := exec.LookPath("oshrun")
	if err != nil {
		if os.Getenv(envRequire) != "" {
			t.Fatalf("no oshrun: %v", err)
		}
		t.Skipf("no oshrun: %v", err)
	}
	jobSeq++
	job := fmt.Sprintf("%d-%d-%s", os.Getpid(), jobSeq, body)
	flags, env := ranktest.OpenMPIEnv(append(append(env, vars.Env(body, arg)...), envJob+"="+job))
	args := append(append([]string{"-n", strconv.Itoa(ranks)}, flags...), os.Args[0], "-test.run=^$")
	return ranktest.Launch(t, "oshrun", path, args, env, ranks, envJob, job)
}
