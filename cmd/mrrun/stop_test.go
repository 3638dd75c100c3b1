package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/apps/wordcount"
	"github.com/pgasmr/pgasmr/pgas/shm"
)

// startStopped starts mrrun with args, which launches ranks rank
// processes, stops the one of rank victim with SIGSTOP as soon as every
// rank runs, and returns the launcher, its stderr, the rank processes and
// the stopped one's pid and the time of the stop.
func startStopped(t *testing.T, ranks, victim int, args ...string) (cmd *exec.Cmd, errb *bytes.Buffer, kids []int, pid int, at time.Time) {
	t.Helper()
	cmd = exec.Command(binPath, args...)
	errb = new(bytes.Buffer)
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// (A child's environment names its rank once it has exec'd.)
	for deadline := time.Now().Add(20 * time.Second); len(kids) < ranks || pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("found rank processes %v, none of rank %d; want %d", kids, victim, ranks)
		}
		kids = children(cmd.Process.Pid)
		for _, k := range kids {
			if rankOfPID(k) == victim {
				pid = k
			}
		}
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal(err)
	}
	at = time.Now()
	return cmd, errb, kids, pid, at
}

// rankOfPID is the rank a launcher gave process pid, or -1.
func rankOfPID(pid int) int {
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return -1
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(shm.EnvRank+"=")); ok {
			if r, err := strconv.Atoi(string(v)); err == nil {
				return r
			}
		}
	}
	return -1
}

// checkStopLines checks mrrun's stderr after it gave up on rank victim
// (pid), stopped for longer than grace: the notice of the stop, then the
// error line, and nothing else.
func checkStopLines(t *testing.T, stderr string, victim, pid int, grace, errPrefix string) {
	t.Helper()
	want := []string{
		fmt.Sprintf("mrrun: rank %d (pid %d) is stopped; the job fails if it stays stopped for %s (kill -CONT %d continues it)", victim, pid, grace, pid),
		fmt.Sprintf("mrrun: %srank %d (pid %d) stopped and not continued within %s", errPrefix, victim, pid, grace),
	}
	if got := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, strings.Join(want, "\n"))
	}
}

// TestShmStopped: a rank process of an shm job stopped with SIGSTOP in
// the middle of its map is reported, and fails the job --stop-grace
// later: exit 1 within a few seconds, with a line naming the rank and its
// pid, and no process or segment left.
func TestShmStopped(t *testing.T) {
	const ranks, victim = 3, 1
	size := int64(16 << 20)
	if !raceEnabled {
		size = 48 << 20
	}
	in := t.TempDir()
	if err := wordcount.Generate(in, size, 8, 3); err != nil {
		t.Fatal(err)
	}
	cmd, errb, kids, pid, stopped := startStopped(t, ranks, victim,
		"--transport", "shm", "-np", strconv.Itoa(ranks), "--stop-grace", "1s", "-q", "wordcount", in)
	code, _ := waitExit(t, cmd, time.Minute)
	took := time.Since(stopped)
	t.Logf("mrrun exited %d %v after the stop: %q", code, took.Round(time.Millisecond), errb.String())
	if code != 1 || took > 10*time.Second {
		t.Errorf("exit %d %v after the stop, want 1 within a few seconds", code, took)
	}
	checkStopLines(t, errb.String(), victim, pid, "1s", "")
	checkNothingLeft(t, cmd.Process.Pid, kids)
}

// TestExecStopped: the same under mrrun exec, whose ranks need not be
// pgas programs.
func TestExecStopped(t *testing.T) {
	const ranks, victim = 2, 0
	cmd, errb, kids, pid, stopped := startStopped(t, ranks, victim,
		"exec", "-np", strconv.Itoa(ranks), "--stop-grace", "500ms", "--", "sleep", "60")
	code, _ := waitExit(t, cmd, time.Minute)
	took := time.Since(stopped)
	t.Logf("mrrun exec exited %d %v after the stop: %q", code, took.Round(time.Millisecond), errb.String())
	// The other rank, sleeping, is killed shm.DefaultKillGrace later.
	if code != 1 || took > shm.DefaultKillGrace+10*time.Second {
		t.Errorf("exit %d %v after the stop, want 1 within a few seconds", code, took)
	}
	checkStopLines(t, errb.String(), victim, pid, "500ms", "sleep: ")
	checkNothingLeft(t, cmd.Process.Pid, kids)
}

// TestStopGraceUsage: --stop-grace 0 means nothing sensible, and
// --stop-grace without --transport shm nothing at all.
func TestStopGraceUsage(t *testing.T) {
	in := testInput(t, "wordcount")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--transport", "shm", "--stop-grace", "0", "wordcount", in}, "--stop-grace 0"},
		{[]string{"--stop-grace", "5s", "wordcount", in}, "--stop-grace applies to --transport shm only"},
		{[]string{"--transport", "shm", "--stop-grace", "soon", "wordcount", in}, "stop-grace"},
		{[]string{"exec", "--stop-grace", "0", "--", "true"}, "--stop-grace 0"},
	} {
		r := mrrun(t, c.args...).want(t, 2)
		checkOneLine(t, c.args, r.stderr, c.want)
	}
	mrrun(t, "exec", "-np", "2", "--stop-grace", "-1s", "--", "true").want(t, 0)
}
