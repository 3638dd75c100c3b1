package main

// Nothing left behind: however a run ends (its result written, a failure,
// SIGINT, SIGTERM or SIGHUP, a forced exit, the memory watchdog, a rank
// process killed), mrrun leaves no spill directory and no temporary output
// file, and the result file (-o) is either complete and the run's exit
// status 0, or absent.
//
// The rule for an interrupted run: the rename of -o into place is the
// commit point. A signal that comes before it leaves no -o file and the
// run exits 130 ("mrrun: interrupted"); once the file is in place the run
// has succeeded, exits 0, and a signal after that point only hurries its
// cleaning up. Under --transport shm the launcher, whose exit status the
// user sees, makes the commit: the root rank writes the result into a
// temporary file the launcher made, and the launcher renames it once every
// rank has exited with status 0 (commitOutput), or removes it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pgasmr/pgasmr/internal/memlimit"
	"github.com/pgasmr/pgasmr/internal/tmpdir"
	"github.com/pgasmr/pgasmr/pgas/shm"
	"github.com/pgasmr/pgasmr/reduce"
)

// The environment the shm launcher gives its ranks (launchJob).
const (
	// envJobSpills names the directory the ranks spill in (their
	// --tmp): the launcher's, which it removes with what the ranks left in
	// it once they have all exited.
	envJobSpills = "PGASMR_MRRUN_SPILLS"
	// envOutputTmp names the temporary file the root rank writes the
	// result (-o) into, and which the launcher renames.
	envOutputTmp = "PGASMR_MRRUN_OUTPUT_TMP"
)

// resultKey marks the context of the write of a run's result (-o).
type resultKey struct{}

// resultCtx returns ctx marked as the context of the write of the run's
// result, whose rename is the run's commit point (commitOutput).
func resultCtx(ctx context.Context) context.Context {
	return context.WithValue(ctx, resultKey{}, true)
}

// isResult says whether ctx is marked by resultCtx.
func isResult(ctx context.Context) bool {
	b, _ := ctx.Value(resultKey{}).(bool)
	return b
}

// forcedExitsOf returns the forcedExits of ctx's run, or nil.
func forcedExitsOf(ctx context.Context) *forcedExits {
	fx, _ := ctx.Value(forcedExitsKey{}).(*forcedExits)
	return fx
}

// shmRank says whether this process is a rank of mrrun's shm launcher.
func shmRank() bool {
	launcher, _ := rankProcess()
	return launcher == "shm"
}

// launcherOutput returns the temporary file that the shm launcher of
// this rank process made for the result (envOutputTmp), or "" if there is
// none; an error if the launcher's file is not in dir with prefix, where
// this rank would put it: the launcher would rename its file, which no
// one wrote, over the result.
func launcherOutput(dir, prefix string) (string, error) {
	p := os.Getenv(envOutputTmp)
	if p == "" || !shmRank() {
		return "", nil
	}
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if filepath.Dir(p) != d || !strings.HasPrefix(filepath.Base(p), prefix) {
		return "", fmt.Errorf("the launcher's temporary file %s is not one of %s%s* (%s=%s)", p, d+string(filepath.Separator), prefix, envOutputTmp, p)
	}
	return p, nil
}

// createOutputTmp creates the temporary file that writeFileAtomic writes
// an output into, in dir, named prefix and its maker (tmpdir.CreateFile).
// The result of a rank of mrrun's shm launcher goes into the file the
// launcher made instead (envOutputTmp), which the launcher renames.
func createOutputTmp(ctx context.Context, dir, prefix string) (*os.File, error) {
	if isResult(ctx) {
		p, err := launcherOutput(dir, prefix)
		if err != nil {
			return nil, err
		}
		if p != "" {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW, 0)
			if err != nil {
				return nil, fmt.Errorf("the launcher's temporary file: %w", err)
			}
			return f, nil
		}
	}
	return tmpdir.CreateFile(dir, prefix)
}

// cancelWriter returns a writer to w whose writes fail with ctx's cause
// once ctx is done: an output being written when the run is interrupted
// stops there instead of running to its end.
func cancelWriter(ctx context.Context, w io.Writer) io.Writer {
	return cancellable{ctx, w}
}

type cancellable struct {
	ctx context.Context
	w   io.Writer
}

func (c cancellable) Write(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.w.Write(p)
}

// commitOutput moves the temporary file tmp, written, to path: the last
// step of writeFileAtomic. For the run's result (resultCtx) it is the
// run's commit point: unless the run was cancelled before (ctx is done),
// the rename and the run's success (forcedExits.committed) happen
// together, under the lock of the run's forced exits, so that a forced
// exit either comes first, removes tmp and exits 130, or comes after and
// exits 0. A rank of mrrun's shm launcher leaves its result in the
// launcher's file, for the launcher to commit.
func commitOutput(ctx context.Context, tmp, path string) error {
	result := isResult(ctx)
	if p := os.Getenv(envOutputTmp); result && p != "" && tmp == p && shmRank() {
		return nil // the launcher renames it once every rank has exited
	}
	fx := forcedExitsOf(ctx)
	if fx != nil {
		fx.Lock()
		defer fx.Unlock()
		if fx.closed {
			return errInterrupted // the forced exit removes tmp
		}
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if fx != nil && result {
		fx.committed = true
	}
	return nil
}

// jobSpills points spec at the directory a rank of mrrun's shm launcher
// spills in (envJobSpills), and returns the function, to defer, that
// removes what this process has left in spec's spill directory (a result
// or a Spill that a failure left unclosed); a forced exit removes it too.
// Call it in the process that runs the job (not the shm launcher), before
// the job: after it the process spills there no more.
func jobSpills(ctx context.Context, spec *jobSpec) (done func()) {
	if d := os.Getenv(envJobSpills); d != "" && shmRank() {
		spec.tmpDir = d
	}
	dir := spec.tmpDir
	unregister := atForcedExit(ctx, func() { reduce.RemoveSpills(dir) })
	return func() {
		unregister()
		reduce.RemoveSpills(dir)
	}
}

// launchJob runs launch, which starts the rank processes of an shm job
// and returns once every one has exited, so that the job leaves nothing
// behind, however it ends:
//   - the ranks spill in a directory of the launcher in tmpDir
//     (reduce.MakeJobDir, envJobSpills), removed with what they left in it
//     once they are gone: a rank killed (SIGKILL, or by the launcher after
//     another failed) cannot remove its own;
//   - the root rank writes the result (-o output) into a temporary file
//     the launcher made (envOutputTmp), which the launcher renames when
//     every rank has exited with status 0 and the run was not interrupted
//     (commitOutput), and removes otherwise;
//   - a forced exit of the launcher kills the ranks first, then removes
//     both.
func launchJob(ctx context.Context, tmpDir, output string, launch func(ctx context.Context) error) error {
	spills, err := reduce.MakeJobDir(tmpDir)
	if err != nil {
		spills = "" // the ranks spill in tmpDir, where the first spill says what is wrong
	}
	var tmp, path string
	if output != "" {
		if tmp, path, err = launcherTmp(output); err != nil {
			if spills != "" {
				os.RemoveAll(spills)
			}
			return fmt.Errorf("-o %s: %w", output, err)
		}
	}
	defer setenv(envJobSpills, spills)()
	defer setenv(envOutputTmp, tmp)()
	cleanup := func() {
		if spills != "" {
			os.RemoveAll(spills)
		}
		if tmp != "" {
			os.Remove(tmp) // gone already once committed
		}
	}
	defer atForcedExit(ctx, func() {
		killChildren() // they would die with the launcher, after it has cleaned up
		cleanup()
	})()
	err = launch(ctx)
	var ee *shm.ExitError
	if errors.As(err, &ee) && ee.Code == 141 && ctx.Err() == nil {
		// A rank's reader went away (mrrun ... | head -1): it exited as
		// report does then; so does the launcher, quietly.
		err = fmt.Errorf("rank %d: %w", ee.Rank, syscall.EPIPE)
	}
	if err == nil && tmp != "" {
		if err = commitOutput(resultCtx(ctx), tmp, path); err != nil {
			err = fmt.Errorf("-o %s: %w", output, err)
		}
	}
	cleanup()
	return err
}

// launcherTmp makes the temporary file the root rank writes the result
// into (launchJob) for output, next to the file it replaces, and returns
// its absolute path and that of the file; none for a device or a named
// pipe, which the root rank writes directly.
func launcherTmp(output string) (tmp, path string, err error) {
	t, err := resolveOutput(output)
	if err != nil || t.direct {
		return "", "", err
	}
	if t.path, err = filepath.Abs(t.path); err != nil {
		return "", "", err
	}
	dir, base := filepath.Split(t.path)
	prefix := "." + base + ".tmp-"
	tmpdir.CleanStale(dir, prefix)
	f, err := tmpdir.CreateFile(dir, prefix)
	if err != nil {
		return "", "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", "", err
	}
	return f.Name(), t.path, nil
}

// setenv sets the environment variable k to v (unsets it if v is ""),
// for the processes this one starts, and returns the function that unsets
// it.
func setenv(k, v string) (unset func()) {
	if v == "" {
		os.Unsetenv(k) // not one the user's environment passed on
	} else {
		os.Setenv(k, v)
	}
	return func() { os.Unsetenv(k) }
}

// atLimit is the memory watchdog's last word (memlimit's Critical): the
// forced exits of ctx's run remove its spill directories and temporary
// files first, for at most forcedExitBound; then the error line and exit
// status 1, or status 0 if the run's result was in place already.
func atLimit(ctx context.Context, stderr io.Writer, e *memlimit.ExceededError) {
	if fx := forcedExitsOf(ctx); fx != nil {
		done := make(chan bool, 1)
		go func() {
			fx.run()
			fx.Lock()
			done <- fx.committed
			fx.Unlock()
		}()
		select {
		case committed := <-done:
			if committed {
				os.Exit(0)
			}
		case <-time.After(forcedExitBound):
		}
	}
	exitOverLimit(stderr, e)
}
