package pgas

import (
	"sync"
	"sync/atomic"
)

// Tables shared by the ranks of one process. A table that every member of
// a team computes alike from single-valued arguments (a collective's plan,
// a broadcast tree) need not exist once per member: with every rank in one
// process (inproc) that is a copy per rank of a table per rank, memory in
// the square of the ranks. Team.Shared and Team.SharedOnce keep one copy
// per process, made by whichever member asks first; members must only
// read it.

// procShared is what the ranks a process hosts in one job share.
type procShared struct {
	hosted []bool   // by rank: hosted in this process; nil: all of them
	vals   sync.Map // sharedKey to *sharedEntry: read by every rank at once
}

// sharedKey names a shared value: the team (the offset of its control
// block, which a job's teams never free, and its leader: the disjoint
// teams of one Split share the offset) and the caller's key.
type sharedKey struct {
	ctl    int64
	leader int
	key    any
}

type sharedEntry struct {
	once     sync.Once
	val      any
	panicked any   // mk's panic, raised again on every member that asks
	left     int32 // SharedOnce: local members yet to take it
}

func newProcShared(ranks int, eps []int) *procShared {
	s := &procShared{}
	if len(eps) != ranks {
		s.hosted = make([]bool, ranks)
		for _, r := range eps {
			s.hosted[r] = true
		}
	}
	return s
}

// local returns how many members of t this process hosts.
func (s *procShared) local(t *Team) int {
	if s.hosted == nil {
		return t.size
	}
	n := 0
	for tid := range t.size {
		if s.hosted[t.RankOf(tid)] {
			n++
		}
	}
	return n
}

// entry returns the entry of k, made if new with left set to local().
func (s *procShared) entry(k sharedKey, local func() int) *sharedEntry {
	if e, ok := s.vals.Load(k); ok {
		return e.(*sharedEntry)
	}
	e := &sharedEntry{}
	if local != nil {
		e.left = int32(local())
	}
	v, _ := s.vals.LoadOrStore(k, e)
	return v.(*sharedEntry)
}

func (e *sharedEntry) get(mk func() any) any {
	e.once.Do(func() {
		defer func() {
			if v := recover(); v != nil {
				e.panicked = v
			}
		}()
		e.val = mk()
	})
	if e.panicked != nil {
		panic(e.panicked)
	}
	return e.val
}

// Shared returns the value stored under key for t in this process, made
// by mk on the first call of any member of t hosted here: the members a
// process hosts share one copy, kept for the job's life. mk must give
// the same value on every member (a function of single-valued arguments
// only); the members must not change it. If mk panics, every member that
// asks panics with its value. key must be comparable.
func (t *Team) Shared(key any, mk func() any) any {
	s := t.r.shared
	if s == nil {
		return mk()
	}
	return s.entry(sharedKey{t.ctl, t.Leader(), key}, nil).get(mk)
}

// SharedOnce is Shared for a value each member hosted here asks for once
// (a collective call's plan, key naming the call, such as its number among
// the team's calls): it is dropped once the last of them has taken it,
// and lives on only in the members that still hold it.
func (t *Team) SharedOnce(key any, mk func() any) any {
	s := t.r.shared
	if s == nil {
		return mk()
	}
	k := sharedKey{t.ctl, t.Leader(), key}
	if t.local == 0 {
		t.local = s.local(t)
	}
	e := s.entry(k, func() int { return t.local })
	v := func() any {
		defer func() {
			if atomic.AddInt32(&e.left, -1) == 0 {
				s.vals.Delete(k)
			}
		}()
		return e.get(mk)
	}()
	return v
}
