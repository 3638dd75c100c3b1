package pgas

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// LockRef names a lock: two int64 words (next ticket, now serving) at
// (Home, Off). It is plain data, so it can be stored in a shared array and
// opened by other ranks with Rank.OpenLock.
type LockRef struct {
	Home int
	Off  int64
}

// Lock is a fair (FIFO) ticket lock built on atomics executed at the lock's
// home rank, so the same code runs on every transport. Lock acquires in
// ticket order; TryLock never waits; Unlock fences first, so the puts of the
// critical section are complete at their targets before the next holder
// enters.
type Lock struct {
	r   *Rank
	ref LockRef
	reg Region // set on the handle that allocated the lock
	own bool
}

// Ref returns the lock's reference.
func (l *Lock) Ref() LockRef { return l.ref }

// AllLockAlloc is collective (upc_all_lock_alloc): every rank gets the same
// lock, homed on rank 0.
func (r *Rank) AllLockAlloc(ctx context.Context) (*Lock, error) {
	reg, err := r.AllAlloc(ctx, 16)
	if err != nil {
		return nil, err
	}
	return &Lock{r: r, ref: LockRef{Home: 0, Off: reg.Off}, reg: reg, own: true}, nil
}

// GlobalLockAlloc is called by one rank (upc_global_lock_alloc): the lock is
// homed on the caller, and other ranks open it from its Ref.
func (r *Rank) GlobalLockAlloc(ctx context.Context) (*Lock, error) {
	reg, err := r.Alloc(ctx, 16)
	if err != nil {
		return nil, err
	}
	return &Lock{r: r, ref: LockRef{Home: r.id, Off: reg.Off}, reg: reg, own: true}, nil
}

// Free releases a lock made by GlobalLockAlloc (upc_lock_free); only the
// rank that allocated it may call it, when no rank uses the lock any more.
func (l *Lock) Free(ctx context.Context) error {
	if !l.own || l.reg.Symmetric() {
		return fmt.Errorf("pgas: rank %d: Free of a lock it did not allocate with GlobalLockAlloc (use AllFree for AllLockAlloc locks)", l.r.id)
	}
	return l.r.Free(ctx, l.reg)
}

// AllFree is collective: it releases a lock made by AllLockAlloc.
func (l *Lock) AllFree(ctx context.Context) error {
	if !l.own || !l.reg.Symmetric() {
		return fmt.Errorf("pgas: rank %d: AllFree of a lock not made by AllLockAlloc", l.r.id)
	}
	return l.r.AllFree(ctx, l.reg)
}

// OpenLock returns this rank's handle on the lock ref names.
func (r *Rank) OpenLock(ref LockRef) *Lock {
	r.checkRank(ref.Home)
	return &Lock{r: r, ref: ref}
}

// Lock blocks until this rank holds the lock. It fails with an error
// wrapping ErrTimeout after Config.SyncTimeout; the lock is then unusable
// (the ticket taken is never served) and the job should fail.
func (l *Lock) Lock(ctx context.Context) (err error) {
	r := l.r
	t, err := r.FetchAdd(ctx, l.ref.Home, l.ref.Off, 1)
	if err != nil {
		return fmt.Errorf("pgas: lock: %w", err)
	}
	defer r.waiting()(ctx, &err)
	var deadline time.Time
	if r.cfg.SyncTimeout > 0 {
		deadline = time.Now().Add(r.cfg.SyncTimeout)
	}
	for spin := 0; ; spin++ {
		s, err := r.AtomicLoad(ctx, l.ref.Home, l.ref.Off+8)
		if err != nil {
			return fmt.Errorf("pgas: lock: %w", err)
		}
		if s == t {
			return nil
		}
		if spin&63 == 63 && !deadline.IsZero() && time.Now().After(deadline) {
			return fmt.Errorf("pgas: rank %d: lock at rank %d offset %d: ticket %d waited %v, serving %d: %w",
				r.id, l.ref.Home, l.ref.Off, t, r.cfg.SyncTimeout, s, ErrTimeout)
		}
		r.backoff(spin)
	}
}

// waiting returns, for a wait that spins with backoff, the function to
// defer: once backoff has given the rank's turn back, it takes one again.
func (r *Rank) waiting() func(ctx context.Context, err *error) {
	r.spinResume = nil
	return func(ctx context.Context, err *error) {
		if resume := r.spinResume; resume != nil {
			r.spinResume = nil
			if e := resume(ctx); *err == nil {
				*err = e
			}
		}
	}
}

// backoff waits before a spin of a wait for other ranks: the first time,
// it gives the rank's turn back (pause; waiting takes it again).
func (r *Rank) backoff(spin int) {
	if r.spinResume == nil && r.turn {
		r.spinResume = r.pause()
	}
	backoff(spin)
}

// backoff yields for the first spins and then sleeps, up to 100µs.
func backoff(spin int) {
	if spin < 16 {
		runtime.Gosched()
		return
	}
	d := time.Microsecond << min(spin-16, 7)
	time.Sleep(d)
}

// TryLock takes the lock if it is free and reports whether it did
// (upc_lock_attempt). It never waits.
func (l *Lock) TryLock(ctx context.Context) (bool, error) {
	r := l.r
	s, err := r.AtomicLoad(ctx, l.ref.Home, l.ref.Off+8)
	if err != nil {
		return false, fmt.Errorf("pgas: trylock: %w", err)
	}
	prev, err := r.CompareAndSwap(ctx, l.ref.Home, l.ref.Off, s, s+1)
	if err != nil {
		return false, fmt.Errorf("pgas: trylock: %w", err)
	}
	return prev == s, nil
}

// Unlock releases the lock after a Fence. Unlocking a lock this rank does
// not hold is a programmer error the lock cannot detect.
func (l *Lock) Unlock(ctx context.Context) error {
	if err := l.r.Fence(ctx); err != nil {
		return fmt.Errorf("pgas: unlock: %w", err)
	}
	if _, err := l.r.FetchAdd(ctx, l.ref.Home, l.ref.Off+8, 1); err != nil {
		return fmt.Errorf("pgas: unlock: %w", err)
	}
	return nil
}
