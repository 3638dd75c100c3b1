package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas/launch"
	"github.com/pgasmr/pgasmr/pgas/shm"
)

// rankProcess says whether a launcher started this process as a rank:
// launcher is "shm" (mrrun's), "mpi" (an MPI launcher) or "shmem" (oshrun,
// in a build with -tags shmem), or "" for a
// process that was not; rank is then its rank, as the launcher's
// environment gives it (for MPI the rank MPI_Init will report). A problem
// with that (an MPI launcher but no MPI in this build) is reported by the
// run command with --transport mpi; other commands do not care.
func rankProcess() (launcher string, rank int) {
	kind, err := launch.Launched()
	if err != nil || kind == "" {
		return "", 0
	}
	switch kind {
	case "shm":
		rank, _ = strconv.Atoi(os.Getenv(shm.EnvRank))
	case "mpi", "shmem":
		for _, v := range []string{"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"} {
			if r, err := strconv.Atoi(os.Getenv(v)); err == nil {
				return kind, r
			}
		}
	}
	return kind, rank
}

// launchRanks runs a job of n rank processes of this program with args
// (the same command line, so each rank parses the same flags) on the shm
// transport, and turns the outcome into one error line: the failed rank's
// own error as it recorded it, or as its process printed it, or how the
// process died, or that it stayed stopped for longer than stopGrace. The
// ranks' stdout is this process's stdout (only the root's writes the
// result); their stderr is passed through except their error lines, which
// the launcher summarises. The launcher's notices (a rank is stopped, or
// continued) are "mrrun: " lines on stderr.
func launchRanks(ctx context.Context, n int, segBytes int64, stopGrace time.Duration, args []string, stdout, stderr io.Writer, bar *mr.Progress) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--transport shm: finding this program to start its ranks: %w", err)
	}
	errLines := &rankStderr{w: stderr, lines: map[int]string{}, bar: bar, seen: map[int][2]int64{}}
	env := os.Environ()
	if bar != nil {
		env = append(env, envReportProgress+"=1")
	}
	err = shm.Launch(ctx, shm.LaunchOptions{
		Ranks:        n,
		SegmentBytes: segBytes,
		Argv:         append([]string{exe}, args...),
		Env:          env,
		Stdout:       stdout,
		Stderr:       errLines,
		StopGrace:    stopGrace,
		Notice:       errLines.notice,
	})
	errLines.flush()
	if err == nil || ctx.Err() != nil {
		return err
	}
	var ee *shm.ExitError
	if !errors.As(err, &ee) {
		return err
	}
	if ee.Stopped {
		return ee // "rank N (pid P) stopped and not continued within 30s"
	}
	if line, ok := errLines.lines[ee.Rank]; ok {
		return errors.New(line + errLines.same(ee.Rank)) // the rank's own "rank N: ..." line
	}
	if ee.Reason != "" {
		return fmt.Errorf("rank %d: %s", ee.Rank, ee.Reason)
	}
	return err
}

// rankStderr passes the ranks' stderr through, except the lines
// "mrrun: rank N: ..." with which a rank reports its error: it keeps the
// first of each rank's for the launcher's summary.
type rankStderr struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	lines map[int]string
	bar   *mr.Progress     // where progress reports go (nil: none asked)
	seen  map[int][2]int64 // per rank: files and bytes reported so far
}

func (s *rankStderr) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			break
		}
		s.line(string(s.buf[:i+1]))
		s.buf = s.buf[i+1:]
	}
	return len(p), nil
}

// notice writes a notice of the launcher as an mrrun line, over the
// progress bar if there is one (the bar is drawn again below it).
func (s *rankStderr) notice(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := ""
	if s.bar != nil {
		start = clearLine
	}
	io.WriteString(s.w, start+"mrrun: "+msg+"\n")
}

func (s *rankStderr) line(l string) {
	if rest, ok := strings.CutPrefix(l, progressPrefix); ok {
		var rank int
		var files, bytes, totalFiles, totalBytes int64
		if _, err := fmt.Sscan(rest, &rank, &files, &bytes, &totalFiles, &totalBytes); err == nil && s.bar != nil {
			prev := s.seen[rank]
			s.seen[rank] = [2]int64{files, bytes}
			s.bar.SetTotal(totalFiles, totalBytes)
			s.bar.Add(files-prev[0], bytes-prev[1])
		}
		return
	}
	if rest, ok := strings.CutPrefix(l, "mrrun: rank "); ok {
		num, _, _ := strings.Cut(rest, ":")
		if r, err := strconv.Atoi(num); err == nil {
			if _, seen := s.lines[r]; !seen {
				s.lines[r] = strings.TrimSuffix("rank "+rest, "\n")
			}
			return
		}
	}
	if l == "mrrun: interrupted\n" {
		return
	}
	io.WriteString(s.w, l)
}

// same counts the other ranks whose error line has rank's text, and says
// how many: " (and 2 more ranks)", or "" for none.
func (s *rankStderr) same(rank int) string {
	_, text, _ := strings.Cut(s.lines[rank], ": ")
	more := 0
	for r, l := range s.lines {
		if _, t, _ := strings.Cut(l, ": "); r != rank && t == text {
			more++
		}
	}
	switch more {
	case 0:
		return ""
	case 1:
		return " (and 1 more rank)"
	}
	return fmt.Sprintf(" (and %d more ranks)", more)
}

func (s *rankStderr) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) > 0 {
		s.line(string(s.buf))
		s.buf = nil
	}
}

// checkStopGrace checks the value of --stop-grace: zero would mean the
// default to shm.Launch, which is not what it says.
func checkStopGrace(d time.Duration) error {
	if d == 0 {
		return usagef("--stop-grace 0: want a positive duration, or a negative one to wait for a stopped rank for ever")
	}
	return nil
}

// --stop-grace's default and help.
const (
	defaultStopGrace = shm.DefaultStopGrace
	stopGraceHelp    = "fail the job when a rank process stays stopped (SIGSTOP) this long; negative: wait for ever"
)

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// A rank process started by a launcher that draws the progress bar
// reports its own progress on stderr every progressEvery, in lines
// "<progressPrefix><rank> <files> <bytes> <total files> <total bytes>",
// which the launcher adds up and does not pass through.
const (
	envReportProgress = "PGASMR_MRRUN_PROGRESS"
	progressPrefix    = "\x00mrrun-progress: "
	progressEvery     = 100 * time.Millisecond
)

// reportProgress reports p on w until the returned function is called,
// which sends the last report.
func reportProgress(w io.Writer, p *mr.Progress) (stop func()) {
	_, rank := rankProcess()
	send := func() {
		f, b, tf, tb := p.Snapshot()
		fmt.Fprintf(w, "%s%d %d %d %d %d\n", progressPrefix, rank, f, b, tf, tb)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				send()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			send()
		})
	}
}

// stopOnWrite calls stop (idempotent) before its first write to w.
type stopOnWrite struct {
	w    io.Writer
	stop func()
}

func (s *stopOnWrite) Write(p []byte) (int, error) {
	s.stop()
	return s.w.Write(p)
}
