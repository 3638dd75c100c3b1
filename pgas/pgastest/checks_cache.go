package pgastest

import (
	"context"
	"errors"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
)

// The checks of this file hold with and without the remote-reference
// cache (pgas.Config.Cache): they are the promises the cache must keep.

// checkStaleRead: a value read before a barrier (and so perhaps cached)
// is never what a rank reads after the barrier once its owner has changed
// it; likewise across Notify/Wait for a read made between the two, and
// across a lock handed from rank to rank. Each round every owner rewrites
// its own elements, the others read them all.
func checkStaleRead(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), int64(r.ID())
	const per = 64 // elements per rank, a few lines of any size
	a, err := pgas.AllAllocArray[int64](ctx, r, n*per, per)
	if err != nil {
		return err
	}
	readAll := func(round int, what string) error {
		for i := range n * per {
			v, err := a.Get(ctx, i)
			if err != nil {
				return err
			}
			if want := tag(int(i/per), round) + i%per; v != want {
				return fmt.Errorf("%s, round %d: element %d (rank %d's) = %d, want %d", what, round, i, i/per, v, want)
			}
		}
		return nil
	}
	write := func(round int) {
		for k := range a.Local() {
			a.Local()[k] = tag(int(me), round) + int64(k)
		}
	}
	rounds := scaled(r, 6)
	write(0)
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	for round := range rounds {
		if err := readAll(round, "after a barrier"); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		write(round + 1)
		// Split phase: read the old values between Notify and Wait is
		// not allowed (the owners are writing), so read only after Wait.
		if err := r.Notify(ctx); err != nil {
			return err
		}
		if err := r.Wait(ctx); err != nil {
			return err
		}
		if err := readAll(round+1, "after Notify/Wait"); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
	}
	return a.AllFree(ctx)
}

// checkSplitPhaseRead: a rank that reads remote data between its Notify
// and Wait (data that does not change, next to data its owner writes
// before its Notify: a cache loads both in one line) still reads, after
// Wait, what the owners wrote before their Notify.
func checkSplitPhaseRead(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), int64(r.ID())
	a, err := pgas.AllAllocArray[int64](ctx, r, 2*n, 2) // elements 2p and 2p+1 on rank p
	if err != nil {
		return err
	}
	// b: a second array the ranks read between Notify and Wait; its
	// values do not change.
	b, err := pgas.AllAllocArray[int64](ctx, r, 2*n, 2)
	if err != nil {
		return err
	}
	b.Local()[0], b.Local()[1] = tag(int(me), 99), tag(int(me), 98)
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	for round := range scaled(r, 8) {
		a.Local()[0], a.Local()[1] = tag(int(me), round), tag(int(me), round)+1
		if err := r.Notify(ctx); err != nil {
			return err
		}
		for p := range n {
			v, err := b.Get(ctx, 2*p)
			if err != nil {
				return err
			}
			if v != tag(int(p), 99) {
				return fmt.Errorf("round %d: b[%d] = %d between Notify and Wait, want %d", round, 2*p, v, tag(int(p), 99))
			}
		}
		if err := r.Wait(ctx); err != nil {
			return err
		}
		for p := range n {
			v, err := a.Get(ctx, 2*p+1)
			if err != nil {
				return err
			}
			if want := tag(int(p), round) + 1; v != want {
				return fmt.Errorf("round %d: a[%d] = %d after Wait, want %d (stale)", round, 2*p+1, v, want)
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
	}
	return errors.Join(a.AllFree(ctx), b.AllFree(ctx))
}

// wide is an element of 80 bytes, more than a small line holds.
type wide [10]int64

// checkFalseSharing: ranks write different bytes of the same lines (byte
// i by rank i%N, and 80-byte elements by rank i%N), then pass a barrier:
// every byte holds what its writer wrote. A cache that wrote back bytes
// it did not write would lose other ranks' writes. (No rank reads in the
// write phase: that would race with the writers.)
func checkFalseSharing(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), int64(r.ID())
	const per = 3000
	a, err := pgas.AllAllocArray[byte](ctx, r, n*per, per)
	if err != nil {
		return err
	}
	w, err := pgas.AllAllocArray[wide](ctx, r, n*40, 40)
	if err != nil {
		return err
	}
	val := func(i, round int64) byte { return byte(i*7 + round*3 + i%n + 1) }
	wval := func(i, round int64) wide {
		var x wide
		for k := range x {
			x[k] = i*1000 + round*10 + int64(k) + 1
		}
		return x
	}
	for round := range int64(scaled(r, 3)) {
		for i := me; i < n*per; i += n {
			if err := a.Put(ctx, i, val(i, round)); err != nil {
				return err
			}
		}
		for i := me; i < n*40; i += n {
			if err := w.Put(ctx, i, wval(i, round)); err != nil {
				return err
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		base := me * per
		for k, v := range a.Local() {
			if want := val(base+int64(k), round); v != want {
				return fmt.Errorf("round %d: byte %d = %d, want %d (written by rank %d)", round, base+int64(k), v, want, (base+int64(k))%n)
			}
		}
		for k, v := range w.Local() {
			i := me*40 + int64(k)
			if want := wval(i, round); v != want {
				return fmt.Errorf("round %d: wide element %d = %v, want %v (written by rank %d)", round, i, v, want, i%n)
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
	}
	return errors.Join(a.AllFree(ctx), w.AllFree(ctx))
}

// checkLockedCounter: a counter on rank 0 incremented by every rank
// through element Get and Put (cached, if a cache is on) under a lock:
// the lock's atomics write back and drop what a rank cached, so no
// increment is lost.
func checkLockedCounter(ctx context.Context, r *pgas.Rank) error {
	n := int64(r.N())
	cnt, err := pgas.AllAllocArray[int64](ctx, r, n, n) // all on rank 0
	if err != nil {
		return err
	}
	l, err := r.AllLockAlloc(ctx)
	if err != nil {
		return err
	}
	k := int64(scaled(r, 40))
	for range k {
		if err := l.Lock(ctx); err != nil {
			return err
		}
		v, err := cnt.Get(ctx, 1%n)
		if err != nil {
			return err
		}
		if err := cnt.Put(ctx, 1%n, v+1); err != nil {
			return err
		}
		if err := l.Unlock(ctx); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	v, err := cnt.Get(ctx, 1%n)
	if err != nil {
		return err
	}
	if v != k*n {
		return fmt.Errorf("counter = %d after %d ranks added %d each under a lock, want %d", v, n, k, k*n)
	}
	return cnt.AllFree(ctx)
}
