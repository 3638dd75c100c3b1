//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/apps/wordcount"
	"github.com/pgasmr/pgasmr/internal/memlimit"
	"github.com/pgasmr/pgasmr/reduce"
)

// Nothing left behind (leftover.go): every way a job that spills can end
// gives the right answer with status 0, or one line and a status of 1 or
// more, and leaves nothing: no spill directory or file in --tmp, no -o
// file or temporary file, no rank process, no segment.
//
// go test ./cmd/mrrun -run 'TestLeftover' -leftover.runs 10 runs every
// case ten times, and PGASMR_LEFTOVER_BIN=/path/to/mrrun runs them on
// another build of mrrun (an older one, to see the leftovers again).

var leftoverRuns = flag.Int("leftover.runs", 1, "how many times TestLeftover* run each case")

// The job of the leftover tests: wordcount over a corpus of mostly
// distinct words, -np 2, under a --memory that makes it spill hundreds of
// files, its result too.
const (
	leftoverBytes  = 4 << 20
	leftoverMemory = "4MiB"
	leftoverOut    = "result.tsv"
)

var (
	leftoverOnce sync.Once
	leftoverIn   string
	leftoverWant []byte
	leftoverErr  error
)

// leftoverBin returns the mrrun the leftover tests run: a build without
// -race (a job under -race takes twenty times as long, and a -race
// runtime maps terabytes, which RLIMIT_AS cannot bound), or
// $PGASMR_LEFTOVER_BIN.
func leftoverBin(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("PGASMR_LEFTOVER_BIN"); b != "" {
		return b
	}
	return plainMrrun(t)
}

// leftoverInput returns the corpus and the result an undisturbed run of
// the job gives (made once, in the directory of the tests' inputs, which
// TestMain removes).
func leftoverInput(t *testing.T) (string, []byte) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs jobs of a few seconds")
	}
	testInput(t, "wordcount") // makes inputsDir
	bin := leftoverBin(t)
	leftoverOnce.Do(func() {
		in := filepath.Join(inputsDir, "leftover")
		if leftoverErr = wordcount.GenerateVocabulary(in, leftoverBytes, 16, 7, 4_000_000_000); leftoverErr != nil {
			return
		}
		out := filepath.Join(inputsDir, "leftover.tsv")
		spill, err := os.MkdirTemp(inputsDir, "spill")
		if err != nil {
			leftoverErr = err
			return
		}
		r, err := exec.Command(bin, "-np", "2", "--memory", leftoverMemory, "--tmp", spill, "-q", "--output-format", "tsv", "-o", out, "wordcount", in).CombinedOutput()
		if err != nil {
			leftoverErr = fmt.Errorf("the undisturbed job: %v: %s", err, r)
			return
		}
		if leftoverWant, leftoverErr = os.ReadFile(out); leftoverErr == nil && len(leftoverWant) < 1<<20 {
			leftoverErr = fmt.Errorf("the undisturbed job wrote %d bytes, want a result of megabytes", len(leftoverWant))
		}
		leftoverIn = in
	})
	if leftoverErr != nil {
		t.Fatal(leftoverErr)
	}
	return leftoverIn, leftoverWant
}

// leftoverJob is one run of the job, started in a process group of its
// own.
type leftoverJob struct {
	cmd          *exec.Cmd
	stderr       *lockedBuffer
	spill, out   string     // --tmp, and the directory of -o
	done         chan error // cmd.Wait's
	shm          bool
	kids         []int // rank processes seen
	code         int
	exitedBefore bool // the job ended before the event it was to be stopped at
}

// leftoverArgs changes the job a leftover test starts.
type leftoverArgs struct {
	env    []string // added to the environment
	pre    []string // the command before mrrun's (a prlimit)
	output string   // -o, if not leftoverOut in a directory of its own
	memory string   // --memory, if not leftoverMemory
}

// startLeftover starts the job with transport.
func startLeftover(t *testing.T, transport string, a leftoverArgs) *leftoverJob {
	t.Helper()
	in, _ := leftoverInput(t)
	j := &leftoverJob{stderr: new(lockedBuffer), spill: t.TempDir(), out: t.TempDir(), done: make(chan error, 1), shm: transport == "shm"}
	if a.output == "" {
		a.output = filepath.Join(j.out, leftoverOut)
	}
	if a.memory == "" {
		a.memory = leftoverMemory
	}
	argv := append(a.pre, leftoverBin(t), "--transport", transport, "-np", "2", "--memory", a.memory, "--tmp", j.spill,
		"-q", "--output-format", "tsv", "-o", a.output, "wordcount", in)
	j.cmd = exec.Command(argv[0], argv[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") { // mrrun sets Go's memory limit itself
			j.cmd.Env = append(j.cmd.Env, kv)
		}
	}
	j.cmd.Env = append(j.cmd.Env, a.env...)
	j.cmd.Stderr = j.stderr
	j.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { j.done <- j.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case err := <-j.done:
			j.done <- err
		default:
			syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
			<-j.done
		}
	})
	return j
}

// The points at which a job is stopped.
const (
	atMap    = "map"    // its first spill file appears
	atMerge  = "merge"  // its spill files get fewer: the reduce reads them back
	atWrite  = "write"  // -o's temporary file has bytes
	atResult = "result" // -o is in place
)

var leftoverPoints = []string{atMap, atMerge, atWrite, atResult}

// waitFor polls until the job reaches point, and reports whether it did
// before it ended.
func (j *leftoverJob) waitFor(t *testing.T, point string) bool {
	t.Helper()
	most := 0
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-j.done:
			j.done <- err
			return false
		default:
		}
		if j.shm {
			if kids := children(j.cmd.Process.Pid); len(kids) > len(j.kids) {
				j.kids = kids
			}
		}
		var reached bool
		switch point {
		case atMap:
			reached = countFiles(j.spill) > 0
		case atMerge:
			n := countFiles(j.spill)
			reached = n < most-1
			most = max(most, n)
		case atWrite:
			ents, _ := os.ReadDir(j.out)
			for _, e := range ents {
				if fi, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), "."+leftoverOut+".tmp-") && fi.Size() > 0 {
					reached = true
				}
			}
		case atResult:
			_, err := os.Stat(filepath.Join(j.out, leftoverOut))
			reached = err == nil
		default:
			t.Fatalf("no point %q", point)
		}
		if reached {
			return true
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job did not reach %q within 2 minutes", point)
		}
		time.Sleep(time.Millisecond)
	}
}

// countFiles counts the regular files under dir.
func countFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// wait waits for the job to end, for at most a minute, and keeps its exit
// status.
func (j *leftoverJob) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-j.done:
		j.done <- err
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			j.code = ee.ExitCode()
			if j.code < 0 {
				t.Fatalf("mrrun died: %v; stderr %q", err, j.stderr.String())
			}
		default:
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("mrrun still running a minute later; stderr %q", j.stderr.String())
	}
}

// check checks what the job gave and left, once it has ended: the right
// answer with status 0 and nothing said, or status code and one line
// containing want; and nothing left, but the result after status 0.
func (j *leftoverJob) check(t *testing.T, code int, want string) {
	t.Helper()
	_, result := leftoverInput(t)
	stderr := j.stderr.String()
	outs, _ := os.ReadDir(j.out)
	var names []string
	for _, e := range outs {
		names = append(names, e.Name())
	}
	switch j.code {
	case 0:
		if stderr != "" {
			t.Errorf("status 0, stderr %q; want nothing said", stderr)
		}
		if got, err := os.ReadFile(filepath.Join(j.out, leftoverOut)); err != nil || !bytes.Equal(got, result) {
			t.Errorf("status 0, -o holds %d bytes (%v); want the result's %d", len(got), err, len(result))
		}
		if len(names) != 1 {
			t.Errorf("status 0, the -o directory holds %q; want the result alone", names)
		}
	case code:
		if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "mrrun: ") || !strings.Contains(stderr, want) {
			t.Errorf("status %d, stderr %q; want one line with %q", j.code, stderr, want)
		}
		if len(names) != 0 {
			t.Errorf("status %d, the -o directory holds %q; want nothing", j.code, names)
		}
	default:
		t.Errorf("status %d, stderr %q; want 0, or %d and one line with %q", j.code, stderr, code, want)
	}
	j.checkLeft(t)
}

// checkLeft checks that the job, ended, left nothing in --tmp, and under
// shm no rank process and no segment.
func (j *leftoverJob) checkLeft(t *testing.T) {
	t.Helper()
	var left []string
	filepath.WalkDir(j.spill, func(p string, d fs.DirEntry, err error) error {
		if p != j.spill {
			left = append(left, strings.TrimPrefix(p, j.spill+"/"))
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("status %d: --tmp holds %d entries: %q ...", j.code, len(left), left[:min(len(left), 3)])
	}
	if j.shm {
		checkNothingLeft(t, j.cmd.Process.Pid, j.kids)
	}
}

// TestLeftoverInterrupt stops a job that spills with SIGINT or SIGTERM at
// each point (its map, its merge, the write of -o, the moment -o is in
// place): sent to mrrun, or under --transport shm also to its process
// group, as a terminal's Ctrl-C is. An interrupted job leaves no result:
// status 130 and "mrrun: interrupted", or, once -o was in place when the
// signal came, status 0 and the result; nothing else is left.
func TestLeftoverInterrupt(t *testing.T) {
	leftoverInput(t)
	for _, c := range []struct {
		transport string
		group     bool
		sigs      []syscall.Signal
	}{
		{"inproc", false, []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}},
		{"shm", false, []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}},
		{"shm", true, []syscall.Signal{syscall.SIGINT}},
	} {
		for _, sig := range c.sigs {
			for _, point := range leftoverPoints {
				name := c.transport
				if c.group {
					name += "-group"
				}
				t.Run(fmt.Sprintf("%s/%s/%s", name, sigName(sig), point), func(t *testing.T) {
					stops := map[int]int{}
					for range *leftoverRuns {
						j := startLeftover(t, c.transport, leftoverArgs{})
						if j.waitFor(t, point) {
							pid := j.cmd.Process.Pid
							if c.group {
								pid = -pid
							}
							if err := syscall.Kill(pid, sig); errors.Is(err, syscall.ESRCH) {
								j.exitedBefore = true // gone (and reaped) since
							} else if err != nil {
								t.Fatal(err)
							}
						} else {
							j.exitedBefore = true
						}
						j.wait(t)
						j.check(t, 130, "interrupted")
						stops[j.code]++
						if j.exitedBefore && j.code != 0 {
							t.Errorf("ended by itself with status %d before %s", j.code, point)
						}
					}
					t.Logf("exit statuses: %v", stops)
				})
			}
		}
	}
}

// sigName is SIGINT for syscall.SIGINT.
func sigName(s syscall.Signal) string {
	return map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[s]
}

// TestLeftoverKilledRank kills one rank process of an shm job that spills
// (SIGKILL, which it cannot answer): the job fails with one line naming
// the rank, and the spill files of both ranks go, the killed one's
// included (its launcher removes them once every rank has exited).
func TestLeftoverKilledRank(t *testing.T) {
	leftoverInput(t)
	for _, victim := range []int{1, 0} {
		for _, point := range []string{atMap, atMerge} {
			t.Run(fmt.Sprintf("rank%d/%s", victim, point), func(t *testing.T) {
				for range *leftoverRuns {
					j := startLeftover(t, "shm", leftoverArgs{})
					if !j.waitFor(t, point) {
						t.Fatalf("the job ended before %s: status %v, stderr %q", point, j.cmd.ProcessState, j.stderr.String())
					}
					pid := 0
					for _, k := range children(j.cmd.Process.Pid) {
						if rankOfPID(k) == victim {
							pid = k
						}
					}
					if pid == 0 {
						// The rank has finished (the other ranks' share of a
						// merge may take longer): nothing to kill there.
						j.wait(t)
						t.Skipf("rank %d had exited at %s", victim, point)
					}
					if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					j.wait(t)
					j.check(t, 1, fmt.Sprintf("rank %d", victim))
					if j.code == 0 {
						t.Errorf("status 0 after rank %d was killed at %s", victim, point)
					}
				}
			})
		}
	}
}

// TestLeftoverKilledLauncher kills the launcher of an shm job that
// spills (SIGKILL, which nothing can answer): its ranks die with it and
// leave their spill files and the launcher's temporary -o file, and the
// next job with the same --tmp and -o removes both, since their maker is
// provably dead.
func TestLeftoverKilledLauncher(t *testing.T) {
	in, _ := leftoverInput(t)
	j := startLeftover(t, "shm", leftoverArgs{})
	if !j.waitFor(t, atMap) {
		t.Fatalf("the job ended before it spilled: %v", j.cmd.ProcessState)
	}
	j.cmd.Process.Kill()
	j.done <- <-j.done
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		alive := 0
		for _, k := range j.kids {
			if s, ok := procState(k); ok && s != 'Z' {
				alive++
			}
		}
		if alive == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d ranks still running 5 s after their launcher was killed", alive)
		}
	}
	if countFiles(j.spill) == 0 {
		t.Fatal("the killed job left no spill file: the test proves nothing")
	}
	out := filepath.Join(j.out, leftoverOut)
	if b, err := exec.Command(leftoverBin(t), "--transport", "shm", "-np", "2", "--memory", leftoverMemory, "--tmp", j.spill,
		"-q", "--output-format", "tsv", "-o", out, "wordcount", in).CombinedOutput(); err != nil {
		t.Fatalf("the next job: %v: %s", err, b)
	}
	j.stderr = new(lockedBuffer)
	j.code = 0
	j.check(t, 0, "")
}

// TestLeftoverForcedExit interrupts a job whose result cannot be written
// (-o is a named pipe whose reader stopped reading: the write blocks in
// the kernel, deaf to the interrupt), so that mrrun exits without waiting
// for it, interruptGrace later (a rank, rankInterruptGrace later): status
// 130, one line, and the spilled result removed all the same.
func TestLeftoverForcedExit(t *testing.T) {
	leftoverInput(t)
	for _, transport := range []string{"inproc", "shm"} {
		t.Run(transport, func(t *testing.T) {
			for range *leftoverRuns {
				fifo := filepath.Join(t.TempDir(), "result.fifo")
				if err := syscall.Mkfifo(fifo, 0o600); err != nil {
					t.Fatal(err)
				}
				j := startLeftover(t, transport, leftoverArgs{output: fifo})
				// Opening blocks until mrrun opens the pipe to write the result.
				opened := make(chan *os.File, 1)
				go func() {
					r, err := os.OpenFile(fifo, os.O_RDONLY, 0)
					if err != nil {
						t.Error(err)
					}
					opened <- r
				}()
				var r *os.File
				select {
				case r = <-opened:
				case err := <-j.done:
					j.done <- err
					if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						w.Close() // lets the open above return
					}
					t.Fatalf("mrrun ended (%v) before it wrote the result; stderr %q", err, j.stderr.String())
				}
				if r == nil {
					t.FailNow()
				}
				defer r.Close()
				var b [1]byte
				if _, err := r.Read(b[:]); err != nil {
					t.Fatalf("reading the result: %v", err)
				}
				// The writer fills the pipe and blocks: no more is read.
				if err := j.cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
				sent := time.Now()
				j.wait(t)
				took := time.Since(sent)
				t.Logf("status %d %v after SIGINT", j.code, took.Round(time.Millisecond))
				if j.code != 130 {
					t.Errorf("status %d, want 130", j.code)
				}
				j.check(t, 130, "interrupted")
			}
		})
	}
}

// TestLeftoverMemoryLimit runs the job under RLIMIT_AS limits of about 2
// GiB (prlimit; mrrun maps 1.7 to 1.9 GiB of address space on its own),
// so that the memory watchdog stops it at some point, once it has spilled
// if the test is to prove anything: one line and status 1, or, where the
// job fits after all, the right answer; nothing left either way. Where
// the watchdog stops no job after its first spill, the test is skipped.
func TestLeftoverMemoryLimit(t *testing.T) {
	leftoverInput(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit (util-linux)")
	}
	for _, transport := range []string{"inproc", "shm"} {
		t.Run(transport, func(t *testing.T) {
			stopped := 0
			for _, mib := range []int{1970, 2000, 2030, 2060, 2090, 2120, 2150} {
				j := startLeftover(t, transport, leftoverArgs{
					env:    []string{"GOMAXPROCS=2"}, // fewer threads, fewer malloc arenas: a 2 GiB limit starts it
					pre:    []string{prlimit, fmt.Sprintf("--as=%d", mib<<20)},
					memory: "16MiB",
				})
				spilled := j.watchSpills()
				j.wait(t)
				t.Logf("RLIMIT_AS %d MiB: status %d, spilled before: %v", mib, j.code, spilled)
				j.check(t, 1, "memory limit exceeded")
				if j.code == 1 && spilled {
					if stopped++; stopped >= *leftoverRuns {
						return
					}
				}
			}
			if stopped == 0 {
				t.Skip("the memory watchdog stopped no job once it had spilled: nothing shown")
			}
		})
	}
}

// watchSpills polls the job's --tmp until the job ends, and says whether
// it held a spill file at some point.
func (j *leftoverJob) watchSpills() bool {
	spilled := false
	for {
		select {
		case err := <-j.done:
			j.done <- err
			return spilled
		case <-time.After(5 * time.Millisecond):
			spilled = spilled || countFiles(j.spill) > 0
		}
	}
}

// envAtLimit makes this test binary the mrrun of TestLeftoverAtLimit.
const envAtLimit = "MRRUN_TEST_AT_LIMIT"

// TestLeftoverAtLimit: the memory watchdog's last word (atLimit, which
// memlimit calls when a job that should have stopped is within a margin of
// its limit) exits with one line and status 1 without waiting for the
// job, after removing its spill directory and the temporary file of the
// result it was writing. The job is this test binary, run again.
func TestLeftoverAtLimit(t *testing.T) {
	if dir := os.Getenv(envAtLimit); dir != "" {
		atLimitJob(dir)
		t.Fatal("atLimit returned")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(self, "-test.run=^TestLeftoverAtLimit$")
	cmd.Env = append(os.Environ(), envAtLimit+"="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	const want = "mrrun: memory limit exceeded: the job needed more than 1 GiB, over the 2 GiB RLIMIT_AS (prlimit/ulimit -v); raise the limit or give the job less input per rank\n"
	if code != 1 || stderr.String() != want {
		t.Errorf("status %d, stderr %q; want 1 and %q (stdout %q)", code, stderr.String(), want, stdout.String())
	}
	for _, d := range []string{"tmp", "out"} {
		if ents, err := os.ReadDir(filepath.Join(dir, d)); err != nil || len(ents) > 0 {
			t.Errorf("%s holds %v (%v); want nothing", d, ents, err)
		}
	}
}

// atLimitJob is the job of TestLeftoverAtLimit: it spills in dir/tmp,
// and while it writes its result to dir/out/result.tsv the watchdog gives
// up on it.
func atLimitJob(dir string) {
	tmp, out := filepath.Join(dir, "tmp"), filepath.Join(dir, "out")
	for _, d := range []string{tmp, out} {
		if err := os.Mkdir(d, 0o700); err != nil {
			panic(err)
		}
	}
	runWithDeadline(context.Background(), nil, forcedExit{Grace: interruptGrace}, os.Stderr, func(ctx context.Context) int {
		spec := jobSpec{tmpDir: tmp}
		defer jobSpills(ctx, &spec)()
		sp, err := reduce.MakeJobDir(tmp) // named as this process's spill directories
		if err != nil {
			panic(err)
		}
		if err := os.WriteFile(filepath.Join(sp, "000001.run"), []byte("pairs"), 0o600); err != nil {
			panic(err)
		}
		writeFileAtomic(resultCtx(ctx), filepath.Join(out, leftoverOut), func(w io.Writer) error {
			io.WriteString(w, "the\t1\n")
			atLimit(ctx, os.Stderr, &memlimit.ExceededError{Limit: memlimit.Limit{Kind: memlimit.AddressSpace, Bytes: 2 << 30},
				Needed: 1 << 30, Hint: memHint})
			return nil
		})
		return 0
	})
}

// TestCommitOutput: the rename of the result is the run's commit point.
// Before it, a cancelled run (an interrupt) renames nothing and fails, and
// so does one whose forced exit has begun, which removes the temporary
// file; after it, a forced exit says nothing and returns 0.
func TestCommitOutput(t *testing.T) {
	setup := func(t *testing.T) (ctx context.Context, cancel context.CancelCauseFunc, fx *forcedExits, tmp, path string) {
		dir := t.TempDir()
		tmp, path = filepath.Join(dir, ".out.tmp-x"), filepath.Join(dir, "out")
		if err := os.WriteFile(tmp, []byte("result\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		fx = new(forcedExits)
		ctx, cancel = context.WithCancelCause(context.WithValue(context.Background(), forcedExitsKey{}, fx))
		atForcedExit(ctx, func() { os.Remove(tmp) })
		return resultCtx(ctx), cancel, fx, tmp, path
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	t.Run("committed", func(t *testing.T) {
		ctx, cancel, fx, tmp, path := setup(t)
		defer cancel(nil)
		if err := commitOutput(ctx, tmp, path); err != nil || !exists(path) || exists(tmp) {
			t.Fatalf("commitOutput = %v; the result is there: %v, the temporary file: %v", err, exists(path), exists(tmp))
		}
		var stderr bytes.Buffer
		if code := forceExit(fx, &stderr, false); code != 0 || stderr.Len() != 0 || !exists(path) {
			t.Errorf("a forced exit after the commit: status %d, stderr %q, result there: %v; want 0, nothing said, the result", code, stderr.String(), exists(path))
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel, fx, tmp, path := setup(t)
		cancel(signalError{syscall.SIGINT})
		if err := commitOutput(ctx, tmp, path); err == nil || exists(path) {
			t.Fatalf("commitOutput of a cancelled run = %v, result there: %v; want an error and none", err, exists(path))
		}
		var stderr bytes.Buffer
		if code := forceExit(fx, &stderr, false); code != 130 || stderr.String() != "mrrun: interrupted\n" || exists(tmp) {
			t.Errorf("forced exit: status %d, stderr %q, temporary file there: %v; want 130, the line, none", code, stderr.String(), exists(tmp))
		}
	})
	t.Run("forced exit first", func(t *testing.T) {
		ctx, cancel, fx, tmp, path := setup(t)
		defer cancel(nil)
		var stderr bytes.Buffer
		if code := forceExit(fx, &stderr, false); code != 130 {
			t.Errorf("forced exit: status %d, want 130", code)
		}
		if err := commitOutput(ctx, tmp, path); !errors.Is(err, errInterrupted) || exists(path) || exists(tmp) {
			t.Errorf("commitOutput after a forced exit = %v; result there: %v, temporary file: %v; want errInterrupted and neither", err, exists(path), exists(tmp))
		}
	})
}

// TestLeftoverReaderGone: the reader of the result goes after the first
// line (mrrun ... | head -1): mrrun ends quietly with status 141, as a
// writer killed by SIGPIPE does, under --transport shm too (whose root
// rank writes the result), and the spilled result goes.
func TestLeftoverReaderGone(t *testing.T) {
	in, _ := leftoverInput(t)
	for _, transport := range []string{"inproc", "shm"} {
		t.Run(transport, func(t *testing.T) {
			spill := t.TempDir()
			cmd := exec.Command(leftoverBin(t), "--transport", transport, "-np", "2", "--memory", leftoverMemory, "--tmp", spill, "-q", "wordcount", in)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr := new(lockedBuffer)
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "word") {
				t.Fatalf("first line %q: %v", line, err)
			}
			kids := children(cmd.Process.Pid)
			stdout.Close()
			j := &leftoverJob{cmd: cmd, stderr: stderr, spill: spill, out: t.TempDir(), done: make(chan error, 1), shm: transport == "shm", kids: kids}
			go func() { j.done <- cmd.Wait() }()
			j.wait(t)
			if j.code != 141 || stderr.String() != "" {
				t.Errorf("status %d, stderr %q; want 141 and nothing said", j.code, stderr.String())
			}
			j.checkLeft(t)
		})
	}
}
