// Command mrrun runs pgasmr's applications, generates their inputs and
// benchmarks them.
//
//	mrrun [flags] APP INPUT...       run APP on 1 or more ranks (mrrun -np 4 wordcount corpus/)
//	mrrun gen APP [flags] OUTPUT     generate an input for APP
//	mrrun list                       the apps, their inputs and flags
//	mrrun bench [flags]              throughput and speed-up of apps × ranks × modes × baselines
//	mrrun exec -np N -- PROG ARGS    run a pgas program as N processes on the shm transport
//	mrrun model [flags]              predict SpMV's strategies from measured parameters, then measure them
//	mrrun --version
//
// mrrun only wires flags to library calls: every job it runs is a call of
// an app's Run (on every rank of pgas.Run), Seq or Goroutines.
//
// Errors are one line on stderr starting "mrrun: ". Exit status: 0 success;
// 1 a failed job (a failed or killed rank included); 2 a usage error;
// 141 the reader of the output went away (a pipe to head);
// 130 interrupted (SIGINT, SIGTERM, or SIGHUP when the terminal closes:
// every rank stops, and no output file or spilled pair is left behind:
// results are written to a temporary file renamed at the end).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
)

// version is set at link time (-ldflags "-X main.version=...").
var version = "0.1.0-dev"

func main() {
	// The first signal cancels the run; one that does not stop within
	// about a second (a read blocked in the kernel) is ended anyway: see
	// runWithDeadline.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// A reader that goes away (mrrun ... | head -1) makes a write return
	// EPIPE instead of killing the process before its defers remove the
	// result's files; report turns that into a quiet exit status 141.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	args := os.Args[1:]
	os.Exit(runWithDeadline(context.Background(), sig, forcedExitFor(args), os.Stderr, func(ctx context.Context) int {
		return Main(ctx, args, os.Stdout, os.Stderr)
	}))
}

// exitError carries an exit status other than 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usagef returns a usage error (exit status 2).
func usagef(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// errInterrupted is the error of a job stopped by a signal.
var errInterrupted = errors.New("interrupted")

// Main runs mrrun with args (without the program name) and returns the exit
// status. A cancelled ctx means interrupted.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	args = rewriteNP(args)
	return report(ctx, stderr, dispatch(ctx, args, stdout, stderr))
}

// report prints err as one line and returns the exit status.
func report(ctx context.Context, stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	code := 1
	var ee *exitError
	switch {
	case errors.Is(err, syscall.EPIPE):
		return 141 // the reader has gone, as a killed writer's 128+SIGPIPE; nobody to tell
	case ctx.Err() != nil:
		code, err = 130, errInterrupted
	case errors.As(err, &ee):
		code = ee.code
	}
	msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
	msg = escapeControls(msg) // a file name's escape sequence must not reach the terminal
	if launcher, rank := rankProcess(); launcher != "" {
		// A rank process: its launcher prints one line for the job.
		if code == 130 {
			return code
		}
		msg = fmt.Sprintf("rank %d: %s", rank, strings.TrimPrefix(msg, fmt.Sprintf("pgas: rank %d: ", rank)))
	} else if strings.HasPrefix(msg, "pgas: rank ") {
		// pgas.Run's *JobError: the rank is the information, not the
		// package (and a shm job's line reads the same).
		msg = strings.TrimPrefix(msg, "pgas: ")
	}
	fmt.Fprintf(stderr, "mrrun: %s\n", msg)
	return code
}

// rewriteNP turns mpirun's -np N and -np=N into --np N and --np=N, which
// pflag would otherwise read as the shorthands -n -p. Arguments after a
// bare "--" are left alone.
func rewriteNP(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if a == "-np" || strings.HasPrefix(a, "-np=") {
			out[i] = "-" + a
		}
	}
	return out
}

// dispatch picks the subcommand.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "gen":
			return cmdGen(ctx, args[1:], stdout, stderr)
		case "list":
			return cmdList(args[1:], stdout)
		case "bench":
			return cmdBench(ctx, args[1:], stdout, stderr)
		case "exec":
			return cmdExec(ctx, args[1:], stdout, stderr)
		case "model":
			return cmdModel(ctx, args[1:], stdout, stderr)
		case "help":
			fmt.Fprint(stdout, usageText())
			return nil
		case "version":
			fmt.Fprintln(stdout, versionLine())
			return nil
		}
	}
	return cmdRun(ctx, args, stdout, stderr)
}

// newFlagSet returns a flag set that reports errors as usage errors
// through its caller instead of printing them.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	return fs
}

// parseFlags parses args into fs, turning pflag's errors into usage errors
// and printing help on -h/--help.
func parseFlags(fs *pflag.FlagSet, args []string, stdout io.Writer, help string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(stdout, help)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return err
		}
		return usagef("%v", err)
	}
	return nil
}

func usageText() string {
	return `Usage:
  mrrun [flags] APP INPUT...     run APP on -np ranks (default: one per CPU)
  mrrun gen APP [flags] OUTPUT   generate an input for APP
  mrrun list                     the apps, their input formats and flags
  mrrun bench [flags]            benchmark apps × ranks × modes × baselines
  mrrun exec -np N -- PROG ARGS  run any pgas program as N shm rank processes
  mrrun model [flags]            predict SpMV's v1/v2/v3 steps, then measure them
  mrrun --version

Run 'mrrun --help' for the run flags, 'mrrun gen --help', 'mrrun bench --help' and 'mrrun model --help' for theirs.
Exit status: 0 success, 1 failed job, 2 usage error, 130 interrupted.
`
}
