//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mrrunWithin runs the binary like mrrun, but fails the test if it runs
// longer than limit: a run that blocks in open is killed, not waited for.
func mrrunWithin(t *testing.T, limit time.Duration, args ...string) execResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mrrun %q: still running after %v (stderr %q)", args, limit, errb.String())
	}
	r := execResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("mrrun %q: %v", args, err)
	}
	return r
}

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFIFOInput: a FIFO (or a link to one, or a device) given as an input
// is refused at once, before it is opened, with exit status 1 (a failed
// job, like a missing file) and one line naming the file and what it is,
// in every app, mode and transport. Before, histogram and linreg blocked
// forever in open, and spamcount reported an empty result.
func TestFIFOInput(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, filepath.Join(dir, "p"))
	link := filepath.Join(dir, "link-to-p")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	const limit = 20 * time.Second // a -race binary on a busy machine; a blocked open is forever
	for _, app := range []string{"histogram", "linreg", "wordcount", "spamcount"} {
		t.Run(app, func(t *testing.T) {
			good := testInput(t, app)
			for _, c := range []struct {
				args []string
				path string // the refused path
				what string
			}{
				{[]string{"--baseline", "seq", app, fifo}, fifo, "a named pipe (FIFO)"},
				{[]string{"--baseline", "seq", app, good, link}, link, "a named pipe (FIFO)"},
				{[]string{"--baseline", "goroutines", app, "/dev/null"}, "/dev/null", "a character device"},
			} {
				r := mrrunWithin(t, limit, c.args...).want(t, 1)
				if want := "mrrun: " + app + ": " + c.path + ": " + c.what + ", not a regular file\n"; r.stderr != want || r.stdout != "" {
					t.Errorf("mrrun %q: stdout %q, stderr %q; want nothing and %q", c.args, r.stdout, r.stderr, want)
				}
			}
			// In a job every rank refuses the file; how the job names the
			// failed ranks is the job's business: one line, exit 1.
			for _, args := range [][]string{
				{"-np", "2", app, fifo},
				{"--transport", "shm", "-np", "2", app, fifo},
			} {
				r := mrrunWithin(t, limit, args...).want(t, 1)
				checkOneLine(t, args, r.stderr, app+": "+fifo+": a named pipe (FIFO), not a regular file")
				if r.stdout != "" {
					t.Errorf("mrrun %q: stdout %q, want nothing", args, r.stdout)
				}
			}
		})
	}
	// wordcount --skip-unreadable skips it, and says so, as any
	// unreadable file.
	wc := testInput(t, "wordcount")
	want := mrrunWithin(t, limit, "-q", "--output-format", "tsv", "wordcount", wc).want(t, 0).stdout
	r := mrrunWithin(t, limit, "--output-format", "tsv", "--skip-unreadable", "wordcount", wc, fifo).want(t, 0)
	if r.stdout != want || r.stderr != "wordcount: skipped unreadable "+fifo+": a named pipe (FIFO), not a regular file\n" {
		t.Errorf("--skip-unreadable with a FIFO: stdout differs: %v; stderr %q", r.stdout != want, r.stderr)
	}
	// spamcount's --words file is refused the same way: before, every
	// rank blocked in its open.
	sc := testInput(t, "spamcount")
	for _, args := range [][]string{
		{"--baseline", "seq", "--words", fifo, "spamcount", sc},
		{"-np", "2", "--words", fifo, "spamcount", sc},
	} {
		r := mrrunWithin(t, limit, args...).want(t, 1)
		checkOneLine(t, args, r.stderr, "spamcount: "+fifo+": a named pipe (FIFO), not a regular file")
	}
}

// TestFIFOInDirectory: inside a directory given as an input, FIFOs and
// links to them are passed over by every app, as devices and sockets
// always were: the result is that of the directory's files, at once.
func TestFIFOInDirectory(t *testing.T) {
	const limit = 20 * time.Second
	for _, app := range []string{"histogram", "linreg", "wordcount", "spamcount"} {
		t.Run(app, func(t *testing.T) {
			src := testInput(t, app)
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			if fi, err := os.Stat(src); err != nil {
				t.Fatal(err)
			} else if fi.IsDir() {
				if err := os.CopyFS(in, os.DirFS(src)); err != nil {
					t.Fatal(err)
				}
			} else {
				b, err := os.ReadFile(src)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(in, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(in, "input"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := mrrunWithin(t, limit, "-np", "2", "-q", "--output-format", "tsv", app, in).want(t, 0).stdout
			fifo := mkfifo(t, filepath.Join(in, "p"))
			if err := os.Symlink(fifo, filepath.Join(in, "zz-link-to-p")); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"--baseline", "seq", app, in},
				{"-np", "2", app, in},
				{"--transport", "shm", "-np", "2", app, in},
			} {
				args := append([]string{"-q", "--output-format", "tsv"}, args...)
				r := mrrunWithin(t, limit, args...).want(t, 0)
				if r.stdout != want || r.stderr != "" {
					t.Errorf("mrrun %s: stderr %q; output differs from the run without the FIFO: %v", strings.Join(args, " "), r.stderr, r.stdout != want)
				}
			}
		})
	}
}
