package pgas_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
)

// TestTurns: at most Config.Turns ranks of a process hold a turn at once;
// a rank that holds one and waits for others in the runtime (Barrier,
// Notify and Wait, a contended Lock, a team's barrier) gives it back while
// it waits, so the job never deadlocks, and holds one again when the wait
// returns.
func TestTurns(t *testing.T) {
	const n, turns = 6, 2
	var inside, most atomic.Int64
	enter := func() {
		v := inside.Add(1)
		for {
			m := most.Load()
			if v <= m || most.CompareAndSwap(m, v) {
				break
			}
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := pgas.Run(ctx, pgas.Config{Ranks: n, Turns: turns}, func(ctx context.Context, r *pgas.Rank) error {
		if r.Turns() != turns {
			t.Errorf("rank %d: Turns() = %d, want %d", r.ID(), r.Turns(), turns)
		}
		l, err := r.AllLockAlloc(ctx)
		if err != nil {
			return err
		}
		team, err := r.Split(ctx, r.ID()%2)
		if err != nil {
			return err
		}
		release, err := r.TakeTurn(ctx)
		if err != nil {
			return err
		}
		enter()
		again, err := r.TakeTurn(ctx) // a rank holding a turn gets no second one
		if err != nil {
			return err
		}
		again()
		// Each wait below needs every rank: with two turns and six
		// ranks, it deadlocks unless the waiting ranks give theirs back.
		waits := []func() error{
			func() error { return r.Barrier(ctx) },
			func() error {
				if err := r.Notify(ctx); err != nil {
					return err
				}
				return r.Wait(ctx)
			},
			func() error { return team.Barrier(ctx) },
			func() error {
				if err := l.Lock(ctx); err != nil {
					return err
				}
				time.Sleep(time.Millisecond) // the others queue up behind
				return l.Unlock(ctx)
			},
			func() error { return r.Barrier(ctx) },
		}
		for _, w := range waits {
			inside.Add(-1)
			err := w()
			enter()
			if err != nil {
				return err
			}
			time.Sleep(time.Millisecond) // hold the turn for a while
		}
		inside.Add(-1)
		release()
		release() // a second call does nothing
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m > turns {
		t.Errorf("%d ranks held a turn at once, want at most %d", m, turns)
	}
}

// TestTurnWaitCancelled: a rank waiting for a turn returns its context's
// error when the context ends first.
func TestTurnWaitCancelled(t *testing.T) {
	held, tried := make(chan struct{}), make(chan struct{})
	err := pgas.Run(t.Context(), pgas.Config{Ranks: 3, Turns: 1}, func(ctx context.Context, r *pgas.Rank) error {
		switch r.ID() {
		case 0:
			release, err := r.TakeTurn(ctx)
			if err != nil {
				return err
			}
			close(held)
			<-tried // a wait outside the runtime keeps the turn
			release()
		case 1:
			<-held
			short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			_, err := r.TakeTurn(short)
			close(tried)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("TakeTurn while the only turn is held: %v, want the context's deadline", err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoTurns: a process with no more ranks than turns, or Turns < 0,
// takes none.
func TestNoTurns(t *testing.T) {
	for _, c := range []pgas.Config{{Ranks: 2, Turns: 2}, {Ranks: 8, Turns: -1}, {Ranks: runtime.GOMAXPROCS(0)}} {
		err := pgas.Run(t.Context(), c, func(ctx context.Context, r *pgas.Rank) error {
			if r.Turns() != 0 {
				t.Errorf("%+v: Turns() = %d, want 0", c, r.Turns())
			}
			release, err := r.TakeTurn(ctx)
			release()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
