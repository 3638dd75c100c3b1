package shm

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Environment variables through which Launch tells a child which rank it
// is. FromEnv reads them.
const (
	EnvRank         = "PGASMR_SHM_RANK"          // this process's rank, in [0, size)
	EnvSize         = "PGASMR_SHM_SIZE"          // the number of ranks
	EnvJob          = "PGASMR_SHM_JOB"           // the job id
	EnvSegment      = "PGASMR_SHM_SEGMENT"       // the path of the job's file in /dev/shm
	EnvSegmentBytes = "PGASMR_SHM_SEGMENT_BYTES" // the capacity of every rank's segment
)

// Launch defaults.
const (
	// DefaultSegmentBytes is LaunchOptions.SegmentBytes when it is zero,
	// the same as pgas.DefaultSegmentBytes.
	DefaultSegmentBytes = 16 << 20
	// DefaultKillGrace is LaunchOptions.KillGrace when it is zero.
	DefaultKillGrace = 3 * time.Second
	// DefaultStopGrace is LaunchOptions.StopGrace when it is zero.
	DefaultStopGrace = 30 * time.Second
)

// Prefix starts the name of every segment file this package makes in
// Dir: "pgasmr-shm-<launcher pid>-<job id>".
const Prefix = "pgasmr-shm-"

// Dir is where segment files live.
const Dir = "/dev/shm"

// Size limits.
const (
	// MaxRanks is the largest job Launch starts.
	MaxRanks = 4096
	// maxJobID bounds the job id in a segment name.
	maxJobID = 64
)

// LaunchOptions describes a job for Launch.
type LaunchOptions struct {
	// Ranks is the number of rank processes, in [1, MaxRanks].
	Ranks int
	// Argv is the command every rank runs: the program (looked up in PATH
	// if it has no slash) and its arguments.
	Argv []string
	// Env is the environment of the ranks, to which Launch adds the
	// EnvRank ... EnvSegmentBytes variables. Nil means os.Environ().
	Env []string
	// Dir is the working directory of the ranks; empty means the
	// launcher's.
	Dir string
	// Stdout and Stderr receive the output of every rank. Nil means the
	// launcher's os.Stdout and os.Stderr. A writer that is not an *os.File
	// is written from several goroutines, one write at a time.
	Stdout, Stderr io.Writer
	// SegmentBytes is the capacity of every rank's segment, a multiple of
	// 8: the largest pgas.Config.SegmentBytes the ranks may use (they read
	// it with Transport.SegmentBytes). Zero means DefaultSegmentBytes.
	// Launch reserves the whole file in /dev/shm before it starts a rank
	// (Ranks times SegmentBytes, rounded up to pages, plus a control area
	// of a page or more), so that a /dev/shm without room for it fails the
	// launch with one line, and a /dev/shm that fills up later cannot kill
	// a rank: all of it is memory for as long as the job runs, touched or
	// not.
	SegmentBytes int64
	// JobID names the job and its file in /dev/shm ("pgasmr-shm-<launcher
	// pid>-<JobID>"): letters, digits, '-', '_' and '.', at most 64. Empty
	// means one made from the time.
	JobID string
	// KillGrace is how long Launch waits, after the first rank fails or
	// ctx is cancelled, for the other ranks to exit before it kills them
	// with SIGKILL. Zero means DefaultKillGrace.
	KillGrace time.Duration
	// StopGrace is how long a rank's process may stay stopped (by SIGSTOP,
	// SIGTSTP, SIGTTIN or SIGTTOU) before Launch fails the job, as if the
	// rank had died, and kills it: the other ranks would wait for it in
	// their next barrier until their time-out. Zero means
	// DefaultStopGrace; a negative value means waiting for as long as it
	// takes.
	StopGrace time.Duration
	// Notice, if not nil, is called with what Launch has to say to the
	// user while the job runs, one line without a newline: that a rank is
	// stopped ("rank 2 (pid 4242) is stopped; the job fails if it stays
	// stopped for 30s (kill -CONT 4242 continues it)"), which it says
	// within a few seconds of the stop, and that it was continued. It
	// is called from Launch's goroutine, one call at a time, while the
	// ranks may be writing to Stderr. Nil means writing each line to
	// Stderr, prefixed with "shm: ".
	Notice func(msg string)
	// Started, if not nil, is called with each rank's process id as it
	// starts.
	Started func(rank, pid int)
}

// Validate reports every problem with o, joined into one error, or nil.
func (o LaunchOptions) Validate() error {
	var errs []error
	if o.Ranks < 1 || o.Ranks > MaxRanks {
		errs = append(errs, fmt.Errorf("shm: Ranks = %d, want 1 to %d", o.Ranks, MaxRanks))
	}
	if len(o.Argv) == 0 || o.Argv[0] == "" {
		errs = append(errs, errors.New("shm: Argv is empty, want the program to run"))
	}
	if o.SegmentBytes < 0 || o.SegmentBytes%8 != 0 {
		errs = append(errs, fmt.Errorf("shm: SegmentBytes = %d, want a non-negative multiple of 8", o.SegmentBytes))
	}
	if o.JobID != "" {
		if err := validJobID(o.JobID); err != nil {
			errs = append(errs, err)
		}
	}
	if o.KillGrace < 0 {
		errs = append(errs, fmt.Errorf("shm: KillGrace = %v is negative", o.KillGrace))
	}
	return errors.Join(errs...)
}

// validJobID reports whether id may appear in a segment name.
func validJobID(id string) error {
	if id == "" || len(id) > maxJobID {
		return fmt.Errorf("shm: job id %q: want 1 to %d characters", id, maxJobID)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("shm: job id %q: only letters, digits, '-', '_' and '.' are allowed", id)
		}
	}
	return nil
}

// ExitError describes how a rank's process ended.
type ExitError struct {
	Rank, PID int
	// Status is how the process ended, as os.ProcessState says it ("exit
	// status 1", "signal: killed"), or why it did not start, or, if
	// Stopped, "stopped and not continued within <StopGrace>".
	Status string
	// Code is the exit code, or -1 if the process died by a signal.
	Code int
	// Reason is the failure the job recorded for this rank, if any: the
	// text of the rank's error.
	Reason string
	// Stopped reports that the process stayed stopped for longer than
	// LaunchOptions.StopGrace and Launch killed it. The error then reads
	// "rank 2 (pid 4242) stopped and not continued within 30s": the rank
	// and pid are what the user looks for.
	Stopped bool
}

func (e *ExitError) Error() string {
	s := fmt.Sprintf("process %d %s", e.PID, e.Status)
	if e.Stopped {
		s = fmt.Sprintf("rank %d (pid %d) %s", e.Rank, e.PID, e.Status)
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// RemoteError is the cause of another rank's failure as that rank (or the
// launcher) recorded it: the text of its error, and whether it was a
// cancellation, a deadline or a time-out (errors.Is with context.Canceled,
// context.DeadlineExceeded and transport.ErrTimeout tells).
type RemoteError struct {
	Text     string
	sentinel error
}

func (e *RemoteError) Error() string { return e.Text }

func (e *RemoteError) Unwrap() error { return e.sentinel }
