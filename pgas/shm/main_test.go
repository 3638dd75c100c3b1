//go:build linux

package shm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	"github.com/pgasmr/pgasmr/pgas/shm"
)

// The test binary is also the program of the ranks: Launch starts it with
// the shm variables set and SHMTEST_BODY naming the SPMD body to run, and
// TestMain runs that body instead of the tests. SHMTEST_ARG passes the
// body's parameters.
var vars = ranktest.Vars{Body: "SHMTEST_BODY", Arg: "SHMTEST_ARG"}

const envLauncher = "SHMTEST_LAUNCHER" // run Launch as a separate launcher process

func TestMain(m *testing.M) {
	tr, ok, err := shm.FromEnv()
	if ok {
		os.Exit(rankMain(tr, err))
	}
	if id := os.Getenv(envLauncher); id != "" {
		os.Exit(launcherMain(id))
	}
	os.Exit(m.Run())
}

// rankMain runs the body SHMTEST_BODY names as one rank and returns the
// exit status: 0 if it succeeded, 1 if it failed, 2 if it could not start.
func rankMain(tr *shm.Transport, err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return ranktest.ExitNoStart
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return ranktest.RunBody(ctx, vars, bodies, tr.Rank(), tr)
}

// launcherMain is a launcher process for TestLauncherKilled: it launches
// two ranks that wait forever and reports their pids on stdout.
func launcherMain(id string) int {
	err := shm.Launch(context.Background(), shm.LaunchOptions{
		Ranks:        2,
		Argv:         []string{os.Args[0], "-test.run=^$"},
		Env:          rankEnv("hang", ""),
		JobID:        id,
		SegmentBytes: 1 << 20,
		Started: func(rank, pid int) {
			fmt.Printf("STARTED %d %d\n", rank, pid)
		},
	})
	fmt.Fprintln(os.Stderr, err)
	return 1
}

func rankEnv(body, arg string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envLauncher+"=") && !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	return append(env, vars.Env(body, arg)...)
}

// config is the pgas configuration of a test rank.
func config(tr *shm.Transport) pgas.Config {
	return pgas.Config{
		Ranks:        tr.Size(),
		Transport:    tr,
		SegmentBytes: tr.SegmentBytes(),
		SyncTimeout:  time.Minute,
	}
}

// cacheConfig is config(tr) with the cache setting arg.
func cacheConfig(tr *shm.Transport, arg string) (pgas.Config, error) {
	cfg := config(tr)
	cc, err := pgas.ParseCacheConfig(arg)
	cfg.Cache = cc
	return cfg, err
}

var bodies = map[string]ranktest.Body[*shm.Transport]{
	// arg: the cache setting (pgas.ParseCacheConfig), "" for none.
	"conformance": func(ctx context.Context, tr *shm.Transport, arg string) error {
		cfg, err := cacheConfig(tr, arg)
		if err != nil {
			return err
		}
		return ranktest.Conformance(ctx, cfg)
	},
	"colltest": func(ctx context.Context, tr *shm.Transport, arg string) error {
		cfg, err := cacheConfig(tr, arg)
		if err != nil {
			return err
		}
		_, err = ranktest.Collectives(ctx, cfg)
		return err
	},
	"jobs":       jobsBody,
	"pids":       pidsBody,
	"fail":       failBody,
	"busy":       busyBody,
	"kill":       killBody,
	"exit0":      exit0Body,
	"hang":       hangBody,
	"timeout":    timeoutBody,
	"bench":      benchBody,
	"failedchan": failedChanBody,
	"chain":      chainBody,
	"toobig": func(ctx context.Context, tr *shm.Transport, _ string) error {
		cfg := config(tr)
		cfg.SegmentBytes = 2 * tr.SegmentBytes()
		return pgas.Run(ctx, cfg, func(context.Context, *pgas.Rank) error { return nil })
	},
}

// launched is what a test launch produced.
type launched struct {
	err            error
	took           time.Duration
	stdout, stderr string
	pids           []int
	job            string
}

var jobSeq int

// launch runs body on ranks processes of this test binary with arg and
// checks that nothing is left behind: no process of the job and no
// segment file.
func launch(t testing.TB, ranks int, body, arg string, segBytes int64) launched {
	t.Helper()
	jobSeq++
	job := fmt.Sprintf("t%d-%s-%d", jobSeq, body, ranks)
	var stdout, stderr bytes.Buffer
	res := launched{job: job, pids: make([]int, ranks)}
	start := time.Now()
	res.err = shm.Launch(t.Context(), shm.LaunchOptions{
		Ranks:        ranks,
		Argv:         []string{os.Args[0], "-test.run=^$"},
		Env:          rankEnv(body, arg),
		Stdout:       &stdout,
		Stderr:       &stderr,
		SegmentBytes: segBytes,
		JobID:        job,
		Started:      func(rank, pid int) { res.pids[rank] = pid },
	})
	res.took = time.Since(start)
	res.stdout, res.stderr = stdout.String(), stderr.String()
	ranktest.CheckBodiesOK(t, "Launch", res.err, res.stdout, ranks)
	checkClean(t, job, res.pids)
	return res
}

// checkClean fails t if a process of the job, or its segment file, is
// left.
func checkClean(t testing.TB, job string, pids []int) {
	t.Helper()
	for r, pid := range pids {
		if pid != 0 && syscall.Kill(pid, 0) == nil && !ranktest.Zombie(pid) {
			t.Errorf("rank %d (pid %d) still runs after Launch returned", r, pid)
		}
	}
	if left := ranktest.JobProcs(shm.EnvJob, job); len(left) > 0 {
		t.Errorf("processes %v of job %s still run", left, job)
	}
	if files := jobFiles(job); len(files) > 0 {
		t.Errorf("segment files %v of job %s remain", files, job)
	}
}

func jobFiles(job string) []string {
	files, _ := filepath.Glob(filepath.Join(shm.Dir, shm.Prefix+"*-"+job))
	return files
}

// wantRankFailed checks that err wraps a *pgas.RankFailedError naming
// rank.
func wantRankFailed(t testing.TB, res launched, rank int) *shm.ExitError {
	t.Helper()
	var rf *pgas.RankFailedError
	if !errors.As(res.err, &rf) || rf.Rank != rank {
		t.Fatalf("Launch = %v; want an error naming rank %d\nstderr:\n%s", res.err, rank, res.stderr)
	}
	var ee *shm.ExitError
	if !errors.As(res.err, &ee) || ee.Rank != rank {
		t.Fatalf("Launch = %v; want an *ExitError of rank %d", res.err, rank)
	}
	if !strings.Contains(res.err.Error(), fmt.Sprintf("rank %d", rank)) {
		t.Errorf("Launch = %q; want the text to name rank %d", res.err, rank)
	}
	return ee
}
