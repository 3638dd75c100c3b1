package shm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pgasmr/pgasmr/pgas/transport"
	"golang.org/x/sys/unix"
)

// Launch runs a job of opts.Ranks processes on this host, each running
// opts.Argv as one rank (the program calls FromEnv and pgas.Run), and
// supervises them until every one has exited.
//
// Launch first removes stale segment files (CleanStale), then creates the
// job's file in /dev/shm with mode 0600 and reserves its pages (fallocate),
// starts the ranks and waits. If /dev/shm has no room for the file, Launch
// starts no rank and returns one line naming /dev/shm, the size the job
// needs and the room there is ("shm: /dev/shm is too full for the job: its
// segments need 32 MiB (2 ranks of 16 MiB), 3.9 MiB is free (df /dev/shm;
// ..."); once the ranks run, nothing that fills /dev/shm can take their
// pages. A rank that exits with a non-zero status or dies by a signal
// fails the job: the others' blocking calls return an error naming it
// within a few tens of milliseconds, and whatever has not exited KillGrace
// later is killed.
// Cancelling ctx fails the job the same way (as "stopped by its
// launcher"), and sends SIGINT to the ranks. A rank whose process stays
// stopped (SIGSTOP, SIGTSTP ...) is reported through opts.Notice within a
// few seconds, and again if it is continued; if it is not continued within
// opts.StopGrace, it fails the job as a dead rank does and is killed at
// once. The ranks are started with
// SIGKILL as their parent-death signal, so that they die with the
// launcher. The file is removed when Launch returns, whatever happened.
//
// Launch returns nil if every rank exited with status 0 and the job did
// not fail; an error wrapping ctx.Err() if ctx was cancelled; otherwise an
// error wrapping a *transport.RankFailedError naming the rank that failed
// first, whose Cause is an *ExitError (with Stopped set for a rank that
// stayed stopped).
func Launch(ctx context.Context, opts LaunchOptions) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	if opts.SegmentBytes == 0 {
		opts.SegmentBytes = DefaultSegmentBytes
	}
	if opts.KillGrace == 0 {
		opts.KillGrace = DefaultKillGrace
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = DefaultStopGrace
	}
	if opts.JobID == "" {
		opts.JobID = strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("shm: job %s: %w", opts.JobID, err)
	}
	CleanStale() // best effort: a file we cannot remove is not ours to worry about
	name := segName(os.Getpid(), opts.JobID)
	path := filepath.Join(Dir, name)
	m, err := create(Dir, name, opts.Ranks, opts.SegmentBytes)
	if err != nil {
		return err
	}
	defer func() {
		m.unmap()
		os.Remove(path)
	}()
	l := &launch{opts: opts, m: m, path: path, exits: make(chan exit, opts.Ranks)}
	return l.run(ctx)
}

type exit struct {
	rank  int
	state *os.ProcessState
	err   error
}

type launch struct {
	opts  LaunchOptions
	m     *mapping
	path  string
	cmds  []*exec.Cmd
	exits chan exit
}

func (l *launch) env(rank int) []string {
	base := l.opts.Env
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base)+5)
	for _, kv := range base {
		if !strings.HasPrefix(kv, "PGASMR_SHM_") {
			env = append(env, kv)
		}
	}
	return append(env,
		EnvRank+"="+strconv.Itoa(rank),
		EnvSize+"="+strconv.Itoa(l.opts.Ranks),
		EnvJob+"="+l.opts.JobID,
		EnvSegment+"="+l.path,
		EnvSegmentBytes+"="+strconv.FormatInt(l.opts.SegmentBytes, 10),
	)
}

// lockedWriter serialises the writes of the ranks' output copiers.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func output(w, def io.Writer, mu *sync.Mutex) io.Writer {
	if w == nil {
		return def
	}
	if _, ok := w.(*os.File); ok {
		return w
	}
	return lockedWriter{mu, w}
}

func (l *launch) run(ctx context.Context) error {
	var mu sync.Mutex
	stdout := output(l.opts.Stdout, os.Stdout, &mu)
	stderr := output(l.opts.Stderr, os.Stderr, &mu)
	notice := l.opts.Notice
	if notice == nil {
		notice = func(msg string) { io.WriteString(stderr, "shm: "+msg+"\n") }
	}
	running := make(map[int]bool, l.opts.Ranks)
	for r := range l.opts.Ranks {
		cmd := exec.Command(l.opts.Argv[0], l.opts.Argv[1:]...)
		cmd.Env = l.env(r)
		cmd.Dir = l.opts.Dir
		cmd.Stdout, cmd.Stderr = stdout, stderr
		// The ranks die with the launcher. (The signal is sent when the
		// thread that started the child exits; Go does not end its
		// threads while a program runs, except those of goroutines that
		// exit locked to their thread.)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.WaitDelay = time.Second
		if err := cmd.Start(); err != nil {
			err = &ExitError{Rank: r, PID: -1, Status: "did not start: " + err.Error(), Code: -1}
			l.m.claimFailure(1, kindError, fmt.Sprintf("rank %d did not start", r))
			l.killAll(running)
			for range running {
				<-l.exits
			}
			return fmt.Errorf("shm: job %s: %w", l.opts.JobID, &transport.RankFailedError{Rank: r, Cause: err})
		}
		l.cmds = append(l.cmds, cmd)
		running[r] = true
		l.m.rankWord(r, rPID).Store(int64(cmd.Process.Pid))
		if l.opts.Started != nil {
			l.opts.Started(r, cmd.Process.Pid)
		}
		go func() {
			err := cmd.Wait()
			l.exits <- exit{r, cmd.ProcessState, err}
		}()
	}

	exited := make(map[int]*ExitError, l.opts.Ranks)
	stops := make(map[int]*stop)       // ranks seen stopped, not yet continued
	gaveUp := make(map[int]*ExitError) // ranks killed for staying stopped
	var grace <-chan time.Time
	startGrace := func() {
		if grace == nil {
			grace = time.After(l.opts.KillGrace)
		}
	}
	done := ctx.Done()
	// A failure recorded by a rank that has not exited (yet) also starts
	// the grace period; so does a rank stopped for longer than StopGrace.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for len(running) > 0 {
		select {
		case now := <-tick.C:
			if who, _, _ := l.m.failure(); who != 0 {
				startGrace()
			}
			for _, r := range l.checkStops(running, stops, now, notice) {
				ee := &ExitError{Rank: r, PID: l.cmds[r].Process.Pid, Code: -1, Stopped: true,
					Status: fmt.Sprintf("stopped and not continued within %v", l.opts.StopGrace)}
				gaveUp[r] = ee
				l.m.claimFailure(int64(r)+2, kindDied, ee.Error())
				l.cmds[r].Process.Kill() // SIGKILL ends a stopped process too
				startGrace()
			}
		case x := <-l.exits:
			delete(running, x.rank)
			delete(stops, x.rank)
			ee := l.describe(x)
			if g := gaveUp[x.rank]; g != nil {
				ee = g // "signal: killed" is the launcher's doing
			}
			exited[x.rank] = ee
			if ee.Code == 0 && l.m.rankWord(x.rank, rOpen).Load() != 0 {
				// pgas.Run closes its endpoint before it returns: this
				// process left in the middle of a job.
				ee.Reason = "left in the middle of a job (its endpoint was open)"
				l.m.claimFailure(int64(x.rank)+2, kindDied, ee.Error())
				startGrace()
			}
			if ee.Code == 0 {
				l.m.rankWord(x.rank, rState).Store(stateExited)
				futexWakeAll(l.m.word(offCount))
				continue
			}
			l.m.claimFailure(int64(x.rank)+2, kindDied, ee.Error())
			l.m.rankWord(x.rank, rState).Store(stateDead)
			startGrace()
		case <-done:
			done = nil
			l.m.claimFailure(1, kindOf(ctx.Err()), "launcher: "+ctx.Err().Error())
			for r := range running {
				l.cmds[r].Process.Signal(os.Interrupt)
			}
			startGrace()
		case <-grace:
			l.killAll(running)
		}
	}

	who, _, text := l.m.failure()
	switch {
	case who == 0:
		return nil
	case who == 1:
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("shm: job %s: %w", l.opts.JobID, err)
		}
		return fmt.Errorf("shm: job %s: %s", l.opts.JobID, text)
	}
	rank := int(who - 2)
	ee := exited[rank]
	if ee == nil || rank < 0 || rank >= l.opts.Ranks {
		return fmt.Errorf("shm: job %s: bad failure record naming rank %d: %s", l.opts.JobID, rank, text)
	}
	if ee.Reason == "" && text != ee.Error() {
		ee.Reason = text
	}
	err := fmt.Errorf("shm: job %s: %w", l.opts.JobID, &transport.RankFailedError{Rank: rank, Cause: ee})
	if ctx.Err() != nil {
		// A rank failed first, then the launcher was cancelled.
		err = errors.Join(err, ctx.Err())
	}
	return err
}

// stop is what the launcher knows of a rank it saw stop.
type stop struct {
	since   time.Time // when the launcher saw the stop
	noticed bool      // whether the user was told
}

// noticeDelay is how long a rank stays stopped before the launcher says
// so: a rank stopped for a moment (by a debugger, or by the Ctrl-Z that
// also stops the launcher, which sees the stop just before its own) is
// not worth a line.
const noticeDelay = time.Second

// Values of si_code for SIGCHLD (CLD_* in <signal.h>).
const (
	cldStopped   = 5
	cldContinued = 6
)

// checkStops polls every running rank for a stop or a continue, tells the
// user of stops that last and of the continuation of those, and returns
// the ranks stopped for longer than StopGrace, which it forgets.
func (l *launch) checkStops(running map[int]bool, stops map[int]*stop, now time.Time, notice func(string)) []int {
	for r := range running {
		pid := l.cmds[r].Process.Pid
		switch stopEvent(pid) {
		case cldStopped:
			if stops[r] == nil {
				stops[r] = &stop{since: now}
			}
		case cldContinued:
			if s := stops[r]; s != nil && s.noticed {
				notice(fmt.Sprintf("rank %d (pid %d) was continued; the job goes on", r, pid))
			}
			delete(stops, r)
		}
	}
	grace := l.opts.StopGrace
	after := noticeDelay
	if grace >= 0 {
		after = min(after, grace)
	}
	var overdue []int
	for r, s := range stops {
		pid := l.cmds[r].Process.Pid
		if !s.noticed && now.Sub(s.since) >= after {
			s.noticed = true
			then := "the job waits for it"
			if grace >= 0 {
				then = fmt.Sprintf("the job fails if it stays stopped for %v", grace)
			}
			notice(fmt.Sprintf("rank %d (pid %d) is stopped; %s (kill -CONT %d continues it)", r, pid, then, pid))
		}
		if grace >= 0 && now.Sub(s.since) >= grace {
			overdue = append(overdue, r)
			delete(stops, r)
		}
	}
	slices.Sort(overdue)
	return overdue
}

// stopEvent reports the stop (cldStopped) or continuation (cldContinued)
// of child pid since the last call, or 0. It consumes no exit: cmd.Wait
// still gets that. (A pid is polled only until the launcher hears of its
// exit; until then the pid is not reused, or only in the moment between
// cmd.Wait reaping it and the launcher hearing of it.)
func stopEvent(pid int) int32 {
	var info unix.Siginfo // zero: no event, if none is reported
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WCONTINUED|unix.WNOHANG, nil)
	if err != nil || info.Signo != int32(unix.SIGCHLD) {
		return 0
	}
	return info.Code
}

func (l *launch) killAll(running map[int]bool) {
	for r := range running {
		l.cmds[r].Process.Kill()
	}
}

func (l *launch) describe(x exit) *ExitError {
	ee := &ExitError{Rank: x.rank, PID: l.cmds[x.rank].Process.Pid, Code: -1}
	switch {
	case x.state != nil:
		ee.Status = x.state.String()
		ee.Code = x.state.ExitCode()
		if x.state.ExitCode() == 0 && x.err != nil {
			// Exited cleanly, but its output could not be copied.
			ee.Status += " (" + x.err.Error() + ")"
		}
	case x.err != nil:
		ee.Status = x.err.Error()
	}
	return ee
}
