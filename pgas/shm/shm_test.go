//go:build linux

package shm_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	"github.com/pgasmr/pgasmr/pgas/shm"
)

func TestConformance(t *testing.T) {
	for _, ranks := range []int{2, 4} {
		t.Run(fmt.Sprintf("ranks=%d", ranks), func(t *testing.T) {
			res := launch(t, ranks, "conformance", "", 4<<20)
			if res.err != nil {
				t.Fatalf("pgastest.RunAll on %d shm ranks: %v\nstderr:\n%s", ranks, res.err, res.stderr)
			}
		})
	}
}

// TestConformanceCache: the suites with the remote-reference cache on,
// one geometry that evicts on almost every access and MuPC's defaults.
// Rank processes share no Go memory, so this also runs under -race.
func TestConformanceCache(t *testing.T) {
	for _, tc := range []struct {
		ranks int
		cache string
	}{
		{2, "lines=2,line=64,victim=1"},
		{4, "on"},
	} {
		t.Run(fmt.Sprintf("ranks=%d/cache=%s", tc.ranks, tc.cache), func(t *testing.T) {
			for _, body := range []string{"conformance", "colltest"} {
				res := launch(t, tc.ranks, body, tc.cache, 8<<20)
				if res.err != nil {
					t.Fatalf("%s on %d shm ranks with cache %s: %v\nstderr:\n%s", body, tc.ranks, tc.cache, res.err, res.stderr)
				}
			}
		})
	}
}

func TestCollectives(t *testing.T) {
	for _, ranks := range []int{2, 4} {
		t.Run(fmt.Sprintf("ranks=%d", ranks), func(t *testing.T) {
			res := launch(t, ranks, "colltest", "", 8<<20)
			if res.err != nil {
				t.Fatalf("colltest.RunAll on %d shm ranks: %v\nstderr:\n%s", ranks, res.err, res.stderr)
			}
		})
	}
}

// TestJobsInSequence: one launch runs many pgas jobs one after another;
// each starts with zeroed segments.
func TestJobsInSequence(t *testing.T) {
	res := launch(t, 2, "jobs", "", 1<<20)
	if res.err != nil {
		t.Fatalf("%v\nstderr:\n%s", res.err, res.stderr)
	}
	if got := ranktest.Lines(res.stdout, "JOBS "); len(got) != 2 {
		t.Errorf("stdout %q; want a JOBS line from each rank", res.stdout)
	}
}

// TestDistinctProcesses: the ranks are distinct processes, children of
// the launcher but not the launcher.
func TestDistinctProcesses(t *testing.T) {
	for _, ranks := range []int{2, 4} {
		t.Run(fmt.Sprintf("ranks=%d", ranks), func(t *testing.T) {
			res := launch(t, ranks, "pids", "", 1<<20)
			if res.err != nil {
				t.Fatalf("%v\nstderr:\n%s", res.err, res.stderr)
			}
			got := ranktest.Lines(res.stdout, "PIDS ")
			want := fmt.Sprint(res.pids)
			if len(got) != 1 || got[0] != strings.ReplaceAll(want, " ", " ") {
				t.Errorf("rank 0 saw pids %q; the launcher started %v", got, want)
			}
		})
	}
}

// TestRankError: a rank that returns an error makes Launch fail naming it,
// with the error's text, and every other rank fails naming it too.
func TestRankError(t *testing.T) {
	const ranks, bad = 4, 2
	res := launch(t, ranks, "fail", strconv.Itoa(bad), 1<<20)
	ee := wantRankFailed(t, res, bad)
	if ee.Code != 1 || !strings.Contains(ee.Reason, "boom") {
		t.Errorf("ExitError = %+v; want exit code 1 and the reason boom", ee)
	}
	checkSurvivors(t, res, ranks, bad, false)
}

// TestFailureCancelsBusyRanks: ranks busy outside the transport (waiting
// on their context) are cancelled as soon as another process's rank fails,
// long before the launcher's kill grace period.
func TestFailureCancelsBusyRanks(t *testing.T) {
	const ranks, bad = 3, 1
	res := launch(t, ranks, "busy", strconv.Itoa(bad), 1<<20)
	ee := wantRankFailed(t, res, bad)
	if !strings.Contains(ee.Reason, "boom") {
		t.Errorf("ExitError = %+v; want the reason boom", ee)
	}
	if c := ranktest.Lines(res.stdout, "CANCELLED "); len(c) != ranks-1 {
		t.Errorf("%d ranks saw their context cancelled, want %d\nstdout:\n%s", len(c), ranks-1, res.stdout)
	}
	if res.took > shm.DefaultKillGrace {
		t.Errorf("Launch took %v: the busy ranks were killed, not cancelled", res.took)
	}
	t.Logf("Launch returned after %v", res.took)
}

// checkSurvivors checks the SAW lines: every rank but failed saw the
// failure of rank failed (within 5 s of it, if timed).
func checkSurvivors(t *testing.T, res launched, ranks, failed int, timed bool) {
	t.Helper()
	if bad := ranktest.Lines(res.stdout, "BAD "); len(bad) > 0 {
		t.Errorf("ranks failed without naming rank %d: %q", failed, bad)
	}
	saw := ranktest.Lines(res.stdout, "SAW ")
	if len(saw) != ranks-1 {
		t.Errorf("%d ranks reported the failure; want %d\nstdout:\n%s\nstderr:\n%s", len(saw), ranks-1, res.stdout, res.stderr)
	}
	for _, l := range saw {
		var me, who int
		var ms float64
		if _, err := fmt.Sscanf(l, "%d %d %g", &me, &who, &ms); err != nil {
			t.Fatalf("bad line %q: %v", l, err)
		}
		if who != failed || me == failed {
			t.Errorf("rank %d saw the failure of rank %d; want rank %d", me, who, failed)
		}
		if timed && (ms < 0 || ms > 5000) {
			t.Errorf("rank %d saw the failure %.1f ms after it; want at most 5 s", me, ms)
		}
		if timed {
			t.Logf("rank %d saw the failure of rank %d after %.1f ms", me, who, ms)
		}
	}
}

// TestKill: a rank killed with SIGKILL while the others wait in a barrier
// or read from its segment makes every other rank fail with an error
// naming it within 5 s, and Launch return an error naming it; no process
// and no segment file is left.
func TestKill(t *testing.T) {
	for _, where := range []string{"barrier", "gets"} {
		for _, ranks := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/ranks=%d", where, ranks), func(t *testing.T) {
				victim := ranks - 1
				arg := fmt.Sprintf("%d,%d", victim, map[string]int{"barrier": 0, "gets": 1}[where])
				res := launch(t, ranks, "kill", arg, 1<<20)
				end := time.Now()
				ee := wantRankFailed(t, res, victim)
				if ee.Code != -1 || !strings.Contains(ee.Status, "killed") {
					t.Errorf("ExitError = %+v; want death by SIGKILL", ee)
				}
				checkSurvivors(t, res, ranks, victim, true)
				at := ranktest.Lines(res.stdout, "KILLAT ")
				if len(at) != 1 {
					t.Fatalf("no KILLAT line in %q", res.stdout)
				}
				ns, _ := strconv.ParseInt(at[0], 10, 64)
				d := end.Sub(time.Unix(0, ns))
				t.Logf("Launch returned %v after the kill: %v", d, res.err)
				if d > 5*time.Second {
					t.Errorf("Launch returned %v after the kill; want at most 5 s", d)
				}
			})
		}
	}
}

// TestExitZero: a rank that exits with status 0 in the middle of a job,
// or before a job the others start, fails the ranks that wait for it.
func TestExitZero(t *testing.T) {
	const ranks, quitter = 3, 1
	for _, tc := range []struct{ name, arg, reason string }{
		{"mid-job", "1,0", "left in the middle of a job"},
		{"between-jobs", "1,1", "exited before barrier phase"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := launch(t, ranks, "exit0", tc.arg, 1<<20)
			ee := wantRankFailed(t, res, quitter)
			if ee.Code != 0 || !strings.Contains(ee.Reason, tc.reason) {
				t.Errorf("ExitError = %+v; want exit code 0 and the reason %q", ee, tc.reason)
			}
			checkSurvivors(t, res, ranks, quitter, false)
		})
	}
}

// TestSyncTimeout: a rank that never reaches a barrier makes the others
// fail with ErrTimeout after SyncTimeout, naming it.
func TestSyncTimeout(t *testing.T) {
	const ranks, absent = 3, 2
	res := launch(t, ranks, "timeout", strconv.Itoa(absent), 1<<20)
	if res.err == nil {
		t.Fatal("Launch succeeded")
	}
	got := ranktest.Lines(res.stdout, "TIMEOUT ")
	if len(got) != ranks-1 {
		t.Fatalf("stdout %q; want a TIMEOUT line from %d ranks", res.stdout, ranks-1)
	}
	named := false
	for _, l := range got {
		if !strings.Contains(l, " true ") {
			t.Errorf("TIMEOUT %s: want an error wrapping ErrTimeout", l)
		}
		named = named || strings.Contains(l, fmt.Sprintf("[%d]", absent))
	}
	if !named {
		t.Errorf("no rank named the absent rank %d: %q", absent, got)
	}
}

// TestCancel: cancelling Launch's context stops a job whose ranks wait;
// Launch returns context.Canceled promptly and leaves nothing behind.
func TestCancel(t *testing.T) {
	const ranks = 3
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	job := "cancel"
	pids := make([]int, ranks)
	errc := make(chan error, 1)
	var stderr bytes.Buffer
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		errc <- shm.Launch(ctx, shm.LaunchOptions{
			Ranks: ranks, Argv: []string{os.Args[0], "-test.run=^$"}, Env: rankEnv("hang", ""),
			Stdout: pw, Stderr: &stderr, JobID: job, SegmentBytes: 1 << 20,
			Started: func(rank, pid int) { pids[rank] = pid },
		})
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var ended []string
	for waiting := 0; waiting < ranks && sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "WAITING ") {
			waiting++
		}
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	cancel()
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), "ENDED "); ok {
			ended = append(ended, l)
		}
	}
	err = <-errc
	d := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Launch = %v; want context.Canceled", err)
	}
	if d > 5*time.Second {
		t.Errorf("Launch returned %v after the cancellation", d)
	}
	t.Logf("Launch returned %v after the cancellation; ranks: %q\n%s", d, ended, stderr.String())
	if len(ended) != ranks-1 {
		t.Errorf("%d ranks reported the end of their barrier; want %d", len(ended), ranks-1)
	}
	checkClean(t, job, pids)
}

// TestLauncherKilled: when the launcher dies by SIGKILL, its ranks die
// too, and CleanStale removes the segment file it left.
func TestLauncherKilled(t *testing.T) {
	job := fmt.Sprintf("orphan%d", os.Getpid())
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envLauncher+"="+job)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var pids []int
	for len(pids) < 2 && sc.Scan() {
		var rank, pid int
		if _, err := fmt.Sscanf(sc.Text(), "STARTED %d %d", &rank, &pid); err == nil {
			pids = append(pids, pid)
		}
	}
	if len(pids) < 2 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the launcher started %v", pids)
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	killed := time.Now()
	for len(ranktest.JobProcs(shm.EnvJob, job)) > 0 {
		if time.Since(killed) > 5*time.Second {
			t.Fatalf("ranks %v of job %s still run 5 s after their launcher was killed", ranktest.JobProcs(shm.EnvJob, job), job)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("ranks gone %v after the launcher", time.Since(killed))
	files := jobFiles(job)
	if len(files) != 1 {
		t.Fatalf("segment files %v; want the one the killed launcher left", files)
	}
	removed, err := shm.CleanStale()
	if err != nil {
		t.Error(err)
	}
	if !contains(removed, files[0]) {
		t.Errorf("CleanStale removed %v; want %s among them", removed, files[0])
	}
	if files := jobFiles(job); len(files) > 0 {
		t.Errorf("segment files %v remain after CleanStale", files)
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// TestCleanStale: a file named after a dead process is removed, one named
// after a live process is kept, other files are not touched.
func TestCleanStale(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	deadFile := filepath.Join(shm.Dir, fmt.Sprintf("%s%d-stale", shm.Prefix, dead.Process.Pid))
	liveFile := filepath.Join(shm.Dir, fmt.Sprintf("%s%d-live", shm.Prefix, os.Getpid()))
	otherFile := filepath.Join(shm.Dir, "pgasmr-other-1-x")
	for _, f := range []string{deadFile, liveFile, otherFile} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(f)
	}
	removed, err := shm.CleanStale()
	if err != nil {
		t.Fatal(err)
	}
	if !contains(removed, deadFile) {
		t.Errorf("CleanStale removed %v; want %s among them", removed, deadFile)
	}
	for _, f := range []string{liveFile, otherFile} {
		if contains(removed, f) {
			t.Errorf("CleanStale removed %s", f)
		}
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestFromEnvNotLaunched(t *testing.T) {
	t.Setenv(shm.EnvSegment, "")
	tr, ok, err := shm.FromEnv()
	if tr != nil || ok || err != nil {
		t.Errorf("FromEnv without the variables = %v, %v, %v; want nil, false, nil", tr, ok, err)
	}
	t.Setenv(shm.EnvSegment, "/dev/shm/none")
	t.Setenv(shm.EnvRank, "x")
	if _, ok, err := shm.FromEnv(); !ok || err == nil {
		t.Errorf("FromEnv with a bad rank = %v, %v; want true and an error", ok, err)
	}
}

func TestLaunchOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o    shm.LaunchOptions
		want []string
	}{
		{shm.LaunchOptions{Ranks: 2, Argv: []string{"x"}}, nil},
		{shm.LaunchOptions{Ranks: 0, Argv: []string{"x"}}, []string{"Ranks = 0"}},
		{shm.LaunchOptions{Ranks: 2}, []string{"Argv is empty"}},
		{shm.LaunchOptions{Ranks: 2, Argv: []string{"x"}, SegmentBytes: 12}, []string{"SegmentBytes = 12"}},
		{shm.LaunchOptions{Ranks: 2, Argv: []string{"x"}, JobID: "a/b"}, []string{"job id"}},
		{shm.LaunchOptions{Ranks: -1, Argv: []string{""}, KillGrace: -1}, []string{"Ranks = -1", "Argv", "KillGrace"}},
	} {
		err := tc.o.Validate()
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%+v.Validate() = %v", tc.o, err)
			}
			continue
		}
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v.Validate() = %v; want it to mention %q", tc.o, err, w)
			}
		}
		if err := shm.Launch(t.Context(), tc.o); err == nil {
			t.Errorf("Launch(%+v) succeeded", tc.o)
		}
	}
}

// TestStartFailure: a program that does not exist fails Launch, naming
// rank 0, and leaves no file.
func TestStartFailure(t *testing.T) {
	err := shm.Launch(t.Context(), shm.LaunchOptions{Ranks: 2, Argv: []string{"/nonexistent/prog"}, JobID: "nostart"})
	var rf *pgas.RankFailedError
	if !errors.As(err, &rf) || rf.Rank != 0 {
		t.Errorf("Launch = %v; want rank 0 named", err)
	}
	checkClean(t, "nostart", nil)
}

// TestBadSegmentSize: a rank that asks for larger segments than the
// launcher reserved gets an error saying so, and the job fails.
func TestBadSegmentSize(t *testing.T) {
	res := launch(t, 2, "toobig", "", 1<<20)
	if res.err == nil || !strings.Contains(res.err.Error(), "the launcher reserved 1048576 per rank") {
		t.Errorf("Launch = %v\nstderr:\n%s\nwant an error about the segment size", res.err, res.stderr)
	}
}

// TestFailedChannel: an endpoint's Failed channel closes when another
// rank fails, though this rank makes no transport call.
func TestFailedChannel(t *testing.T) {
	res := launch(t, 2, "failedchan", "", 1<<20)
	wantRankFailed(t, res, 1)
	if got := ranktest.Lines(res.stdout, "FAILEDCHAN "); len(got) != 1 || got[0] != "rank 1 failed: boom" {
		t.Errorf("rank 0 reported %q; want [\"rank 1 failed: boom\"]\nstderr:\n%s", got, res.stderr)
	}
}

// TestChainBroadcast: private broadcasts of 1 MiB go along the chain
// between processes (their rings and counters in other processes'
// segments) and deliver every element, at 2 and 3 ranks.
func TestChainBroadcast(t *testing.T) {
	for _, ranks := range []int{2, 3} {
		t.Run(fmt.Sprintf("ranks=%d", ranks), func(t *testing.T) {
			res := launch(t, ranks, "chain", "", 16<<20)
			if res.err != nil {
				t.Fatalf("%v\nstderr:\n%s", res.err, res.stderr)
			}
			got := ranktest.Lines(res.stdout, "CHAIN ")
			t.Logf("rank 0's remote atomics: %v (launch %v)", got, res.took.Round(time.Millisecond))
			if len(got) != 1 || got[0] == "0" {
				t.Fatalf("CHAIN lines %q; want one with the chain's remote atomics", got)
			}
		})
	}
}
