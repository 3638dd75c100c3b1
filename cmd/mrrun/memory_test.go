package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pgasmr/pgasmr/internal/size"
	"github.com/pgasmr/pgasmr/pgas"
)

// The environment of a test binary re-executed as a wrapper that sets its
// RLIMIT_AS and executes another program (for systems without prlimit).
const (
	envWrapAS   = "MRRUN_TEST_RLIMIT_AS"
	envWrapExec = "MRRUN_TEST_EXEC"
)

// init turns this test binary into the wrapper when asked: it runs before
// the test framework parses anything. The exec is a raw execve with its
// arguments built before the limit is set, so nothing allocates in the
// limited address space (a -race test binary maps terabytes).
func init() {
	limit, prog := os.Getenv(envWrapAS), os.Getenv(envWrapExec)
	if limit == "" || prog == "" {
		return
	}
	fail := func(err error) {
		os.Stderr.WriteString("memory_test wrapper: " + err.Error() + "\n")
		os.Exit(99)
	}
	n, err := strconv.ParseUint(limit, 10, 64)
	if err != nil {
		fail(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envWrapAS+"=") && !strings.HasPrefix(kv, envWrapExec+"=") {
			env = append(env, kv)
		}
	}
	path, err := syscall.BytePtrFromString(prog)
	if err != nil {
		fail(err)
	}
	argv, err := syscall.SlicePtrFromStrings(append([]string{prog}, os.Args[1:]...))
	if err != nil {
		fail(err)
	}
	envv, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		fail(err)
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_AS, &rl); err != nil {
		fail(err)
	}
	rl.Cur = n
	if err := unix.Setrlimit(unix.RLIMIT_AS, &rl); err != nil {
		fail(err)
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(path)), uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	fail(errno)
}

// memLimitAS is the RLIMIT_AS the test gives mrrun. An idle mrrun maps
// about 1.3 to 1.8 GiB of address space (measured: 1.1 GiB the Go
// runtime reserves for its page allocator and arena maps, the rest
// glibc's 64 MiB malloc arenas and 8 MiB stacks of its threads, since the
// net package links cgo), and with less than about 2 GiB it fails to start
// at all, in the runtime, most of the time. With GOMAXPROCS=2 (fewer
// threads, so fewer arenas) 2 GiB starts it every time and leaves a few
// hundred MiB for the job.
const memLimitAS = 2 << 30

// memLimitInput writes the job that needs far more than memLimitAS:
// wordcount over 20 MB of random 8-letter lowercase tokens, about 2.2
// million distinct words (unlimited, mrrun -np 2 peaks at about 1.1 GB
// resident and 2.6 GB of address space).
func memLimitInput(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	r := rand.New(rand.NewPCG(19, 1))
	var tok [9]byte
	for n := 0; n < 20_000_000; n += len(tok) {
		for i := range 8 {
			tok[i] = byte('a' + r.IntN(26))
		}
		tok[8] = ' '
		if n%(10*len(tok)) == 9*len(tok) {
			tok[8] = '\n'
		}
		w.Write(tok[:])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// runWith runs argv with env added to this process's (GOMEMLIMIT
// removed, so that mrrun sets its own Go memory limit) and returns what
// it gave; it fails the test after 2 minutes.
func runWith(t *testing.T, env []string, argv ...string) execResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := execResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%q: still running after 2 minutes", argv)
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("%q: %v", argv, err)
	}
	return r
}

// A job that needs more memory than its RLIMIT_AS fails with one line
// and exit status 1, not the runtime's "fatal error: out of memory" and
// goroutine dump; the same job without the limit succeeds.
func TestMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a job of about 1 GB")
	}
	bin := plainMrrun(t) // a -race runtime maps terabytes of shadow memory
	in := memLimitInput(t)
	job := []string{"-np", "2", "-q", "--top", "5", "wordcount", in}
	env := []string{"GOMAXPROCS=2"}
	limit := strconv.Itoa(memLimitAS)

	const (
		prefix = "mrrun: memory limit exceeded: the job needed more than "
		suffix = ", over the 2 GiB RLIMIT_AS (prlimit/ulimit -v); raise the limit or give the job less input per rank\n"
	)
	check := func(t *testing.T, r execResult) {
		t.Helper()
		line := r.stderr
		if r.code != 1 || strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, prefix) || !strings.HasSuffix(line, suffix) ||
			strings.Contains(line, "fatal error") || strings.Contains(line, "goroutine") {
			t.Fatalf("under RLIMIT_AS %s: exit status %d, stderr:\n%s\nwant status 1 and the one line %q...%q", limit, r.code, tail(line, 3000), prefix, suffix)
		}
		t.Logf("stderr: %s", strings.TrimSuffix(line, "\n"))
	}
	t.Run("prlimit", func(t *testing.T) {
		prlimit, err := exec.LookPath("prlimit")
		if err != nil {
			t.Skip("no prlimit (util-linux)")
		}
		check(t, runWith(t, env, append([]string{prlimit, "--as=" + limit, bin}, job...)...))
	})
	t.Run("setrlimit", func(t *testing.T) {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		check(t, runWith(t, append(env, envWrapAS+"="+limit, envWrapExec+"="+bin), append([]string{self}, job...)...))
	})
	t.Run("shm", func(t *testing.T) {
		// Each rank process watches its own address space.
		prlimit, err := exec.LookPath("prlimit")
		if err != nil {
			t.Skip("no prlimit (util-linux)")
		}
		r := runWith(t, env, append([]string{prlimit, "--as=" + limit, bin, "--transport", "shm"}, job...)...)
		if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "mrrun: rank ") ||
			!strings.Contains(r.stderr, ": memory limit exceeded: the job needed more than ") {
			t.Fatalf("--transport shm under RLIMIT_AS %s: exit status %d, stderr:\n%s\nwant status 1 and one line %q", limit, r.code, tail(r.stderr, 3000), "mrrun: rank N: memory limit exceeded: ...")
		}
		t.Logf("stderr: %s", strings.TrimSuffix(r.stderr, "\n"))
	})
	t.Run("unlimited", func(t *testing.T) {
		r := runWith(t, env, append([]string{bin}, job...)...)
		if r.code != 0 || r.stderr != "" || strings.Count(r.stdout, "\n") != 6 {
			t.Fatalf("without a limit: exit status %d, stdout:\n%s\nstderr:\n%s\nwant status 0 and the top 5 words", r.code, r.stdout, tail(r.stderr, 3000))
		}
	})
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// TestMemoryBudgetRefusal: a job whose ranks do not fit its memory budget
// (the runtime's pgas.RankCostBytes a rank and pairBytes a pair of ranks)
// is refused before any rank starts, as a usage error of one line that
// gives the figure; the small budgets of the spill tests still run.
func TestMemoryBudgetRefusal(t *testing.T) {
	in := testInput(t, "wordcount")
	r := mrrun(t, "-np", "600", "--memory", "16KiB", "-q", "wordcount", in).want(t, 2)
	rank := size.String(pgas.RankCostBytes)
	for _, s := range []string{"mrrun: ", "-np 600 needs about 136.4 MiB of memory", "(" + rank + " a rank for the runtime, 288 B for each pair of ranks)",
		"over the memory budget of 16 KiB", "at most 246 ranks fit"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr %q does not say %q", r.stderr, s)
		}
	}
	if n := strings.Count(r.stderr, "\n"); n != 1 || !strings.HasPrefix(r.stderr, "mrrun: ") || r.stdout != "" {
		t.Errorf("want one mrrun line on stderr and no result, got %q and stdout %q", r.stderr, r.stdout)
	}
	mrrun(t, "-np", "3", "--memory", "16KiB", "-q", "-o", filepath.Join(t.TempDir(), "out.tsv"), "wordcount", in).want(t, 0)
}

// TestBudgetLine: the line mrrun gives for a job over its budget, in its
// own words (-np, the budget's source), and none for one within it.
func TestBudgetLine(t *testing.T) {
	err := budgetLine(100000, 0, 2<<30, "--memory")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Fatalf("budgetLine(-np 100000, 2 GiB) = %v, want a usage error", err)
	}
	want := "-np 100000 needs about 2.6 TiB of memory (" + size.String(pgas.RankCostBytes) + " a rank for the runtime, 288 B for each pair of ranks), over the memory budget of 2 GiB (--memory); at most "
	if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), " ranks fit") {
		t.Errorf("budgetLine = %q, want %q...", err, want)
	}
	if err := budgetLine(64, 4, 4<<20, "--memory"); err != nil {
		t.Errorf("-np 64 under 4 MiB: %v, want nil (it fits in the slack)", err)
	}
	if err := budgetLine(2000, 0, 0, "no bound (--memory 0)"); err != nil {
		t.Errorf("no bound: %v", err)
	}
	if err := budgetLine(4000, 1000, 1<<30, "--memory"); err == nil || !strings.Contains(err.Error(), "-np 4000 (1000 a node) needs about") {
		t.Errorf("-np 4000 of 1000 a node under 1 GiB: %v, want the node's figure", err)
	}
}
