package main

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/pgasmr/pgasmr/apps/wordcount"
)

// barFrames returns the progress bar frames ("\r" line "\x1b[K" with a
// percentage and a rate) in out, in order, and where each ends.
func barFrames(out string) (frames []string, ends []int) {
	for i := 0; ; {
		j := strings.Index(out[i:], eraseLine)
		if j < 0 {
			return frames, ends
		}
		end := i + j + len(eraseLine)
		line := out[i : i+j]
		if k := strings.LastIndexByte(line, '\r'); k >= 0 {
			line = line[k+1:]
		}
		if strings.Contains(line, "%") && strings.Contains(line, "MB/s") {
			frames = append(frames, line)
			ends = append(ends, end)
		}
		i = end
	}
}

// runOnPty runs the binary with stdout and stderr on a pseudo-terminal
// cols columns wide and returns all it wrote and its exit status. It skips
// the test if no pseudo-terminal can be opened.
func runOnPty(t *testing.T, cols uint16, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: cols})
	if err != nil {
		t.Skipf("cannot open a pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	var out bytes.Buffer
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(&out, ptmx)
		copied <- err
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("mrrun %q on a terminal: still running after a minute", args)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("mrrun %q: %v", args, err)
	}
	// Reading the terminal fails (EIO) once the binary has exited and
	// everything it wrote has been read.
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
		t.Fatalf("mrrun %q: the terminal did not reach its end", args)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// TestProgressTerminal runs a wordcount job long enough for several
// frames: on a terminal the bar updates and is cleared before the result;
// piped, or with -q, there is no bar; --progress forces it.
func TestProgressTerminal(t *testing.T) {
	// At least 4 frames' worth at 2 ranks: 80 MB took 0.25 s on a quiet
	// machine, one frame.
	size := int64(240e6)
	if raceEnabled {
		size = 12e6 // about 1.5s of -race wordcount on 2 ranks
	}
	const files = 24
	corpus := filepath.Join(t.TempDir(), "corpus")
	if err := wordcount.Generate(corpus, size, files, 1); err != nil {
		t.Fatal(err)
	}
	args := []string{"-np", "2", "--top", "3", "wordcount", corpus}

	t.Run("terminal", func(t *testing.T) {
		const cols = 100
		out, code := runOnPty(t, cols, args...)
		if code != 0 {
			t.Fatalf("exit status %d; output %q", code, out)
		}
		frames, ends := barFrames(out)
		distinct := map[string]bool{}
		// The bar has the width the terminal gives it.
		wantBar := strings.IndexByte(renderProgress(0, 0, files, size, 0, cols, "files"), ']')
		for _, f := range frames {
			distinct[f] = true
			if len(f) > cols-3 || !strings.HasPrefix(f, "[") || strings.IndexByte(f, ']') != wantBar {
				t.Errorf("frame %q: want a bar with ] at %d, at most %d columns", f, wantBar, cols-3)
			}
		}
		if len(distinct) < 2 {
			t.Fatalf("%d distinct bar frames, want at least 2; output %q", len(distinct), out)
		}
		t.Logf("%d frames, %d distinct; the last: %q", len(frames), len(distinct), frames[len(frames)-1])
		last := ends[len(ends)-1]
		result := strings.Index(out, "word ")
		if result < 0 || !strings.Contains(out[result:], "the ") {
			t.Fatalf("no result in %q", out)
		}
		if !strings.HasPrefix(out[last:], clearLine) || last > result {
			t.Errorf("the last frame is not followed by the clear sequence before the result: %q", out[max(0, last-200):])
		}
		if strings.Contains(out[result:], "\x1b") || strings.Contains(strings.ReplaceAll(out[result:], "\r\n", ""), "\r") {
			t.Errorf("control sequences after the result: %q", out[result:])
		}
	})

	t.Run("piped", func(t *testing.T) {
		r := mrrun(t, args...).want(t, 0)
		if r.stderr != "" {
			t.Errorf("stderr %q, want nothing", r.stderr)
		}
		if !strings.HasPrefix(r.stdout, "word ") || strings.ContainsAny(r.stdout, "\r\x1b") {
			t.Errorf("stdout %q", r.stdout)
		}
	})

	t.Run("quiet terminal", func(t *testing.T) {
		out, code := runOnPty(t, 80, append([]string{"-q"}, args...)...)
		if code != 0 {
			t.Fatalf("exit status %d; output %q", code, out)
		}
		if strings.Contains(out, "\x1b") || strings.Contains(out, "MB/s") || strings.Contains(strings.ReplaceAll(out, "\r\n", ""), "\r") {
			t.Errorf("a bar with -q: %q", out)
		}
		if !strings.HasPrefix(out, "word ") {
			t.Errorf("output %q, want the result only", out)
		}
	})

	t.Run("--progress piped", func(t *testing.T) {
		r := mrrun(t, append([]string{"--progress"}, args...)...).want(t, 0)
		if frames, _ := barFrames(r.stderr); len(frames) == 0 || !strings.HasSuffix(r.stderr, clearLine) {
			t.Errorf("--progress: stderr %q, want bar frames and the clear sequence at the end", r.stderr)
		}
	})
}
