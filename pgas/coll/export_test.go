package coll

import (
	"errors"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
)

// ForceGlobalPlan makes a call run from the global plan of every chunk on
// every member even where a structured plan serves: the path the
// structured plans must match, chunk for chunk and message for message.
func ForceGlobalPlan() Option { return func(o *options) { o.global = true } }

// CheckPlans makes a call that runs from a structured plan also build the
// global plan and pass fail every difference between the two that this
// member can see: a chunk it sends or receives with another count, offset
// or staging offset, or another need.
func CheckPlans(fail func(error)) Option {
	return func(o *options) {
		o.verify = func(t *pgas.Team, esz int64, p *pairPlan, ms []move) {
			if err := comparePlans(t, esz, p, ms); err != nil {
				fail(err)
			}
		}
	}
}

// comparePlans stages the global plan ms as round and subRound do, and
// compares this member's chunks and the need with p's.
func comparePlans(t *pgas.Team, esz int64, p *pairPlan, ms []move) error {
	me := t.Rank().ID()
	used := map[int]int64{}
	var need int64
	var errs []error
	sent := make([]bool, t.Size())
	got := make([]bool, t.Size())
	check := func(what string, tid int, ch pchunk, m move, at, stage int64, staged bool) {
		if ch.n != m.n || m.n > 0 && ch.at != at || staged && ch.stage != stage {
			errs = append(errs, fmt.Errorf("rank %d: %s team id %d: structured %+v, global %+v staged at %d (staged %v)",
				me, what, tid, ch, m, stage, staged))
		}
	}
	for _, m := range ms {
		staged := m.n > 0 && m.src.rank != m.dst.rank
		var stage int64
		if staged {
			stage = used[m.dst.rank]
			used[m.dst.rank] += m.n * esz
			need = max(need, used[m.dst.rank])
		}
		if m.src.rank == me {
			j := t.TeamID(m.dst.rank)
			check("send to", j, p.send(j), m, m.src.idx, stage, staged)
			sent[j] = true
		}
		if m.dst.rank == me {
			i := t.TeamID(m.src.rank)
			check("receive from", i, p.recv(i), m, m.dst.idx, stage, staged)
			got[i] = true
		}
	}
	for j := range p.size {
		if s := p.send(j); s.n > 0 && !sent[j] {
			errs = append(errs, fmt.Errorf("rank %d: structured plan sends %+v to team id %d, the global plan nothing", me, s, j))
		}
	}
	for i := range p.size {
		if r := p.recv(i); r.n > 0 && !got[i] {
			errs = append(errs, fmt.Errorf("rank %d: structured plan receives %+v from team id %d, the global plan nothing", me, r, i))
		}
	}
	if need != p.need {
		errs = append(errs, fmt.Errorf("rank %d: structured plan needs %d staging bytes, global plan %d", me, p.need, need))
	}
	return errors.Join(errs...)
}
