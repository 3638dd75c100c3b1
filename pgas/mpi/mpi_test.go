//go:build mpi || mpich

package mpi_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	"github.com/pgasmr/pgasmr/pgas/mpi"
)

// TestSuites runs pgastest.RunAll and colltest.RunAll on 2 and 4 ranks (4
// oversubscribe a 2-core machine), with MPI's native collectives and
// without, once with every MPI transfer split into 4 KiB chunks, which
// takes the path of transfers too large for one MPI call, and once with
// every MPI call serialised by the transport's mutex, as with a library
// that is not MPI_THREAD_MULTIPLE, and a progress goroutine (which ranks
// on one node do not start by default), and at 2 and 4 ranks over
// OpenMPI's network path (tcpEnv), the closest thing to two nodes one
// host runs.
func TestSuites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ranks  int
		native bool
		env    []string
		cache  string // the cache setting of the jobs (pgas.ParseCacheConfig)
	}{
		{"ranks=2/native", 2, true, nil, ""},
		{"ranks=2/no-native", 2, false, []string{mpi.EnvNative + "=0"}, ""},
		{"ranks=4/native", 4, true, nil, ""},
		{"ranks=4/no-native", 4, false, []string{mpi.EnvNative + "=0"}, ""},
		{"ranks=3/native/chunk=4096", 3, true, []string{mpi.EnvChunkBytes + "=4096"}, ""},
		{"ranks=2/native/serialized/progress", 2, true, []string{mpi.EnvSerialize + "=1", mpi.EnvProgress + "=1ms"}, ""},
		// The network path on one host: no shared memory between the
		// ranks (btl tcp), one-sided operations as messages (osc pt2pt,
		// which refuses MPI_THREAD_MULTIPLE, so serialised).
		{"ranks=2/native/serialized/tcp", 2, true, append(tcpEnv(), mpi.EnvSerialize+"=1"), ""},
		{"ranks=4/no-native/serialized/tcp", 4, false, append(tcpEnv(), mpi.EnvSerialize+"=1", mpi.EnvNative+"=0"), ""},
		// The remote-reference cache on: a geometry that evicts on almost
		// every access, and MuPC's defaults over the network path.
		{"ranks=2/native/cache", 2, true, nil, "lines=2,line=64,victim=1"},
		{"ranks=2/native/serialized/cache/tcp", 2, true, append(tcpEnv(), mpi.EnvSerialize+"=1"), "on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasSuffix(tc.name, "/tcp") && mpi.Flavour != "OpenMPI" {
				t.Skipf("the TCP cases set OpenMPI's components; this is %s", mpi.Flavour)
			}
			res := launch(t, tc.ranks, "suites", tc.cache, tc.env...)
			if res.Err != nil {
				t.Fatalf("mpirun: %v\nstdout:\n%s\nstderr:\n%s", res.Err, res.Stdout, res.Stderr)
			}
			got := ranktest.Lines(res.Stdout, "SUITES ")
			if len(got) != 1 {
				t.Fatalf("stdout %q; want one SUITES line", res.Stdout)
			}
			t.Logf("%s (mpirun %v)", got[0], res.Took.Round(time.Millisecond))
			if want := fmt.Sprintf("native=%v ", tc.native); !strings.HasPrefix(got[0], want) {
				t.Errorf("SUITES %s; want %s", got[0], want)
			}
			if tc.native == strings.Contains(got[0], " calls=0 ") {
				t.Errorf("SUITES %s: native collectives served the wrong number of calls", got[0])
			}
			if ser := strings.Contains(tc.name, "serialized"); !strings.Contains(got[0], fmt.Sprintf(" serialized=%v ", ser)) {
				t.Errorf("SUITES %s; want serialized=%v", got[0], ser)
			}
			if p := strings.Contains(tc.name, "progress"); !strings.Contains(got[0], map[bool]string{true: " progress=1ms ", false: " progress=0s "}[p]) {
				t.Errorf("SUITES %s; want a progress goroutine only when asked for (one node)", got[0])
			}
			if chunked := strings.Contains(tc.name, "chunk="); chunked == strings.Contains(got[0], " chunked=0 ") {
				t.Errorf("SUITES %s: want chunked collectives only with a small chunk size", got[0])
			}
		})
	}
}

// tcpEnv makes OpenMPI run a job over its network path even on one host:
// the TCP byte transfer layer only, and one-sided operations carried as
// point-to-point messages.
func tcpEnv() []string { return []string{"OMPI_MCA_btl=tcp,self", "OMPI_MCA_osc=pt2pt"} }

// TestWrappedNative: a stack of the wrappers of package wrap (counting
// outermost) over the MPI transport keeps MPI's native collectives: every
// rank has them, coll's AllgatherV uses them through the wrappers (each
// call counted once, as MPI served it) and gives the same result as the
// library's own algorithm. With native collectives off, nothing native is
// counted.
func TestWrappedNative(t *testing.T) {
	for _, native := range []bool{true, false} {
		t.Run(fmt.Sprintf("native=%v", native), func(t *testing.T) {
			var env []string
			if !native {
				env = append(env, mpi.EnvNative+"=0")
			}
			const ranks = 3
			res := launch(t, ranks, "wrapped", "", env...)
			if res.Err != nil {
				t.Fatalf("mpirun: %v\nstdout:\n%s\nstderr:\n%s", res.Err, res.Stdout, res.Stderr)
			}
			got := ranktest.Lines(res.Stdout, "WRAPPED ")
			if len(got) != ranks {
				t.Fatalf("stdout %q; want %d WRAPPED lines", res.Stdout, ranks)
			}
			for _, l := range got {
				t.Log(l)
				f := strings.Fields(l)
				if len(f) != 6 {
					t.Fatalf("WRAPPED %s: want 6 fields", l)
				}
				if f[1] != "name=mpi+faulty+latency+counting" || f[2] != fmt.Sprintf("native=%v", native) || f[3] != "right=true" {
					t.Errorf("WRAPPED %s; want the wrapped name, native=%v, right=true", l, native)
				}
				counted, calls := strings.TrimPrefix(f[4], "counted="), strings.TrimPrefix(f[5], "calls=")
				if counted != calls || (calls == "0") == native {
					t.Errorf("WRAPPED %s: counted native calls must equal MPI's, and be nonzero only with native collectives", l)
				}
			}
		})
	}
}

// wantAbort is ranktest.WantAbort of an mpirun.
func wantAbort(t *testing.T, res launched, prefix string) time.Duration {
	t.Helper()
	return ranktest.WantAbort(t, res.Err, res.End, res.Stdout, prefix)
}

// TestRankError: a rank whose body returns an error reports it and aborts
// the MPI job: mpirun fails within 5 s and no rank is left.
func TestRankError(t *testing.T) {
	const ranks, bad = 3, 1
	res := launch(t, ranks, "fail", strconv.Itoa(bad))
	d := wantAbort(t, res, "FAILAT ")
	want := fmt.Sprintf("pgasmr: mpi rank %d of %d failed: boom", bad, ranks)
	if !strings.Contains(res.Stderr, want) {
		t.Errorf("stderr does not report %q:\n%s", want, res.Stderr)
	}
	t.Logf("mpirun returned %v after the failure: %v", d.Round(time.Millisecond), res.Err)
}

// TestKill: a rank killed with SIGKILL in the middle of a job, while the
// others wait in a barrier, read from its segment or gather with it
// (MPI_Allgatherv), ends the MPI job:
// mpirun fails within 5 s and no process is left.
func TestKill(t *testing.T) {
	for _, where := range []string{"barrier", "gets", "allgatherv"} {
		for _, ranks := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/ranks=%d", where, ranks), func(t *testing.T) {
				victim := ranks - 1
				arg := fmt.Sprintf("%d,%d", victim, map[string]int{"barrier": 0, "gets": 1, "allgatherv": 2}[where])
				res := launch(t, ranks, "kill", arg)
				d := wantAbort(t, res, "KILLAT ")
				t.Logf("mpirun returned %v after the kill: %v", d.Round(time.Millisecond), res.Err)
			})
		}
	}
}

// TestSyncTimeout: ranks that wait in a barrier or a native collective
// for a rank that never comes fail with ErrTimeout after SyncTimeout, and
// the job is aborted.
func TestSyncTimeout(t *testing.T) {
	for _, tc := range []struct{ name, arg, want string }{
		{"barrier", "2,0", "barrier phase"},
		{"allgatherv", "2,1", "MPI_All"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := launch(t, 3, "timeout", tc.arg)
			if res.Err == nil {
				t.Fatal("mpirun succeeded")
			}
			if !strings.Contains(res.Stderr, "timed out waiting for other ranks") || !strings.Contains(res.Stderr, tc.want) {
				t.Errorf("stderr does not report the time-out in %q:\n%s", tc.want, res.Stderr)
			}
			if res.Took > 10*time.Second {
				t.Errorf("mpirun took %v", res.Took)
			}
		})
	}
}

// TestLaunchFromEnv: under mpirun, launch.FromEnv picks the MPI transport
// with the world's size.
func TestLaunchFromEnv(t *testing.T) {
	res := launch(t, 3, "launch", "")
	if res.Err != nil {
		t.Fatalf("mpirun: %v\nstderr:\n%s", res.Err, res.Stderr)
	}
	if got := ranktest.Lines(res.Stdout, "LAUNCH "); len(got) != 1 || got[0] != "mpi mpi 3 3" {
		t.Errorf("LAUNCH lines %q; want [\"mpi mpi 3 3\"]", got)
	}
}

// TestPanic: a nil-pointer dereference in a rank is a Go panic (OpenMPI's
// own SIGSEGV handler is off), reported with its stack before the abort.
func TestPanic(t *testing.T) {
	res := launch(t, 2, "panic", "1")
	if res.Err == nil {
		t.Fatal("mpirun succeeded")
	}
	for _, want := range []string{"pgasmr: mpi rank 1 of 2 failed: panic: runtime error: invalid memory address or nil pointer dereference", "ranktest/faults.go"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("stderr does not contain %q:\n%s", want, res.Stderr)
		}
	}
}

// TestOwnedMPI: in a program that initialised MPI itself, the transport
// uses that MPI and leaves finalising it to the program.
func TestOwnedMPI(t *testing.T) {
	res := launch(t, 2, "owned", "")
	if res.Err != nil {
		t.Fatalf("mpirun: %v\nstderr:\n%s", res.Err, res.Stderr)
	}
	if got := ranktest.Lines(res.Stdout, "OWNED "); len(got) != 2 || got[0][2:] != "finalized=false" || got[1][2:] != "finalized=false" {
		t.Errorf("OWNED lines %q; want MPI still initialised after Transport.Finalize on both ranks", got)
	}
}

// TestInterrupt: a job that every rank's signal cancels (its context's
// cause has a Signal method) is not aborted: every rank's pgas.Run
// returns, Finalize says it skipped MPI_Finalize, and the ranks exit on
// their own with status 130, which mpirun passes on (MPICH's mpiexec
// kills the ranks left once one has exited, so there fewer may report).
// A cancellation without such a cause is a failure, and aborts the job.
func TestInterrupt(t *testing.T) {
	t.Run("signal", func(t *testing.T) {
		const ranks = 3
		res := launch(t, ranks, "interrupt", "signal")
		if strings.Contains(res.Stderr, "MPI_Abort") || strings.Contains(res.Stderr, "MPI_ABORT") {
			t.Errorf("an interrupted job was aborted:\n%s", res.Stderr)
		}
		got := ranktest.Lines(res.Stdout, "INTERRUPTED ")
		want := ranks
		if mpi.Flavour == "MPICH" {
			want = 1
		}
		if len(got) < want {
			t.Errorf("%d ranks report the interruption (%q); want %d\nstderr:\n%s", len(got), got, want, res.Stderr)
		}
		for _, l := range got {
			if !strings.Contains(l, "MPI_Finalize skipped: the job was interrupted (interrupted by SIGTERM)") {
				t.Errorf("Finalize after the interruption: %q", l)
			}
		}
		var ee *exec.ExitError
		if !errors.As(res.Err, &ee) || mpi.Flavour == "OpenMPI" && ee.ExitCode() != 130 {
			t.Errorf("mpirun: %v; want exit status 130", res.Err)
		}
	})
	t.Run("plain", func(t *testing.T) {
		res := launch(t, 3, "interrupt", "plain")
		want := regexp.MustCompile(`pgasmr: mpi rank 1 of 3 failed: .*context canceled \(calling MPI_Abort\)`)
		if res.Err == nil || !want.MatchString(res.Stderr) {
			t.Errorf("mpirun: %v; want a failure and %q on stderr:\n%s", res.Err, want, res.Stderr)
		}
	})
}

// TestShmDir: under OpenMPI every rank puts its shared-memory files in
// the job's directory in /dev/shm, where the ranks of the node find each
// other's segments, and marks mpirun's session directory; the launch
// removes the directories (and the marked session directories) of jobs
// that are over but not those of running ones, and the job leaves
// nothing.
func TestShmDir(t *testing.T) {
	if mpi.Flavour != "OpenMPI" {
		t.Skip("OpenMPI only")
	}
	if syscall.Access("/dev/shm", 2) != nil {
		t.Skip("no /dev/shm to write to")
	}
	prefix := fmt.Sprintf("/dev/shm/pgasmr-ompi-%d-", os.Geteuid())
	tag := fmt.Sprintf("test%d", os.Getpid())
	// A dead job's directory, with its segments, and a running job's,
	// which this process holds as one of its ranks would.
	dead, live := prefix+tag+"-dead", prefix+tag+"-live"
	for _, d := range []string{dead, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(d)
		if err := os.WriteFile(d+"/vader_segment.x.0.1.0", []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	// Session directories of mpiruns that are gone: a pgasmr job's
	// (marked) and another program's.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	top := fmt.Sprintf("/tmp/ompi.%s.%d", host, os.Geteuid())
	deadSession := fmt.Sprintf("%s/pid.%d", top, cmd.Process.Pid)
	otherSession := deadSession + "0"
	defer os.Remove(top) // if this test made it: when empty, after the rest
	for _, d := range []string{deadSession, otherSession} {
		if err := os.MkdirAll(d+"/1/0", 0o700); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(d)
	}
	if err := os.WriteFile(deadSession+"/pgasmr-ranks.lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}

	const ranks = 3
	res := launch(t, ranks, "shmdir", "")
	if res.Err != nil {
		t.Fatalf("mpirun: %v\nstderr:\n%s", res.Err, res.Stderr)
	}
	lines := ranktest.Lines(res.Stdout, "SHMDIR ")
	if len(lines) != ranks {
		t.Fatalf("SHMDIR lines %q; want %d", lines, ranks)
	}
	var dir string
	for _, l := range lines {
		fs := strings.Fields(l)
		if len(fs) != 4 || !strings.HasPrefix(fs[1], prefix) || fs[2] != strconv.Itoa(ranks) || dir != "" && fs[1] != dir || fs[3] != "true" {
			t.Errorf("SHMDIR %q; want the same directory %s* on every rank, with %d segments, and the session marked", l, prefix, ranks)
		}
		if len(fs) > 1 {
			dir = fs[1]
		}
	}
	if _, err := os.Lstat(dir); err == nil {
		t.Errorf("the job left %s", dir)
	}
	if _, err := os.Lstat(dead); err == nil {
		t.Errorf("the launch left the dead job's %s", dead)
	}
	if _, err := os.Lstat(live + "/vader_segment.x.0.1.0"); err != nil {
		t.Errorf("the launch removed the running job's files: %v", err)
	}
	if _, err := os.Lstat(deadSession); err == nil {
		t.Errorf("the launch left the dead pgasmr job's session directory %s", deadSession)
	}
	if _, err := os.Lstat(otherSession); err != nil {
		t.Errorf("the launch removed another program's session directory %s: %v", otherSession, err)
	}
}
