package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/launch"
	"github.com/pgasmr/pgasmr/pgas/shm"
)

const execHelp = `Usage: mrrun exec [--transport shm] [-np N] -- PROGRAM [ARGS...]

Runs PROGRAM as N ranks, one process each, on the shared-memory transport:
a Go program that gets its pgas.Config from launch.FromEnv and calls
pgas.Run runs its one rank in each process. The ranks share this
terminal's stdout and stderr. The job fails (exit 1) when any rank exits
with a non-zero status or dies; the others are stopped, and no process or
segment is left behind. Ctrl-C stops every rank (exit 130).

Flags:
`

// cmdExec is mrrun exec: launch any program as N shm ranks.
func cmdExec(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mrrun exec")
	np := fs.Int("np", runtime.NumCPU(), "number of ranks (processes)")
	tr := fs.String("transport", "shm", "how the ranks communicate: shm")
	seg := fs.String("segment-bytes", "16MiB", "shared segment capacity per rank (k, MB, MiB, ... suffixes)")
	stopGrace := fs.Duration("stop-grace", defaultStopGrace, stopGraceHelp)
	cache := fs.String("cache", "", cacheHelp+" (sets "+launch.EnvCache+" for the ranks: launch.FromEnv reads it)")
	fs.SetInterspersed(false)
	if err := parseFlags(fs, args, stdout, execHelp); err != nil {
		return err
	}
	if *tr != "shm" {
		return usagef("exec: --transport %q: want shm", *tr)
	}
	if *np < 1 || *np > shm.MaxRanks {
		return usagef("exec: -np %d: want 1 to %d ranks", *np, shm.MaxRanks)
	}
	segBytes, err := parseSize(*seg)
	if err != nil || segBytes <= 0 || segBytes%8 != 0 {
		return usagef("exec: --segment-bytes %s: want a positive multiple of 8 bytes", *seg)
	}
	if err := checkStopGrace(*stopGrace); err != nil {
		return err
	}
	var env []string
	if *cache != "" {
		if _, err := pgas.ParseCacheConfig(*cache); err != nil {
			return usagef("exec: --cache %s: %v", *cache, err)
		}
		env = append(os.Environ(), launch.EnvCache+"="+*cache)
	}
	prog := fs.Args()
	if len(prog) == 0 {
		return usagef("exec: no program given (usage: mrrun exec -np N -- PROGRAM [ARGS...])")
	}
	if _, ok := stderr.(*os.File); !ok {
		// The ranks' output is copied to it while notices are written.
		stderr = &syncWriter{w: stderr}
	}
	err = shm.Launch(ctx, shm.LaunchOptions{Ranks: *np, Argv: prog, Env: env, Stdout: stdout, Stderr: stderr, SegmentBytes: segBytes,
		StopGrace: *stopGrace,
		Notice:    func(msg string) { fmt.Fprintf(stderr, "mrrun: %s\n", msg) },
	})
	if err == nil || ctx.Err() != nil {
		return err
	}
	var ee *shm.ExitError
	if errors.As(err, &ee) && ee.Stopped {
		return fmt.Errorf("%s: %w", prog[0], ee)
	}
	if errors.As(err, &ee) && ee.Reason != "" {
		return fmt.Errorf("%s: rank %d failed: %s", prog[0], ee.Rank, ee.Reason)
	}
	return fmt.Errorf("%s: %w", prog[0], err)
}
