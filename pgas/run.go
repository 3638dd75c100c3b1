package pgas

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pgasmr/pgasmr/internal/memlimit"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Transport is the interface transports implement; see package transport
// for its contract.
type Transport = transport.Transport

// RankFailedError reports that a rank failed; see package transport.
type RankFailedError = transport.RankFailedError

// ErrTimeout is wrapped by a wait for other ranks that exceeded
// Config.SyncTimeout.
var ErrTimeout = transport.ErrTimeout

// ErrReturned is wrapped by the error of a rank that waits in a barrier
// for a rank whose job function has already returned, where the transport
// can tell (inproc): the job fails at once instead of waiting for it.
var ErrReturned = transport.ErrReturned

// PanicError is the error of a rank whose function panicked.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("panic: %v\n%s", e.Value, e.Stack)
}

// launcherVars are the environment variables that give the number of
// processes a launcher started as the ranks of one job: mrrun exec and
// shm.Launch, OpenMPI's mpirun, MPICH's Hydra, Slurm's srun.
var launcherVars = []struct{ name, launcher string }{
	{"PGASMR_SHM_SIZE", "mrrun exec"},
	{"OMPI_COMM_WORLD_SIZE", "mpirun"},
	{"PMI_SIZE", "mpiexec"},
	{"SLURM_STEP_NUM_TASKS", "srun"},
}

// LaunchedProcesses says whether a launcher (mrrun exec, mpirun,
// mpiexec, srun) started this process as one of n > 1 processes, judging
// by its environment: launcher names it, and n is 0 when none did.
func LaunchedProcesses() (launcher string, n int) {
	for _, v := range launcherVars {
		if n, err := strconv.Atoi(os.Getenv(v.name)); err == nil && n > 1 {
			return v.launcher + " (" + v.name + "=" + strconv.Itoa(n) + ")", n
		}
	}
	return "", 0
}

// notLaunched returns an error if a launcher started this process as one
// of several ranks of a job: a Config without a Transport would then run
// a whole in-process job in every one of the launcher's processes, each
// printing its own copy of the result.
func notLaunched() error {
	for _, v := range launcherVars {
		if n, err := strconv.Atoi(os.Getenv(v.name)); err == nil && n > 1 {
			return fmt.Errorf("pgas: this process is one of %d that %s started (%s=%d), but Config.Transport is nil: call launch.FromEnv(cfg) before pgas.Run to run this process's rank of the launcher's job (mr/job.Run does), or set Config.Transport to inproc.New() to run in-process ranks in every process on purpose", n, v.launcher, v.name, n)
		}
	}
	return nil
}

// Run runs fn as every rank of a job that this process hosts: all of the
// ranks on the in-process transport, the one rank a launcher started this
// process for on a process transport. Each rank calls fn with its own
// *Rank. There is an implicit barrier before fn and after it.
//
// The first rank whose fn returns an error or panics fails the job: every
// other rank's blocking calls return an error naming it, the ctx passed to fn
// is cancelled, and Run returns the error wrapped with the rank ("pgas: rank
// 3: ..."). Errors that only report another rank's failure are not repeated.
// Run waits for the ranks it hosts to return; after a failure it waits at
// most Config.ShutdownTimeout and then reports the ranks that did not stop.
//
// A Config without a Transport runs in-process ranks; in a process that a
// launcher started as one of several (mrrun exec, mpirun, mpiexec, srun)
// that is an error saying to call launch.FromEnv, which joins the
// launcher's job.
func Run(ctx context.Context, cfg Config, fn func(ctx context.Context, r *Rank) error) error {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.JobID == "" {
		cfg.JobID = fmt.Sprintf("pgas-%d-%d", os.Getpid(), time.Now().UnixNano())
	}

	tr := cfg.Transport
	if tr == nil {
		if err := notLaunched(); err != nil {
			return err
		}
		tr = inproc.New()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	eps, err := tr.Open(ctx, cfg.job())
	if err != nil {
		return fmt.Errorf("pgas: %s transport: %w", tr.Name(), err)
	}
	if len(eps) == 0 {
		return fmt.Errorf("pgas: %s transport opened no endpoints", tr.Name())
	}
	// Segments are not Go heap (inproc maps them), so they no longer hold
	// the collector's goal up: while the job runs the goal stays at the
	// bytes of this process's segments, up to MaxHeapFloor, or a job with
	// a small live heap would be collected every few MiB of garbage.
	defer memlimit.HeapFloor(min(int64(len(eps))*cfg.SegmentBytes, MaxHeapFloor))()
	// Under a memory budget the collector keeps the heap near the live
	// data of the ranks hosted here, which keep to their shares, and the
	// runtime's and their pairs' (which take the slack first).
	if cfg.MemoryBytes > 0 {
		var budget int64
		for _, ep := range eps {
			budget += memoryShare(cfg, ep.Rank())
		}
		hosted := RuntimeBytes(len(eps)) + mulSat(mulSat(int64(len(eps)), int64(cfg.Ranks)), cfg.pairBytes())
		defer memlimit.GoLimit(budget + max(hosted, MemorySlack))()
	}

	type result struct {
		rank int
		err  error
	}
	turns := newTurns(cfg.Turns, len(eps))
	hosted := make([]int, len(eps))
	for i, ep := range eps {
		hosted[i] = ep.Rank()
	}
	shared := newProcShared(cfg.Ranks, hosted)
	results := make(chan result, len(eps))
	failed := make(chan struct{})
	var failOnce sync.Once
	for i, ep := range eps {
		if err := ctx.Err(); err != nil {
			// Cancelled while the ranks start (a hundred thousand of
			// them take a while): the rest do not start.
			for _, ep := range eps[i:] {
				ep.Fail(err)
				results <- result{ep.Rank(), err}
			}
			failOnce.Do(func() { close(failed); cancel() })
			break
		}
		// The endpoint's optional capabilities, asked for once.
		ep := transport.Extend(ep)
		go func() {
			err := runRank(ctx, cfg, ep, turns, shared, fn)
			if c := transport.WithCause(ctx, context.Canceled); c != context.Canceled && errors.Is(err, context.Canceled) {
				// Cancelled from outside with a cause (a signal, as
				// mrrun gives it): the cause says more than "context
				// canceled", and the rank's failure record carries it.
				err = fmt.Errorf("%v: %w", c, err)
			}
			if err != nil {
				ep.Fail(err)
				failOnce.Do(func() { close(failed); cancel() })
			} else {
				// Ranks still waiting for this one in a barrier (it
				// returned while they go on with collectives) learn it
				// now, where the transport can tell them.
				ep.Depart()
			}
			results <- result{ep.Rank(), err}
		}()
		// A failure of a rank in another process cancels ctx at once.
		if elsewhere := ep.Failed(); elsewhere != nil {
			go func() {
				select {
				case <-elsewhere:
					failOnce.Do(func() { close(failed); cancel() })
				case <-ctx.Done():
				}
			}()
		}
	}

	errs := make(map[int]error, len(eps))
	var order []int // ranks in the order their errors arrived
	pending := make(map[int]bool, len(eps))
	for _, ep := range eps {
		pending[ep.Rank()] = true
	}
	var deadline <-chan time.Time
	for len(pending) > 0 {
		select {
		case res := <-results:
			delete(pending, res.rank)
			if res.err != nil {
				errs[res.rank] = res.err
				order = append(order, res.rank)
			}
		case <-failed:
			failed = nil
			t := time.NewTimer(cfg.ShutdownTimeout)
			defer t.Stop()
			deadline = t.C
		case <-deadline:
			stuck := make([]int, 0, len(pending))
			for r := range pending {
				stuck = append(stuck, r)
			}
			slices.Sort(stuck)
			errs[-1] = fmt.Errorf("pgas: ranks %v did not return within %v of the failure", stuck, cfg.ShutdownTimeout)
			order = append(order, -1)
			pending = nil
		}
	}
	for _, ep := range eps {
		if err := ep.Close(); err != nil && errs[ep.Rank()] == nil {
			errs[ep.Rank()] = fmt.Errorf("close: %w", err)
			order = append(order, ep.Rank())
		}
	}
	return summarise(errs, order)
}

// RankError is the error one rank returned.
type RankError struct {
	Rank int
	Err  error
}

func (e *RankError) Error() string { return fmt.Sprintf("rank %d: %v", e.Rank, e.Err) }
func (e *RankError) Unwrap() error { return e.Err }

// JobError is the error of a failed job as Run reports it: the errors that
// are causes (not echoes of another rank's failure), the first to arrive
// first. Its text is one line: the first cause with its rank named once,
// and how many other ranks failed with the same text ("pgas: rank 2: bad
// input (and 3 more ranks)"); causes with other texts follow, "; "
// separated, each counted the same way.
type JobError struct {
	Causes []*RankError
	// Stuck, if not nil, reports the ranks that did not return within
	// Config.ShutdownTimeout of the failure.
	Stuck error
}

func (e *JobError) Error() string {
	var b strings.Builder
	done := make([]bool, len(e.Causes))
	for i, c := range e.Causes {
		if done[i] {
			continue
		}
		text := c.Err.Error()
		more := 0
		for j := i + 1; j < len(e.Causes); j++ {
			if !done[j] && e.Causes[j].Err.Error() == text {
				done[j] = true
				more++
			}
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "pgas: rank %d: %s", c.Rank, text)
		switch more {
		case 0:
		case 1:
			b.WriteString(" (and 1 more rank)")
		default:
			fmt.Fprintf(&b, " (and %d more ranks)", more)
		}
	}
	if e.Stuck != nil {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Stuck.Error())
	}
	return b.String()
}

// Unwrap returns the causes, so errors.Is and errors.As look at each.
func (e *JobError) Unwrap() []error {
	out := make([]error, 0, len(e.Causes)+1)
	for _, c := range e.Causes {
		out = append(out, c)
	}
	if e.Stuck != nil {
		out = append(out, e.Stuck)
	}
	return out
}

// summarise keeps the errors that are causes, not echoes of another rank's
// failure, in the order they arrived, and names the rank of each.
func summarise(errs map[int]error, order []int) error {
	if len(errs) == 0 {
		return nil
	}
	je := &JobError{}
	var echoes []*RankError
	for _, r := range order {
		err := errs[r]
		if r < 0 {
			je.Stuck = err
			continue
		}
		re := &RankError{Rank: r, Err: err}
		var rf *RankFailedError
		if errors.As(err, &rf) && rf.Rank != r || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			echoes = append(echoes, re)
		} else {
			je.Causes = append(je.Causes, re)
		}
	}
	if len(je.Causes) == 0 && je.Stuck == nil {
		// Only echoes (a cancelled job, or a cause on a rank this process
		// does not host): they all report the same failure; give the
		// lowest rank's.
		slices.SortFunc(echoes, func(a, b *RankError) int { return a.Rank - b.Rank })
		return &JobError{Causes: echoes[:1]}
	}
	return je
}

func runRank(ctx context.Context, cfg Config, ep transport.Extended, turns chan struct{}, shared *procShared, fn func(context.Context, *Rank) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	r, err := newRank(ctx, cfg, ep)
	if err != nil {
		return err
	}
	r.turns = turns
	r.shared = shared
	if err := r.Barrier(ctx); err != nil {
		return fmt.Errorf("start barrier: %w", err)
	}
	err = func() (err error) {
		defer func() {
			v := recover()
			r.pause() // a turn left held (TakeTurn) goes back to the others
			if p := r.runCleanup(); v == nil && p != nil {
				v = p
			}
			if v != nil {
				err = &PanicError{Value: v, Stack: debug.Stack()}
			}
		}()
		return fn(ctx, r)
	}()
	if err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return fmt.Errorf("end barrier: %w", err)
	}
	return nil
}
