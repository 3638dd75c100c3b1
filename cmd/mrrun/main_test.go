package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// binPath is the mrrun binary the tests run, built once by TestMain.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mrrun-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "mrrun")
	args := []string{"build", "-o", binPath}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building mrrun:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// A -race binary sleeps a second at exit (TSan's atexit_sleep_ms)
	// unless told not to; the tests run it a hundred times.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	code := m.Run()
	os.RemoveAll(dir)
	if inputsDir != "" {
		os.RemoveAll(inputsDir)
	}
	os.Exit(code)
}

// execResult is what one run of the binary gave.
type execResult struct {
	stdout, stderr string
	code           int
}

// mrrun runs the binary with args in dir ("" for the package directory)
// and returns its outputs and exit status; it fails the test if the binary
// runs longer than 2 minutes.
func mrrunIn(t testing.TB, dir string, args ...string) execResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := execResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("mrrun %q: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("mrrun %q: still running after 2 minutes", args)
	}
	return r
}

func mrrun(t testing.TB, args ...string) execResult {
	t.Helper()
	return mrrunIn(t, "", args...)
}

// want checks the exit status.
func (r execResult) want(t *testing.T, code int) execResult {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	return r
}
