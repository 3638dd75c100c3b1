//go:build shmem

package shmem_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
)

// TestSuites runs pgastest.RunAll and colltest.RunAll on 2 and 4 PEs (4
// oversubscribe a 2-core machine), and with the remote-reference cache.
func TestSuites(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ranks int
		cache string
	}{
		{"ranks=2", 2, ""},
		{"ranks=4", 4, ""},
		{"ranks=3/cache", 3, "lines=2,line=64,victim=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := launch(t, tc.ranks, "suites", tc.cache)
			if res.Err != nil {
				t.Fatalf("oshrun: %v\nstdout:\n%s\nstderr:\n%s", res.Err, res.Stdout, res.Stderr)
			}
			got := ranktest.Lines(res.Stdout, "SUITES ")
			if len(got) != 1 {
				t.Fatalf("stdout %q; want one SUITES line", res.Stdout)
			}
			t.Logf("%s (oshrun %v)", got[0], res.Took.Round(time.Millisecond))
			if !strings.HasPrefix(got[0], "native=false ") {
				t.Errorf("SUITES %s; want no native collectives", got[0])
			}
		})
	}
}

// TestJobs: jobs of different segment sizes one after another in one
// program (each Open allocates from the symmetric heap, each Close frees).
func TestJobs(t *testing.T) {
	res := launch(t, 2, "jobs", "")
	if res.Err != nil {
		t.Fatalf("oshrun: %v\nstderr:\n%s", res.Err, res.Stderr)
	}
	if got := ranktest.Lines(res.Stdout, "JOBS "); len(got) != 1 || got[0] != "ok" {
		t.Errorf("JOBS lines %q; want [ok]", got)
	}
}

// wantAbort is ranktest.WantAbort of an oshrun.
func wantAbort(t *testing.T, res launched, prefix string) time.Duration {
	t.Helper()
	return ranktest.WantAbort(t, res.Err, res.End, res.Stdout, prefix)
}

// TestRankError: a rank whose body returns an error reports it and ends
// every PE: oshrun fails within 5 s and no PE is left.
func TestRankError(t *testing.T) {
	const ranks, bad = 3, 1
	res := launch(t, ranks, "fail", strconv.Itoa(bad))
	d := wantAbort(t, res, "FAILAT ")
	want := fmt.Sprintf("pgasmr: shmem rank %d of %d failed: boom", bad, ranks)
	if !strings.Contains(res.Stderr, want) {
		t.Errorf("stderr does not report %q:\n%s", want, res.Stderr)
	}
	t.Logf("oshrun returned %v after the failure: %v", d.Round(time.Millisecond), res.Err)
}

// TestKill: a PE killed with SIGKILL while the others wait in a barrier
// or read its segment ends the program: oshrun fails within 5 s and no
// process is left.
func TestKill(t *testing.T) {
	for _, where := range []string{"barrier", "gets"} {
		for _, ranks := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/ranks=%d", where, ranks), func(t *testing.T) {
				arg := fmt.Sprintf("%d,%d", ranks-1, map[string]int{"barrier": 0, "gets": 1}[where])
				res := launch(t, ranks, "kill", arg)
				d := wantAbort(t, res, "KILLAT ")
				t.Logf("oshrun returned %v after the kill: %v", d.Round(time.Millisecond), res.Err)
			})
		}
	}
}

// TestSyncTimeout: PEs waiting in a barrier for a rank that never comes
// fail with ErrTimeout after SyncTimeout, and the program is ended.
func TestSyncTimeout(t *testing.T) {
	res := launch(t, 3, "timeout", "2")
	if res.Err == nil {
		t.Fatal("oshrun succeeded")
	}
	if !strings.Contains(res.Stderr, "timed out waiting for other ranks") || !strings.Contains(res.Stderr, "barrier phase") {
		t.Errorf("stderr does not report the time-out in a barrier:\n%s", res.Stderr)
	}
	if res.Took > 10*time.Second {
		t.Errorf("oshrun took %v", res.Took)
	}
}

// TestLaunchFromEnv: under oshrun, in a program built with the shmem tag,
// launch.FromEnv picks the OpenSHMEM transport with every PE.
func TestLaunchFromEnv(t *testing.T) {
	res := launch(t, 3, "launch", "")
	if res.Err != nil {
		t.Fatalf("oshrun: %v\nstderr:\n%s", res.Err, res.Stderr)
	}
	if got := ranktest.Lines(res.Stdout, "LAUNCH "); len(got) != 1 || got[0] != "shmem shmem 3 3" {
		t.Errorf("LAUNCH lines %q; want [\"shmem shmem 3 3\"]", got)
	}
}

// TestPanic: a nil-pointer dereference in a rank is a Go panic (the
// libraries' own SIGSEGV handlers are off), reported with its stack.
func TestPanic(t *testing.T) {
	res := launch(t, 2, "panic", "1")
	if res.Err == nil {
		t.Fatal("oshrun succeeded")
	}
	for _, want := range []string{"pgasmr: shmem rank 1 of 2 failed: panic: runtime error: invalid memory address or nil pointer dereference", "ranktest/faults.go"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("stderr does not contain %q:\n%s", want, res.Stderr)
		}
	}
}
