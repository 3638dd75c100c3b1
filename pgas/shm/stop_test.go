//go:build linux

package shm_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	"github.com/pgasmr/pgasmr/pgas/shm"
)

func init() { bodies["stoploop"] = stopLoopBody }

// stopLoopBody: the ranks run barriers in a loop until the file arg
// exists (rank 0 looks every few milliseconds and tells the others
// through its segment). Each prints "LOOPING <rank>" once it is in the
// loop; a rank whose barrier fails reports it (see report).
func stopLoopBody(ctx context.Context, tr *shm.Transport, arg string) error {
	return pgas.Run(ctx, config(tr), func(ctx context.Context, r *pgas.Rank) error {
		done, err := pgas.AllAllocArray[int64](ctx, r, 1, 1) // on rank 0
		if err != nil {
			return err
		}
		for i := 0; ; i++ {
			if r.ID() == 0 {
				time.Sleep(5 * time.Millisecond) // the others sleep in the barrier
				if _, err := os.Stat(arg); err == nil {
					if err := done.Put(ctx, 0, 1); err != nil {
						return err
					}
				}
			}
			if err := r.Barrier(ctx); err != nil {
				report(r.ID(), err, time.Time{})
				return err
			}
			if i == 0 {
				fmt.Printf("LOOPING %d\n", r.ID())
			}
			v, err := done.Get(ctx, 0)
			if err != nil {
				report(r.ID(), err, time.Time{})
				return err
			}
			// Nobody reads the flag of the next round before all have
			// read this one's.
			if err := r.Barrier(ctx); err != nil {
				report(r.ID(), err, time.Time{})
				return err
			}
			if v == 1 {
				return nil
			}
		}
	})
}

// stopJob is a job of stopLoopBody ranks that Launch runs in the
// background.
type stopJob struct {
	job, endFile string
	pids         []int
	looping      chan string // the ranks' LOOPING lines

	stdout  strings.Builder // all of the ranks' stdout, once outDone is closed
	outDone chan struct{}
	stderr  bytes.Buffer // used if the options have no Stderr; read after done

	done  chan struct{}
	err   error     // what Launch returned, once done is closed
	ended time.Time // when it returned
}

// startStopJob launches ranks stopLoopBody ranks with opts (which may set
// StopGrace, Notice and Stderr) and returns once every rank is in its
// barrier loop. Whatever happens, the job is cancelled and waited for at
// the end of the test.
func startStopJob(t *testing.T, ranks int, opts shm.LaunchOptions) *stopJob {
	t.Helper()
	jobSeq++
	j := &stopJob{
		job:     fmt.Sprintf("t%d-stop-%d", jobSeq, ranks),
		endFile: filepath.Join(t.TempDir(), "end"),
		looping: make(chan string, ranks),
		outDone: make(chan struct{}),
		done:    make(chan struct{}),
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan [2]int, ranks)
	opts.Ranks = ranks
	opts.Argv = []string{os.Args[0], "-test.run=^$"}
	opts.Env = rankEnv("stoploop", j.endFile)
	opts.Stdout = pw
	if opts.Stderr == nil {
		opts.Stderr = &j.stderr
	}
	opts.JobID = j.job
	opts.SegmentBytes = 1 << 20
	opts.Started = func(rank, pid int) { started <- [2]int{rank, pid} }
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(j.outDone)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			j.stdout.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "LOOPING ") {
				j.looping <- sc.Text()
			}
		}
		pr.Close()
	}()
	go func() {
		defer close(j.done)
		j.err = shm.Launch(ctx, opts)
		j.ended = time.Now()
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-j.done:
		case <-time.After(time.Minute):
			t.Errorf("Launch still running a minute after its context was cancelled")
			return
		}
		checkClean(t, j.job, j.pids)
	})

	j.pids = make([]int, ranks)
	timeout := time.After(time.Minute)
	for range ranks {
		select {
		case p := <-started:
			j.pids[p[0]] = p[1]
		case <-j.done:
			t.Fatalf("Launch = %v before starting %d ranks", j.err, ranks)
		case <-timeout:
			t.Fatalf("%d ranks not started within a minute", ranks)
		}
	}
	for range ranks {
		select {
		case <-j.looping:
		case <-j.done:
			t.Fatalf("Launch = %v before every rank was in its loop\nstderr:\n%s", j.err, j.stderr.String())
		case <-timeout:
			t.Fatal("the ranks were not all in their loop within a minute")
		}
	}
	return j
}

// wait waits at most limit for Launch to return, and then for the ranks'
// stdout.
func (j *stopJob) wait(t *testing.T, limit time.Duration) launched {
	t.Helper()
	select {
	case <-j.done:
	case <-time.After(limit):
		t.Fatalf("Launch still running after %v", limit)
	}
	<-j.outDone
	return launched{err: j.err, stdout: j.stdout.String(), stderr: j.stderr.String(), pids: j.pids, job: j.job}
}

// TestStoppedRank: a rank stopped (SIGSTOP) while the others wait for it
// in a barrier is reported within 5 s, naming it and its pid; when it is
// not continued within StopGrace, the job fails as if it had died: the
// others' barriers fail naming it, Launch returns an error wrapping a
// RankFailedError whose ExitError says "rank N (pid P) stopped", and no
// process is left.
func TestStoppedRank(t *testing.T) {
	const ranks, victim, grace = 3, 1, time.Second
	type notice struct {
		at  time.Time
		msg string
	}
	notices := make(chan notice, 16)
	j := startStopJob(t, ranks, shm.LaunchOptions{
		StopGrace: grace,
		Notice: func(msg string) {
			select {
			case notices <- notice{time.Now(), msg}:
			default:
			}
		},
	})
	pid := j.pids[victim]
	stopped := time.Now()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-notices:
		d := n.at.Sub(stopped)
		t.Logf("notice %v after the stop: %q", d.Round(time.Millisecond), n.msg)
		want := fmt.Sprintf("rank %d (pid %d) is stopped; the job fails if it stays stopped for %v", victim, pid, grace)
		if !strings.Contains(n.msg, want) {
			t.Errorf("notice %q; want it to say %q", n.msg, want)
		}
		if d > 10*time.Second {
			t.Errorf("notice %v after the stop; want it within 5 s", d)
		}
	case <-j.done:
		t.Fatalf("Launch = %v with no notice of the stop", j.err)
	case <-time.After(time.Minute):
		t.Fatal("no notice of the stop within a minute")
	}

	res := j.wait(t, time.Minute)
	took := j.ended.Sub(stopped)
	t.Logf("Launch returned %v after the stop: %v", took.Round(time.Millisecond), res.err)
	ee := wantRankFailed(t, res, victim)
	want := fmt.Sprintf("rank %d (pid %d) stopped", victim, pid)
	if !ee.Stopped || ee.PID != pid || !strings.Contains(ee.Error(), want) || !strings.Contains(res.err.Error(), want) {
		t.Errorf("ExitError = %+v, Launch = %q; want Stopped and the text %q", ee, res.err, want)
	}
	var rf *pgas.RankFailedError
	if !errors.As(res.err, &rf) || rf.Cause != error(ee) {
		t.Errorf("Launch = %v; want a RankFailedError whose Cause is the ExitError", res.err)
	}
	if took > grace+15*time.Second {
		t.Errorf("Launch returned %v after the stop; want about StopGrace (%v)", took, grace)
	}
	checkSurvivors(t, res, ranks, victim, false)
	if len(notices) > 0 {
		t.Errorf("%d more notices; want one", len(notices))
	}
}

// TestStoppedRankContinued: a rank stopped and continued is reported
// twice, on Stderr by default, and the job then ends normally. With a
// negative StopGrace the launcher would wait for ever.
func TestStoppedRankContinued(t *testing.T) {
	const ranks, victim = 3, 2
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	notices := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "shm: ") {
				notices <- sc.Text()
			}
		}
	}()
	j := startStopJob(t, ranks, shm.LaunchOptions{StopGrace: -1, Stderr: pw})
	pid := j.pids[victim]
	next := func(what, want string) {
		t.Helper()
		start := time.Now()
		select {
		case n := <-notices:
			d := time.Since(start)
			t.Logf("%s: notice after %v: %q", what, d.Round(time.Millisecond), n)
			if n != want {
				t.Errorf("%s: notice %q; want %q", what, n, want)
			}
			if d > 10*time.Second {
				t.Errorf("%s: notice after %v; want it within 5 s", what, d)
			}
		case <-j.done:
			t.Fatalf("%s: Launch = %v with no notice", what, j.err)
		case <-time.After(time.Minute):
			t.Fatalf("%s: no notice within a minute", what)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	next("stop", fmt.Sprintf("shm: rank %d (pid %d) is stopped; the job waits for it (kill -CONT %d continues it)", victim, pid, pid))
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	next("continue", fmt.Sprintf("shm: rank %d (pid %d) was continued; the job goes on", victim, pid))
	if err := os.WriteFile(j.endFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res := j.wait(t, time.Minute)
	pw.Close()
	if res.err != nil {
		t.Fatalf("Launch = %v; want success", res.err)
	}
	if ok := ranktest.Lines(res.stdout, "BODYOK "); len(ok) != ranks {
		t.Errorf("%d of %d ranks ran their body to the end\nstdout:\n%s", len(ok), ranks, res.stdout)
	}
}
