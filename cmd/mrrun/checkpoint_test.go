package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/apps/wordcount"
	"github.com/pgasmr/pgasmr/internal/checkpoint"
)

// checkpointCorpus generates a corpus large enough that a checkpointed
// count saves several snapshots before it ends.
func checkpointCorpus(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "corpus")
	mrrun(t, "gen", "wordcount", "--size", "12MiB", "--files", "24", "--seed", "3", dir).want(t, 0)
	return dir
}

// savedChunks is how many chunks the states in dir list, and how many
// states there are.
func savedChunks(dir string) (chunks, states int) {
	fs, _ := filepath.Glob(filepath.Join(dir, "rank-*.json"))
	for _, f := range fs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var s checkpoint.State
		if json.Unmarshal(b, &s) == nil {
			chunks += len(s.Done)
			states++
		}
	}
	return chunks, states
}

// killWhenSaved starts mrrun with args, waits until the checkpoint dir
// holds a state of every rank (want states) with at least one chunk, then
// SIGKILLs victim(cmd) and waits for the launch to end.
func killWhenSaved(t *testing.T, dir string, states int, victim func(cmd *exec.Cmd) int, args ...string) (chunks int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, n := savedChunks(dir); n >= states && c > 0 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("mrrun ended (%v) before every rank saved a snapshot; stderr:\n%s", err, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			t.Fatalf("no snapshot of every rank after 60 s; stderr:\n%s", errb.String())
		}
	}
	if err := syscall.Kill(victim(cmd), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Fatalf("mrrun exited 0 after a SIGKILL; stderr:\n%s", errb.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("mrrun still running 30 s after the SIGKILL")
	}
	chunks, _ = savedChunks(dir)
	return chunks
}

// TestCheckpointKilled: a checkpointed wordcount SIGKILLed part-way and run
// again with the same command gives the bytes of --baseline seq, says
// that it resumes, and removes its checkpoint; under shm, one rank
// process is the one killed.
func TestCheckpointKilled(t *testing.T) {
	corpus := checkpointCorpus(t)
	want := mrrun(t, "--baseline", "seq", "wordcount", corpus).want(t, 0).stdout
	for _, tc := range []struct {
		name   string
		args   []string
		victim func(cmd *exec.Cmd) int
	}{
		{"inproc", nil, func(cmd *exec.Cmd) int { return cmd.Process.Pid }},
		{"shm", []string{"--transport", "shm"}, func(cmd *exec.Cmd) int {
			for _, k := range children(cmd.Process.Pid) {
				if rankOfPID(k) == 1 {
					return k
				}
			}
			t.Fatal("no process of rank 1")
			return 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ck")
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"-np", "2", "-q", "--checkpoint", dir, "-o", out}, tc.args...)
			args = append(args, "wordcount", corpus)
			chunks := killWhenSaved(t, dir, 2, tc.victim, args...)
			if chunks == 0 {
				t.Fatal("nothing saved")
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("killed run left -o: %v", err)
			}
			args[2] = "--verbose" // not -q: the resume line
			res := mrrun(t, args...).want(t, 0)
			if !strings.Contains(res.stderr, "mrrun: checkpoint "+dir+": resuming") {
				t.Fatalf("rerun's stderr does not say it resumes:\n%s", res.stderr)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Fatalf("resumed count differs from --baseline seq (%d bytes, want %d)", len(got), len(want))
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("checkpoint left after the result was written: %v", err)
			}
			t.Logf("%s: %d chunks were saved when the run was killed", tc.name, chunks)
		})
	}
}

// TestCheckpointFlags: --checkpoint applies to wordcount's own job only,
// and a directory of other files is refused with the file's name.
func TestCheckpointFlags(t *testing.T) {
	corpus := testInput(t, "wordcount")
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--checkpoint", dir, "histogram", testInput(t, "histogram")}, "--checkpoint does not apply to histogram"},
		{[]string{"--checkpoint", dir, "--baseline", "seq", "wordcount", corpus}, "--checkpoint has no effect with --baseline seq"},
		{[]string{"--checkpoint", dir, "-o", dir, "wordcount", corpus}, "--checkpoint " + dir + ": the same path as an output"},
	} {
		res := mrrun(t, tc.args...)
		if res.code != 2 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("mrrun %q: status %d, stderr %q; want 2 and %q", tc.args, res.code, res.stderr, tc.want)
		}
	}
	os.WriteFile(filepath.Join(dir, "notes"), []byte("x"), 0o600)
	res := mrrun(t, "--checkpoint", dir, "wordcount", corpus)
	if res.code != 1 || strings.Count(res.stderr, "\n") != 1 || !strings.Contains(res.stderr, fmt.Sprintf("checkpoint %s: holds \"notes\"", dir)) {
		t.Errorf("checkpoint into a directory of other files: status %d, stderr %q", res.code, res.stderr)
	}
}

// BenchmarkCheckpointResume measures what a checkpoint saves: each round
// runs a checkpointed wordcount at -np 2 to the end (full), then runs it
// again, SIGKILLs it (the launcher, or under shm rank 1's process) once
// its saved states list 70% of the chunks, and times the same command
// run again (rerun). It reports the medians and rerun/full. The corpus is
// $PGASMR_BENCH_CORPUS, or 256 MiB from mrrun gen.
//
//	go test -run xxx -bench CheckpointResume -benchtime 5x ./cmd/mrrun
func BenchmarkCheckpointResume(b *testing.B) {
	if raceEnabled {
		b.Skip("times a race build")
	}
	corpus := os.Getenv("PGASMR_BENCH_CORPUS")
	if corpus == "" {
		corpus = filepath.Join(b.TempDir(), "corpus")
		if res := mrrun(b, "gen", "wordcount", "--size", "256MiB", "--files", "256", "--seed", "1", corpus); res.code != 0 {
			b.Fatal(res.stderr)
		}
	}
	var total int64
	filepath.WalkDir(corpus, func(p string, d iofs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				total += (fi.Size() + wordcount.DefaultChunkBytes - 1) / wordcount.DefaultChunkBytes
			}
		}
		return err
	})
	for _, tr := range []string{"inproc", "shm"} {
		b.Run(tr, func(b *testing.B) {
			var fulls, reruns []float64
			var at []float64
			for b.Loop() {
				dir := filepath.Join(b.TempDir(), "ck")
				out := filepath.Join(b.TempDir(), "out")
				args := []string{"-np", "2", "-q", "--transport", tr, "--checkpoint", dir, "-o", out, "wordcount", corpus}
				t0 := time.Now()
				if res := mrrun(b, args...); res.code != 0 {
					b.Fatal(res.stderr)
				}
				fulls = append(fulls, time.Since(t0).Seconds())
				cmd := exec.Command(binPath, args...)
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				for {
					if c, _ := savedChunks(dir); float64(c) >= 0.7*float64(total) {
						at = append(at, float64(c)/float64(total))
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				victim := cmd.Process.Pid
				if tr == "shm" {
					for _, k := range children(victim) {
						if rankOfPID(k) == 1 {
							victim = k
						}
					}
				}
				syscall.Kill(victim, syscall.SIGKILL)
				cmd.Wait()
				t0 = time.Now()
				if res := mrrun(b, args...); res.code != 0 {
					b.Fatal(res.stderr)
				}
				reruns = append(reruns, time.Since(t0).Seconds())
			}
			med := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
			f, r := med(fulls), med(reruns)
			b.ReportMetric(f, "full-s")
			b.ReportMetric(r, "rerun-s")
			b.ReportMetric(r/f, "rerun/full")
			b.ReportMetric(med(at), "killed-at")
		})
	}
}
