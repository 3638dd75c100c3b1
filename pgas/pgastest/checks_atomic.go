package pgastest

import (
	"context"
	"fmt"
	"runtime"

	"github.com/pgasmr/pgasmr/pgas"
)

// checkFetchAdd: FetchAdd from every rank adds up exactly, returns old
// values consistent with a counter that only grows, and runs at the owner
// for local words too.
func checkFetchAdd(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), int64(r.ID())
	tot, err := pgas.AllAllocArray[int64](ctx, r, n, pgas.Cyclic) // element n-1 on rank n-1
	if err != nil {
		return err
	}
	spread, err := pgas.AllAllocArray[int64](ctx, r, n, pgas.Cyclic)
	if err != nil {
		return err
	}
	k := int64(scaled(r, 40))
	total := k * n * (n + 1) / 2 // rank p adds p+1, k times
	p := tot.PtrTo(n - 1)
	last := int64(-1)
	for it := range k {
		var old int64
		if it%2 == 0 {
			old, err = pgas.FetchAdd(ctx, tot, n-1, me+1)
		} else {
			old, err = r.FetchAdd(ctx, p.Rank, p.Off, me+1)
		}
		if err != nil {
			return err
		}
		if old <= last || old+me+1 > total {
			return fmt.Errorf("add %d: FetchAdd returned old value %d after %d; want a growing value below %d", it, old, last, total-me)
		}
		last = old
		for j := range n {
			if _, err := pgas.FetchAdd(ctx, spread, (me+j)%n, 1); err != nil {
				return err
			}
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if v, err := pgas.AtomicLoad(ctx, tot, n-1); err != nil || v != total {
		return fmt.Errorf("total after %d adds of id+1 by %d ranks = %d (%v); want %d", k, n, v, err, total)
	}
	if v, err := tot.Get(ctx, n-1); err != nil || v != total {
		return fmt.Errorf("Get of the total after a barrier = %d (%v); want %d", v, err, total)
	}
	for q := range n {
		if v, err := pgas.AtomicLoad(ctx, spread, q); err != nil || v != n*k {
			return fmt.Errorf("counter on rank %d = %d (%v); want %d", q, v, err, n*k)
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if me == n-1 { // delta 0 reads, a negative delta subtracts
		if old, err := pgas.FetchAdd(ctx, tot, n-1, 0); err != nil || old != total {
			return fmt.Errorf("FetchAdd(0) = %d (%v); want %d", old, err, total)
		}
		if old, err := pgas.FetchAdd(ctx, tot, n-1, -total-1); err != nil || old != total {
			return fmt.Errorf("FetchAdd(%d) = %d (%v); want %d", -total-1, old, err, total)
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if v, err := pgas.AtomicLoad(ctx, tot, n-1); err != nil || v != -1 {
		return fmt.Errorf("total after subtracting = %d (%v); want -1", v, err)
	}
	if err := spread.AllFree(ctx); err != nil {
		return err
	}
	return tot.AllFree(ctx)
}

// checkCompareAndSwap: every rank tries to swap 0 for its id+1 on a fresh
// word; exactly one wins, the others see its value, the word holds it, and
// a failing CompareAndSwap does not change the word.
func checkCompareAndSwap(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), int64(r.ID())
	rounds := int64(scaled(r, 16))
	words, err := pgas.AllAllocArray[int64](ctx, r, rounds, pgas.Cyclic) // word k on rank k%n
	if err != nil {
		return err
	}
	seen, err := pgas.AllAllocArray[int64](ctx, r, rounds*n, pgas.Cyclic) // element k*n+p on rank p
	if err != nil {
		return err
	}
	for k := range rounds {
		prev, err := pgas.CompareAndSwap(ctx, words, k, 0, me+1)
		if err != nil {
			return err
		}
		if prev < 0 || prev > n {
			return fmt.Errorf("round %d: CompareAndSwap(0, %d) returned %d, neither 0 nor a rank's id+1", k, me+1, prev)
		}
		if err := seen.Put(ctx, k*n+me, prev+1); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	winners := make([]int64, rounds)
	for k := range rounds {
		var won []int64
		saw := make([]int64, n)
		for p := range n {
			v, err := seen.Get(ctx, k*n+p)
			if err != nil {
				return err
			}
			saw[p] = v - 1
			if v == 1 {
				won = append(won, p)
			}
		}
		if len(won) != 1 {
			return fmt.Errorf("round %d: ranks %v won the election (old values seen: %v); want exactly one", k, won, saw)
		}
		w := won[0]
		winners[k] = w
		for p, v := range saw {
			if int64(p) != w && v != w+1 {
				return fmt.Errorf("round %d: rank %d lost and saw %d; want %d, the value of winner rank %d", k, p, v, w+1, w)
			}
		}
		if v, err := pgas.AtomicLoad(ctx, words, k); err != nil || v != w+1 {
			return fmt.Errorf("round %d: word holds %d (%v); want %d, the value of winner rank %d", k, v, err, w+1, w)
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if me == 0 {
		for k := range rounds {
			if prev, err := pgas.CompareAndSwap(ctx, words, k, 0, -7); err != nil || prev != winners[k]+1 {
				return fmt.Errorf("round %d: failing CompareAndSwap returned %d (%v); want %d", k, prev, err, winners[k]+1)
			}
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	for k := range rounds {
		if v, err := pgas.AtomicLoad(ctx, words, k); err != nil || v != winners[k]+1 {
			return fmt.Errorf("round %d: after a failing CompareAndSwap the word holds %d (%v); want %d", k, v, err, winners[k]+1)
		}
	}
	if err := seen.AllFree(ctx); err != nil {
		return err
	}
	return words.AllFree(ctx)
}

// checkAtomicLoad: AtomicLoad sees values put before a barrier, and sees
// other ranks' FetchAdds without a barrier, never going backwards.
func checkAtomicLoad(ctx context.Context, r *pgas.Rank) error {
	n := int64(r.N())
	a, err := pgas.AllAllocArray[int64](ctx, r, n, pgas.Cyclic)
	if err != nil {
		return err
	}
	c, err := pgas.AllAllocArray[int64](ctx, r, n, pgas.Cyclic)
	if err != nil {
		return err
	}
	if err := a.Put(ctx, int64(next(r)), val(int64(next(r)), 9)); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	for p := range n {
		ptr := a.PtrTo(p)
		v, err := r.AtomicLoad(ctx, ptr.Rank, ptr.Off)
		if err != nil {
			return err
		}
		if want := val(p, 9); v != want {
			return fmt.Errorf("AtomicLoad of element %d on rank %d = %d; want %d, put before the barrier", p, ptr.Rank, v, want)
		}
	}
	if _, err := pgas.FetchAdd(ctx, c, n-1, 1); err != nil {
		return err
	}
	last := int64(0)
	err = spinUntil(ctx, "AtomicLoad to see the FetchAdd of every rank", func() (bool, error) {
		v, err := pgas.AtomicLoad(ctx, c, n-1)
		if err != nil {
			return false, err
		}
		if v < last || v > n {
			return false, fmt.Errorf("AtomicLoad of a counter that every rank adds 1 to = %d after %d; want a growing value up to %d", v, last, n)
		}
		last = v
		return v == n, nil
	})
	if err != nil {
		return err
	}
	if err := c.AllFree(ctx); err != nil {
		return err
	}
	return a.AllFree(ctx)
}

// lockedIncrement adds 1 to counter element ci of cnt with a non-atomic
// Get and Put, checking that nobody else is in the critical section by a
// holder word (element hi) that it sets and clears.
func lockedIncrement(ctx context.Context, r *pgas.Rank, cnt *pgas.Array[int64], hi, ci int64) error {
	me := int64(r.ID())
	h, err := cnt.Get(ctx, hi)
	if err != nil {
		return err
	}
	if h != 0 {
		return fmt.Errorf("entered the critical section while rank %d is in it", h-1)
	}
	if err := cnt.Put(ctx, hi, me+1); err != nil {
		return err
	}
	v, err := cnt.Get(ctx, ci)
	if err != nil {
		return err
	}
	runtime.Gosched()
	if err := cnt.Put(ctx, ci, v+1); err != nil {
		return err
	}
	if h, err = cnt.Get(ctx, hi); err != nil {
		return err
	}
	if h != me+1 {
		return fmt.Errorf("holder word changed to %d inside the critical section", h)
	}
	return cnt.Put(ctx, hi, 0)
}

// checkLock: a lock from AllLockAlloc makes a non-atomic read-modify-write
// of a remote counter exact.
func checkLock(ctx context.Context, r *pgas.Rank) error {
	n := int64(r.N())
	l, err := r.AllLockAlloc(ctx)
	if err != nil {
		return err
	}
	if l.Ref().Home != 0 {
		return fmt.Errorf("AllLockAlloc lock is homed on rank %d; want 0", l.Ref().Home)
	}
	cnt, err := pgas.AllAllocArray[int64](ctx, r, 2*n, pgas.Cyclic) // holder 0 on rank 0, counter 2n-1 on rank n-1
	if err != nil {
		return err
	}
	k := int64(scaled(r, 20))
	for range k {
		if err := l.Lock(ctx); err != nil {
			return err
		}
		if err := lockedIncrement(ctx, r, cnt, 0, 2*n-1); err != nil {
			return err
		}
		if err := l.Unlock(ctx); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if v, err := cnt.Get(ctx, 2*n-1); err != nil || v != n*k {
		return fmt.Errorf("counter incremented %d times by %d ranks under the lock = %d (%v); want %d", k, n, v, err, n*k)
	}
	// There is no way to free a lock (upc_lock_free); its 16 bytes stay.
	return cnt.AllFree(ctx)
}

// checkTryLock: TryLock fails while the lock is held (also by the caller),
// exactly one of several simultaneous TryLocks on a free lock succeeds, and
// TryLock-based critical sections are exclusive.
func checkTryLock(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), int64(r.ID())
	l, err := r.AllLockAlloc(ctx)
	if err != nil {
		return err
	}
	cnt, err := pgas.AllAllocArray[int64](ctx, r, 2*n, pgas.Cyclic)
	if err != nil {
		return err
	}
	won, err := pgas.AllAllocArray[int64](ctx, r, n, pgas.Cyclic)
	if err != nil {
		return err
	}
	tryLock := func(want bool, what string) error {
		ok, err := l.TryLock(ctx)
		if err != nil {
			return err
		}
		if ok != want {
			return fmt.Errorf("TryLock %s = %v; want %v", what, ok, want)
		}
		return nil
	}
	// Held by rank 0.
	if me == 0 {
		if err := l.Lock(ctx); err != nil {
			return err
		}
		if err := tryLock(false, "by the holder"); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if me != 0 {
		if err := tryLock(false, "while rank 0 holds the lock"); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if me == 0 {
		if err := l.Unlock(ctx); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	// Free: exactly one winner.
	ok, err := l.TryLock(ctx)
	if err != nil {
		return err
	}
	mark := int64(1)
	if ok {
		mark = 2
	}
	if err := won.Put(ctx, me, mark); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	var winners []int64
	for p := range n {
		v, err := won.Get(ctx, p)
		if err != nil {
			return err
		}
		if v == 2 {
			winners = append(winners, p)
		} else if v != 1 {
			return fmt.Errorf("rank %d's TryLock result slot = %d; want 1 or 2", p, v)
		}
	}
	if len(winners) != 1 {
		return fmt.Errorf("TryLock on a free lock by %d ranks at once succeeded on ranks %v; want exactly one", n, winners)
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if ok {
		if err := l.Unlock(ctx); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	// Critical sections entered with TryLock.
	k := int64(scaled(r, 10))
	for range k {
		err := spinUntil(ctx, "TryLock to succeed", func() (bool, error) { return l.TryLock(ctx) })
		if err != nil {
			return err
		}
		if err := lockedIncrement(ctx, r, cnt, 0, 2*n-1); err != nil {
			return err
		}
		if err := l.Unlock(ctx); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if v, err := cnt.Get(ctx, 2*n-1); err != nil || v != n*k {
		return fmt.Errorf("counter incremented %d times by %d ranks under TryLock = %d (%v); want %d", k, n, v, err, n*k)
	}
	if err := won.AllFree(ctx); err != nil {
		return err
	}
	// There is no way to free a lock (upc_lock_free); its 16 bytes stay.
	return cnt.AllFree(ctx)
}
