package ranktest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Body is an SPMD body a test rank runs: tr is the rank's transport, arg
// the parameters the test passed.
type Body[T any] func(ctx context.Context, tr T, arg string) error

// Vars names the environment variables that tell a rank process which
// body to run and with what argument.
type Vars struct {
	Body string // the body's name, e.g. "SHMTEST_BODY"
	Arg  string // its argument, e.g. "SHMTEST_ARG"
}

// NoRaceExitSleep is the GORACE setting of test ranks: race-enabled
// processes otherwise sleep 1 s at exit.
const NoRaceExitSleep = "GORACE=atexit_sleep_ms=0"

// Env returns the variables that make a rank run body with arg, and
// NoRaceExitSleep.
func (v Vars) Env(body, arg string) []string {
	return []string{v.Body + "=" + body, v.Arg + "=" + arg, NoRaceExitSleep}
}

// Name is the body this process is asked to run, "" if none.
func (v Vars) Name() string { return os.Getenv(v.Body) }

// Exit statuses of RunBody.
const (
	ExitOK      = 0 // the body returned nil
	ExitFailed  = 1 // the body returned an error
	ExitNoStart = 2 // the process could not run the body
)

// RunBody runs the body of bodies that v names, as rank rank, and returns
// the exit status: ExitOK after printing "BODYOK <rank>" on stdout,
// ExitFailed if the body failed, ExitNoStart if there is no such body. A
// failure is printed on stderr as "rank <rank>: <error>".
func RunBody[T any](ctx context.Context, v Vars, bodies map[string]Body[T], rank int, tr T) int {
	name := v.Name()
	body := bodies[name]
	if body == nil {
		fmt.Fprintf(os.Stderr, "rank %d: no body %q\n", rank, name)
		return ExitNoStart
	}
	if err := body(ctx, tr, os.Getenv(v.Arg)); err != nil {
		fmt.Fprintf(os.Stderr, "rank %d: %v\n", rank, err)
		return ExitFailed
	}
	fmt.Printf("BODYOK %d\n", rank)
	return ExitOK
}

// CheckBodiesOK fails t if a launch (launcher names it in the message)
// succeeded with err == nil but fewer than ranks ranks printed BODYOK on
// stdout.
func CheckBodiesOK(t testing.TB, launcher string, err error, stdout string, ranks int) {
	t.Helper()
	if ok := len(Lines(stdout, "BODYOK ")); err == nil && ok != ranks {
		t.Errorf("%s succeeded, but %d of %d ranks ran their body to the end", launcher, ok, ranks)
	}
}

// ArgInts parses a body's argument as comma-separated integers. It panics
// if one is not an integer: the tests write the arguments.
func ArgInts(arg string) []int64 {
	var out []int64
	for _, f := range strings.Split(arg, ",") {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			panic(fmt.Sprintf("ranktest: bad body argument %q", arg))
		}
		out = append(out, v)
	}
	return out
}

// Lines returns the lines of s that start with prefix, without it.
func Lines(s, prefix string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			out = append(out, rest)
		}
	}
	return out
}

// Zombie reports whether process pid is a zombie or gone.
func Zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// JobProcs scans /proc for the live processes whose environment holds
// name=value: the processes of one launch, which the harness marks so.
func JobProcs(name, value string) []int {
	ents, _ := os.ReadDir("/proc")
	want := []byte(name + "=" + value + "\x00")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, want) || Zombie(pid) {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// JobProcsAfter is JobProcs, polled for up to wait until none is left.
func JobProcsAfter(name, value string, wait time.Duration) []int {
	deadline := time.Now().Add(wait)
	for {
		left := JobProcs(name, value)
		if len(left) == 0 || !time.Now().Before(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Launched is what a launcher (mpirun, oshrun) produced.
type Launched struct {
	Err            error
	Took           time.Duration // from start to exit
	End            time.Time     // when it exited
	Stdout, Stderr string
}

// Launch runs the launcher at path (named name in messages) with args
// (its own flags, then the program and its arguments), env added to the
// environment, in a process group of its own that is killed after two
// minutes. When it succeeds, every one of ranks must have printed BODYOK;
// and no process marked jobVar=job may be left a second after it exits.
func Launch(t testing.TB, name, path string, args, env []string, ranks int, jobVar, job string) Launched {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	var res Launched
	res.Err = cmd.Run()
	res.End = time.Now()
	res.Took = res.End.Sub(start)
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	CheckBodiesOK(t, name, res.Err, res.Stdout, ranks)
	if left := JobProcsAfter(jobVar, job, time.Second); len(left) > 0 {
		t.Errorf("processes %v of launch %s still run after %s returned", left, job, name)
	}
	return res
}

// OpenMPIEnv prepares env for an OpenMPI launcher (mpirun, oshrun): it
// adds what the tests need to run as root and with more ranks than
// processors, and each of extra, unless the environment already sets the
// variable, and returns env with the flags (-x NAME) that pass every one
// of its variables to the ranks.
func OpenMPIEnv(env []string, extra ...string) (flags, out []string) {
	for _, kv := range append([]string{
		"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1",
	}, extra...) {
		if k, _, _ := strings.Cut(kv, "="); os.Getenv(k) == "" {
			env = append(env, kv)
		}
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		flags = append(flags, "-x", k)
	}
	return flags, env
}
