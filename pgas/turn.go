package pgas

import (
	"context"
	"runtime"
)

// Turns. When a process hosts more ranks than it has processors to run
// them (64 in-process ranks on a 2-core laptop), the ranks that compute
// can take turns: TakeTurn gives a rank one of Config.Turns turns,
// blocking (on no processor) until one is free, and the rank keeps it
// until it releases it. A rank that waits for other ranks in the runtime
// (Barrier, Wait, Lock, a team's barrier) gives its turn back while it
// waits and takes one again before it returns, so a rank that holds a
// turn never keeps the ranks it waits for from running. Without turns
// the Go scheduler shares the processors among all the ranks, in slices
// of up to 10 ms: a rank that holds something the others want (a stripe
// of its node's table, package reduce/shuffle) can be set aside for
// tens of milliseconds while every other rank gets its slice. With
// them, only as many ranks as there are processors are runnable, and a
// rank set aside is back at once.
//
// Turns only order the ranks of one process; in a process with no more
// ranks than turns (one rank a process, under shm or MPI, or a few
// in-process ranks) TakeTurn returns at once.

// newTurns returns the turns of a process hosting hosted ranks under
// Config.Turns n, or nil if its ranks need none.
func newTurns(n, hosted int) chan struct{} {
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if n < 0 || n >= hosted {
		return nil
	}
	return make(chan struct{}, n)
}

// TakeTurn blocks until this rank holds one of its process's turns (see
// Config.Turns) and returns the function that gives it back; it fails only
// if ctx ends first. A rank that holds a turn already, or a process whose
// ranks take no turns, returns at once, and release then does nothing.
// Hold a turn for a stretch of work that waits for nobody, such as a map:
// a wait in the runtime gives the turn back for its duration, but a wait
// outside it (a channel, a lock of the Go library) keeps it.
func (r *Rank) TakeTurn(ctx context.Context) (release func(), err error) {
	if r.turns == nil || r.turn {
		return func() {}, nil
	}
	if err := r.take(ctx); err != nil {
		return func() {}, err
	}
	return func() {
		if r.turn {
			r.turn = false
			<-r.turns
		}
	}, nil
}

// Turns returns how many of its process's ranks hold a turn at most (see
// TakeTurn), or 0 if its ranks take no turns.
func (r *Rank) Turns() int { return cap(r.turns) }

func (r *Rank) take(ctx context.Context) error {
	select {
	case r.turns <- struct{}{}:
		r.turn = true
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// pause gives this rank's turn back, if it holds one, for a wait on other
// ranks; resume takes a turn again after it.
func (r *Rank) pause() (resume func(ctx context.Context) error) {
	if !r.turn {
		return func(context.Context) error { return nil }
	}
	r.turn = false
	<-r.turns
	return r.take
}
