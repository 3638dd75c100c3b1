package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/pgasmr/pgasmr/pgas/launch"
)

// How long mrrun waits, after the first SIGINT or SIGTERM, for a run to
// stop by itself before it exits anyway. A job notices the cancelled
// context between reads, but a read or an open that blocks in the kernel
// (a hung network file system, a FIFO that got past the input checks)
// does not return: mrrun then runs the forced-exit functions and exits.
// A rank process waits less than its launcher, so that its launcher sees
// it exit and cleans up the job before its own deadline.
const (
	interruptGrace     = time.Second
	rankInterruptGrace = 500 * time.Millisecond
	// rankLinger is how long the other ranks of an OpenMPI job wait, after
	// a signal, before they exit: mpirun kills the ranks left once one has
	// exited, and rank 0 must have written the job's line (Announce) by
	// then, also on a busy machine.
	rankLinger = 200 * time.Millisecond
	// forcedExitBound bounds the forced-exit functions and the last line,
	// in case they block too (a stderr nobody reads).
	forcedExitBound = 250 * time.Millisecond
)

// forcedExit says when mrrun stops waiting for an interrupted command and
// how it exits then.
type forcedExit struct {
	// Grace is how long after the first signal the command may take to
	// return; 0 means as long as it takes, and a second signal does not
	// cut that short either.
	Grace time.Duration
	// Rank says this process is a rank of a launcher's job: it exits
	// without a line (its launcher prints one for the job), and only Grace
	// ends it early, not a second signal (the launcher passes a terminal's
	// SIGINT on to ranks that got it already).
	Rank bool
	// Announce says this rank process writes the job's line,
	// "mrrun: interrupted by SIGTERM", as soon as a signal comes: rank 0
	// of an MPI launcher's job, since mpirun and mpiexec print none (and
	// OpenMPI's mpirun kills the ranks left once one has exited).
	Announce bool
	// Linger is how long a rank process that does not announce waits,
	// after the first signal, before it returns (rankLinger under
	// OpenMPI's mpirun).
	Linger time.Duration
}

// forcedExitFor returns the forced-exit rule of mrrun with args (without
// the program name): runs of apps have one; gen, bench and exec do not
// (they remove what they generated, or kill what they launched, after
// their command returns; list, help and version return at once anyway).
func forcedExitFor(args []string) forcedExit {
	kind, _ := launch.Launched()
	rank := kind != ""
	_, n := rankProcess()
	announce := kind == "mpi" && n == 0
	var linger time.Duration
	if kind == "mpi" && n != 0 && os.Getenv("OMPI_COMM_WORLD_SIZE") != "" {
		linger = rankLinger
	}
	if len(args) > 0 {
		switch args[0] { // as in dispatch
		case "gen", "bench", "exec":
			return forcedExit{Rank: rank, Announce: announce, Linger: linger}
		}
	}
	if rank {
		return forcedExit{Grace: rankInterruptGrace, Rank: true, Announce: announce, Linger: linger}
	}
	return forcedExit{Grace: interruptGrace}
}

// runWithDeadline runs fn and returns its exit status. The first value on
// sig cancels fn's context; if fn has not returned fe.Grace later, or when
// a second value comes (unless fe.Rank), runWithDeadline runs the
// functions fn registered with atForcedExit on its context (removing
// temporary output files), writes "mrrun: interrupted" to stderr (unless
// fe.Rank) and returns 130 without waiting for fn, whose goroutine is left
// behind: the caller exits. With fe.Announce the first value also writes
// "mrrun: interrupted by SIG...", at once; with fe.Linger, fn returning
// after it does not return before fe.Linger has passed.
func runWithDeadline(ctx context.Context, sig <-chan os.Signal, fe forcedExit, stderr io.Writer, fn func(ctx context.Context) int) int {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fx := new(forcedExits)
	ctx = context.WithValue(ctx, forcedExitsKey{}, fx)
	done := make(chan int, 1)
	go func() { done <- fn(ctx) }()
	interrupted := false
	var lingerUntil time.Time
	var expired <-chan time.Time
	for {
		select {
		case code := <-done:
			if interrupted {
				time.Sleep(time.Until(lingerUntil))
			}
			return code
		case s := <-sig:
			if !interrupted {
				interrupted = true
				lingerUntil = time.Now().Add(fe.Linger)
				if fe.Announce {
					fmt.Fprintf(stderr, "mrrun: %v\n", signalError{s})
				}
				cancel(signalError{s}) // the ranks' errors name it
				if fe.Grace > 0 {
					t := time.NewTimer(fe.Grace)
					defer t.Stop()
					expired = t.C
				}
				continue
			}
			if fe.Grace > 0 && !fe.Rank {
				return forceExit(fx, stderr, fe.Rank)
			}
		case <-expired:
			return forceExit(fx, stderr, fe.Rank)
		}
	}
}

// signalError is the cause of a run cancelled by a signal: a rank
// process's error names it, where it would say "context canceled".
type signalError struct{ sig os.Signal }

// Signal is the signal. The MPI transport looks for this method in the
// cause of a cancelled job: a job a signal ended is not aborted.
func (e signalError) Signal() os.Signal { return e.sig }

func (e signalError) Error() string {
	names := map[os.Signal]string{os.Interrupt: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}
	if name, ok := names[e.sig]; ok {
		return "interrupted by " + name
	}
	return "interrupted by " + e.sig.String()
}

// forceExit runs the forced-exit functions of fx and writes the line, for
// at most forcedExitBound, and returns 130; or, if the run's result was
// in place before (fx.committed), says nothing and returns 0.
func forceExit(fx *forcedExits, stderr io.Writer, rank bool) int {
	finished := make(chan struct{})
	committed := false // the run's result was in place: no line, status 0 (commitOutput)
	go func() {
		defer close(finished)
		fx.run()
		fx.Lock()
		committed = fx.committed
		fx.Unlock()
		if !rank && !committed {
			line := fmt.Sprintf("mrrun: %v\n", errInterrupted)
			if isTerminal(stderr) {
				line = clearLine + line // over a progress bar nobody stopped
			}
			io.WriteString(stderr, line)
		}
	}()
	select {
	case <-finished:
		if committed {
			return 0
		}
	case <-time.After(forcedExitBound):
	}
	return 130
}

// forcedExits are the functions a forced exit of one run (runWithDeadline)
// runs, by registration number; once it has run them, closed is set and a
// function registered later runs at once (its file may have been created
// after the forced exit began).
type forcedExits struct {
	sync.Mutex
	next   int
	fns    map[int]func()
	closed bool
	// committed says the run's result is in place (commitOutput, under
	// the lock): a forced exit after it is the run's success.
	committed bool
}

// forcedExitsKey is the context key of a run's forcedExits.
type forcedExitsKey struct{}

// atForcedExit registers fn to run if mrrun exits without waiting for the
// command that ctx belongs to (runWithDeadline); the returned function
// unregisters it. A ctx of no such command (a test calling a command
// itself) registers nothing. fn must be quick and safe to call
// concurrently with the command's goroutines: removing a temporary file,
// stopping a progress bar.
//
//	tmp, err := os.CreateTemp(dir, pattern)
//	...
//	defer atForcedExit(ctx, func() { os.Remove(tmp.Name()) })()
func atForcedExit(ctx context.Context, fn func()) (unregister func()) {
	fx, _ := ctx.Value(forcedExitsKey{}).(*forcedExits)
	if fx == nil {
		return func() {}
	}
	fx.Lock()
	if fx.closed {
		fx.Unlock()
		fn()
		return func() {}
	}
	if fx.fns == nil {
		fx.fns = map[int]func(){}
	}
	id := fx.next
	fx.next++
	fx.fns[id] = fn
	fx.Unlock()
	return func() {
		fx.Lock()
		delete(fx.fns, id)
		fx.Unlock()
	}
}

// run runs the registered functions, the latest first, and closes fx.
func (fx *forcedExits) run() {
	fx.Lock()
	fx.closed = true
	ids := make([]int, 0, len(fx.fns))
	for id := range fx.fns {
		ids = append(ids, id)
	}
	fns := fx.fns
	fx.fns = nil
	fx.Unlock()
	slices.Sort(ids)
	for _, id := range slices.Backward(ids) {
		fns[id]()
	}
}
