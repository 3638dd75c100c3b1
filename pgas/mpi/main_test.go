//go:build mpi || mpich

package mpi_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/mpi"
)

// The test binary is also the program of the ranks: a test starts it
// under mpirun with MPITEST_BODY naming the SPMD body to run, and TestMain,
// finding itself under an MPI launcher, runs that body instead of the
// tests. MPITEST_ARG passes the body's parameters; MPITEST_JOB marks the
// processes of one launch so that the test can check none is left.
const (
	envBody = "MPITEST_BODY"
	envArg  = "MPITEST_ARG"
	envJob  = "MPITEST_JOB"
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
	if os.Getenv(envBody) == "owned" {
		return ownedMain()
	}
	tr, _, err := mpi.FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	name := os.Getenv(envBody)
	body := bodies[name]
	if body == nil {
		fmt.Fprintf(os.Stderr, "rank %d: no body %q\n", tr.Rank(), name)
		tr.Abort(2)
	}
	if err := body(context.Background(), tr, os.Getenv(envArg)); err != nil {
		fmt.Fprintf(os.Stderr, "rank %d: %v\n", tr.Rank(), err)
		tr.Abort(1)
	}
	fmt.Printf("BODYOK %d\n", tr.Rank())
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

// argInts parses MPITEST_ARG as comma-separated integers.
func argInts(arg string) []int64 {
	var out []int64
	for _, f := range strings.Split(arg, ",") {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			panic(fmt.Sprintf("bad %s %q", envArg, arg))
		}
		out = append(out, v)
	}
	return out
}

// launched is what an mpirun produced.
type launched struct {
	err            error
	took           time.Duration
	end            time.Time
	stdout, stderr string
	job            string
}

var jobSeq int

// mpirunPath finds the launcher, or skips the test.
func mpirunPath(t testing.TB) string {
	name := "mpirun"
	if mpi.Flavour == "MPICH" {
		name = "mpiexec"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(envRequire) != "" {
			t.Fatalf("%s not found: %v", name, err)
		}
		t.Skipf("%s not found: %v", name, err)
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
	env = append(env, envBody+"="+body, envArg+"="+arg, envJob+"="+job, "GORACE=atexit_sleep_ms=0")
	args := []string{"-n", strconv.Itoa(ranks)}
	if mpi.Flavour == "OpenMPI" {
		for _, kv := range []string{
			"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
			"OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_MCA_btl_vader_single_copy_mechanism=none",
		} {
			if k, _, _ := strings.Cut(kv, "="); os.Getenv(k) == "" {
				env = append(env, kv)
			}
		}
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			args = append(args, "-x", k)
		}
	}
	args = append(args, os.Args[0], "-test.run=^$")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	res := launched{job: job}
	res.err = cmd.Run()
	res.end = time.Now()
	res.took = res.end.Sub(start)
	res.stdout, res.stderr = stdout.String(), stderr.String()
	if ok := len(lines(res.stdout, "BODYOK ")); res.err == nil && ok != ranks {
		t.Errorf("mpirun succeeded, but %d of %d ranks ran their body to the end", ok, ranks)
	}
	checkClean(t, job)
	return res
}

// checkClean fails t if a process of the launch is still alive 1 s after
// mpirun returned.
func checkClean(t testing.TB, job string) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		left := jobProcs(job)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes %v of launch %s still run after mpirun returned", left, job)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// jobProcs scans /proc for live processes whose environment names job.
func jobProcs(job string) []int {
	ents, _ := os.ReadDir("/proc")
	want := []byte(envJob + "=" + job + "\x00")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, want) || zombie(pid) {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// lines returns the lines of s that start with prefix, without it.
func lines(s, prefix string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			out = append(out, rest)
		}
	}
	return out
}
