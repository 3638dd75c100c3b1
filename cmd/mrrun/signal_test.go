//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas/shm"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writes and reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// stalledRead returns a function that blocks in read(2) on a pipe until
// release is called: a read that ignores every context.
func stalledRead(t *testing.T) (read func() error, release func()) {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // blocking descriptors: the read sleeps in the kernel
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { syscall.Close(p[1]) }) }
	t.Cleanup(func() {
		release()
		syscall.Close(p[0])
	})
	read = func() error {
		var b [1]byte
		n, err := syscall.Read(p[0], b[:])
		if err == nil && n == 0 {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return read, release
}

// TestRunWithDeadline: a run whose read is stalled while it writes -o
// FILE (through writeFileAtomic, which registers its temporary file) ends
// interruptGrace after SIGINT or SIGTERM: status 130, "mrrun:
// interrupted", and no file left, neither the output nor the temporary.
func TestRunWithDeadline(t *testing.T) {
	for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(s.String(), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.tsv")
			read, release := stalledRead(t)
			stalled := make(chan struct{})
			fnDone := make(chan struct{})
			var stderr lockedBuffer
			sig := make(chan os.Signal, 2)
			res := make(chan int, 1)
			go func() {
				res <- runWithDeadline(context.Background(), sig, forcedExit{Grace: interruptGrace}, &stderr, func(ctx context.Context) int {
					defer close(fnDone)
					err := writeFileAtomic(ctx, out, func(w io.Writer) error {
						close(stalled)
						return read()
					})
					return report(ctx, &stderr, err)
				})
			}()
			<-stalled
			if ents, _ := os.ReadDir(dir); len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), ".out.tsv.tmp") {
				t.Fatalf("before the signal the directory holds %v, want the temporary file", ents)
			}
			sent := time.Now()
			sig <- s
			var code int
			select {
			case code = <-res:
			case <-time.After(interruptGrace + 5*time.Second):
				t.Fatalf("runWithDeadline still running %v after %v", interruptGrace+5*time.Second, s)
			}
			took := time.Since(sent)
			t.Logf("returned %d after %v", code, took.Round(time.Millisecond))
			if code != 130 || stderr.String() != "mrrun: interrupted\n" {
				t.Errorf("runWithDeadline = %d, stderr %q; want 130 and \"mrrun: interrupted\"", code, stderr.String())
			}
			if took < interruptGrace || took > interruptGrace+500*time.Millisecond {
				t.Errorf("returned %v after %v; want %v (+ at most 500 ms)", took, s, interruptGrace)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("left behind: %v", ents)
			}
			select {
			case <-fnDone:
				t.Errorf("the stalled read returned by itself")
			default:
			}
			release() // in mrrun the process has exited by now
			<-fnDone
		})
	}

	// A run that stops in time exits as it says, once; the forced-exit
	// functions do not run.
	t.Run("stops", func(t *testing.T) {
		ran := false
		var stderr lockedBuffer
		sig := make(chan os.Signal, 2)
		sig <- syscall.SIGINT
		code := runWithDeadline(context.Background(), sig, forcedExit{Grace: interruptGrace}, &stderr, func(ctx context.Context) int {
			defer atForcedExit(ctx, func() { ran = true })()
			<-ctx.Done()
			time.Sleep(100 * time.Millisecond) // some cleaning up
			return report(ctx, &stderr, ctx.Err())
		})
		if code != 130 || stderr.String() != "mrrun: interrupted\n" || ran {
			t.Errorf("runWithDeadline = %d, stderr %q, forced-exit functions run: %v; want 130, one line, no", code, stderr.String(), ran)
		}
	})

	// A second signal exits at once; to a rank (whose launcher passes a
	// terminal's SIGINT on) it does not, and a rank writes no line.
	for _, c := range []struct {
		name     string
		fe       forcedExit
		min, max time.Duration
		stderr   string
	}{
		{"second signal", forcedExit{Grace: 10 * time.Second}, 0, 500 * time.Millisecond, "mrrun: interrupted\n"},
		{"rank", forcedExit{Grace: rankInterruptGrace, Rank: true}, rankInterruptGrace, rankInterruptGrace + 500*time.Millisecond, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			read, release := stalledRead(t)
			fnDone := make(chan struct{})
			var stderr lockedBuffer
			sig := make(chan os.Signal, 2)
			sig <- syscall.SIGINT
			sig <- syscall.SIGINT
			t0 := time.Now()
			code := runWithDeadline(context.Background(), sig, c.fe, &stderr, func(ctx context.Context) int {
				defer close(fnDone)
				return report(ctx, io.Discard, read())
			})
			took := time.Since(t0)
			if code != 130 || stderr.String() != c.stderr || took < c.min || took > c.max {
				t.Errorf("runWithDeadline = %d after %v, stderr %q; want 130 within [%v, %v], stderr %q", code, took, stderr.String(), c.min, c.max, c.stderr)
			}
			release()
			<-fnDone
		})
	}

	// Without a grace (gen, bench, exec), mrrun waits for the command
	// whatever the signals.
	t.Run("no grace", func(t *testing.T) {
		sig := make(chan os.Signal, 2)
		sig <- syscall.SIGINT
		sig <- syscall.SIGTERM
		code := runWithDeadline(context.Background(), sig, forcedExit{}, io.Discard, func(ctx context.Context) int {
			<-ctx.Done()
			time.Sleep(300 * time.Millisecond)
			return 7
		})
		if code != 7 {
			t.Errorf("runWithDeadline = %d, want the command's 7", code)
		}
	})
}

// TestForcedExitFor checks which commands have a deadline.
func TestForcedExitFor(t *testing.T) {
	if forcedExitFor(nil).Rank {
		t.Skip("the test runs as a rank")
	}
	for _, c := range []struct {
		args []string
		want forcedExit
	}{
		{[]string{"wordcount", "in"}, forcedExit{Grace: interruptGrace}},
		{[]string{"-np", "2", "gen"}, forcedExit{Grace: interruptGrace}}, // a run (of an app called gen)
		{nil, forcedExit{Grace: interruptGrace}},
		{[]string{"gen", "wordcount", "out"}, forcedExit{}},
		{[]string{"bench"}, forcedExit{}},
		{[]string{"exec", "-np", "2", "--", "true"}, forcedExit{}},
	} {
		if got := forcedExitFor(c.args); got != c.want {
			t.Errorf("forcedExitFor(%q) = %+v; want %+v", c.args, got, c.want)
		}
	}
}

// blockedIn reports whether a thread of process pid is in system call nr
// (/proc/PID/task/TID/syscall starts with the call's number).
func blockedIn(pid int, nr uintptr) bool {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/syscall", pid, task.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 && f[0] == strconv.FormatUint(uint64(nr), 10) {
			return true
		}
	}
	return false
}

var (
	stallOnce sync.Once
	stallBin  string
	stallErr  error
)

// stallMrrun returns an mrrun binary built with the tag mrrun_stallhook:
// every rank of its jobs blocks in read(2) on a pipe no one writes, deaf
// to its context (stallhook.go).
func stallMrrun(t *testing.T) string {
	t.Helper()
	stallOnce.Do(func() {
		stallBin = filepath.Join(filepath.Dir(binPath), "mrrun-stall")
		out, err := exec.Command("go", "build", "-tags", "mrrun_stallhook", "-o", stallBin, ".").CombinedOutput()
		if err != nil {
			stallErr = fmt.Errorf("building mrrun -tags mrrun_stallhook: %v\n%s", err, out)
		}
	})
	if stallErr != nil {
		t.Fatal(stallErr)
	}
	return stallBin
}

// startStalled starts the stalling mrrun (stallMrrun) with args and
// returns once every process named by procs (the launcher's pid gives the
// pids to watch) has a thread blocked in read(2).
func startStalled(t *testing.T, procs func(pid int) []int, args ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(stallMrrun(t), args...)
	stderr := new(lockedBuffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ps := procs(cmd.Process.Pid)
		n := 0
		for _, p := range ps {
			if blockedIn(p, syscall.SYS_READ) {
				n++
			}
		}
		if len(ps) > 0 && n == len(ps) {
			return cmd, stderr
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)); err != nil || strings.Contains(string(b), ") Z ") {
			cmd.Wait()
			t.Fatalf("mrrun exited %v before it blocked (stderr %q)", cmd.ProcessState, stderr.String())
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("mrrun not blocked in read after 30 s (stderr %q)", stderr.String())
		}
	}
}

// TestInterruptStalled: a real mrrun whose ranks are blocked in read(2)
// ends within about a second of SIGINT or SIGTERM with status 130, one
// line "mrrun: interrupted", and no -o file; under --transport shm the
// ranks' processes and the job's segment are gone too.
func TestInterruptStalled(t *testing.T) {
	in := testInput(t, "spamcount")
	self := func(pid int) []int { return []int{pid} }
	ranks := func(pid int) []int {
		if kids := children(pid); len(kids) == 2 {
			return kids
		}
		return nil
	}
	for _, c := range []struct {
		name      string
		procs     func(int) []int
		transport []string
	}{
		{"inproc", self, nil},
		{"shm", ranks, []string{"--transport", "shm"}},
	} {
		for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(c.name+"/"+s.String(), func(t *testing.T) {
				dir := t.TempDir()
				out := filepath.Join(dir, "out.tsv")
				args := append(append([]string{}, c.transport...), "-np", "2", "-q", "-o", out, "spamcount", in)
				cmd, stderr := startStalled(t, c.procs, args...)
				kids := children(cmd.Process.Pid)
				if err := cmd.Process.Signal(s); err != nil {
					t.Fatal(err)
				}
				code, took := waitExit(t, cmd, 10*time.Second)
				t.Logf("mrrun exited %d %v after %v", code, took.Round(time.Millisecond), s)
				if code != 130 || stderr.String() != "mrrun: interrupted\n" {
					t.Errorf("exit %d, stderr %q; want 130 and \"mrrun: interrupted\"", code, stderr.String())
				}
				if took > interruptGrace+time.Second {
					t.Errorf("took %v to stop after %v, want about %v", took, s, interruptGrace)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Errorf("%s holds %v; want nothing", dir, ents)
				}
				if c.transport != nil {
					checkNothingLeft(t, cmd.Process.Pid, kids)
				}
			})
		}
	}
}

// TestShmSecondSignal: a second signal ends the launcher at once; its
// ranks, blocked in read, die with it (they run with SIGKILL as their
// parent-death signal). The job's segment, which the launcher had no time
// to remove, is stale and goes at the next launch (CleanStale).
func TestShmSecondSignal(t *testing.T) {
	cmd, stderr := startStalled(t, func(pid int) []int {
		if kids := children(pid); len(kids) == 2 {
			return kids
		}
		return nil
	}, "--transport", "shm", "-np", "2", "-q", "spamcount", testInput(t, "spamcount"))
	kids := children(cmd.Process.Pid)
	cmd.Process.Signal(os.Interrupt)
	time.Sleep(50 * time.Millisecond) // well within the ranks' own grace
	cmd.Process.Signal(os.Interrupt)
	code, took := waitExit(t, cmd, 10*time.Second)
	t.Logf("mrrun exited %d %v after the second SIGINT", code, took.Round(time.Millisecond))
	if code != 130 || stderr.String() != "mrrun: interrupted\n" || took > 500*time.Millisecond {
		t.Errorf("exit %d after %v, stderr %q; want 130 at once and \"mrrun: interrupted\"", code, took, stderr.String())
	}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		alive := 0
		for _, k := range kids {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", k)); err == nil && !strings.Contains(string(b), ") Z ") {
				alive++
			}
		}
		if alive == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rank processes still running 2 s after their launcher exited", alive)
		}
	}
	if _, err := shm.CleanStale(); err != nil {
		t.Errorf("CleanStale: %v", err)
	}
	if left := shmLeft(cmd.Process.Pid); len(left) > 0 {
		t.Errorf("segments left after CleanStale: %v", left)
	}
}
