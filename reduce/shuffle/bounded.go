package shuffle

import (
	"context"
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/reduce"
)

// Bounded rounds. A rank whose store spills (reduce.Store.SetSpill, set by
// package mr under pgas.Config.MemoryBytes) holds more pairs than its
// share of memory, so no gather mode can encode them all at once and
// receive everyone's: when any rank has spilled, every move of the reduce
// stage goes in rounds instead. In a round each rank reads the next pairs
// of its drained store (a stream merging its spilled runs,
// reduce.Store.DrainStream) up to a round's bytes and moves them as the
// unbounded path moves all of them: to their partitions (coll.AlltoallV,
// a round's bytes from each rank, a part of it to each destination), to
// the root (GatherV) or to every rank (AllgatherV), a part of a round from
// each rank. A receiving rank adds what it gets to its store, which spills
// it past the budget, and after the last round (agreed by an allreduce)
// the store, drained as a stream, is what the rank reduces or moves next
// (Merge's gather to the root after the partitioned exchange). So a rank
// holds, besides its store's budget and the open files of the stream it
// reads, a round's pairs to send and about a round's received (exactly
// at most a round plus one record a rank, however the keys hash).
//
// Received runs combine in the order they arrive (round, then sending
// rank), which for a commutative, associative combiner (integer sums,
// min, max) gives the result of the unbounded path exactly, and for a
// store that keeps all values too (their tags order them); a
// floating-point sum is regrouped, as across rank counts. A combiner
// that is not commutative, and element-by-element transfer, move the
// unbounded way.

// roundFraction is the part of a rank's memory share a round may send.
const roundFraction = 4

// minDestBytes is the least a round sends to one destination, however
// many ranks share a round's bytes: a round is then at least a few records
// a rank pair.
const minDestBytes = 4 << 10

// boundedWanted reports whether Collect moves s's pairs in rounds: the
// stores spill, and one of them has (the others learn it from an
// allreduce, so every rank must give its store the same budget, as
// package mr does). A job whose pairs fit in memory moves them in one
// step, as without a budget.
func boundedWanted[K comparable, V any](ctx context.Context, r *pgas.Rank, s *reduce.Store[K, V], o reduce.Options) (bool, error) {
	c := s.Combiner()
	if !s.Spilling() || o.Transfer == reduce.ElementByElement || !c.KeepsAll() && !c.Commutative() {
		return false, nil
	}
	spilled := []int64{0}
	if files, _ := s.Spilled(); files > 0 {
		spilled[0] = 1
	}
	if err := coll.AllreduceInPlace(ctx, r.World(), coll.Private(spilled), 1, coll.Max[int64]()); err != nil {
		return false, fmt.Errorf("reduce: did any rank spill: %w", err)
	}
	return spilled[0] > 0, nil
}

// collectRounds is Collect's movement in bounded rounds, the store
// drained as a stream: it returns the stream of the pairs this rank
// reduces. sunk says whether the map folded pairs into the node's table
// (the store's sink), which this rank's partition of then joins its
// stream; otherwise the node is not combined.
func (x *xfer[K, V]) collectRounds(ctx context.Context, o reduce.Options, sunk bool) (rd reduce.RunReader[K, V], ok bool, err error) {
	r := x.r
	t0 := time.Now()
	rd, err = x.s.DrainStream()
	if err != nil {
		return nil, false, err
	}
	defer func() {
		if !ok && rd != nil {
			rd.Close()
		}
	}()
	x.st.Combine = time.Since(t0)
	if sunk {
		// The node table's partition of this rank, with the pairs the rank
		// kept, merged as a stream.
		t0 = time.Now()
		mine, err := x.nodeCombine(ctx, reduce.Run[K, V]{}, o)
		x.st.Node = time.Since(t0)
		if err != nil {
			return nil, false, err
		}
		rd = x.s.MergeReaders(reduce.ReadRun(mine), rd)
	}
	t0 = time.Now()
	defer func() { x.st.Exchange += time.Since(t0) }()
	total := max(x.s.SpillBudget()/roundFraction, minDestBytes)
	n := r.N()
	part := max(total/int64(n), minDestBytes)
	if n == 1 {
		return rd, true, nil // the stream is the rank's, whatever the gather
	}
	switch o.Gather {
	case reduce.GatherPartitioned:
		hash := func(kb []byte) int { return int(xxhash.Sum64(kb) % uint64(n)) }
		rd, err = x.rounds(ctx, rd, total, part, hash, x.exchange)
	case reduce.GatherAll:
		rd, err = x.rounds(ctx, rd, part, part, nil, x.allgather)
	case reduce.GatherRoot:
		rd, err = x.rounds(ctx, rd, part, part, nil, func(ctx context.Context, e reduce.Run[K, V]) ([]reduce.Run[K, V], error) {
			return x.gather(ctx, e, o.Root)
		})
		if err == nil && r.ID() != o.Root {
			return nil, false, rd.Close()
		}
	}
	if err != nil {
		return nil, false, err
	}
	if o.Merge && (o.Gather == reduce.GatherNone || o.Gather == reduce.GatherPartitioned) {
		rd, err = x.rounds(ctx, rd, part, part, nil, func(ctx context.Context, e reduce.Run[K, V]) ([]reduce.Run[K, V], error) {
			return x.gather(ctx, e, o.Root)
		})
		if err != nil {
			return nil, false, err
		}
		if r.ID() != o.Root {
			return nil, false, rd.Close()
		}
	}
	return rd, true, nil
}

// rounds moves the pairs src yields in rounds with move, adding what this
// rank receives to x's store, and returns the store drained as a stream.
// A round takes pairs until they reach total bytes, or the pairs for one
// destination reach part bytes, where dest (nil: one destination) says
// which rank an encoded key goes to. It closes src.
func (x *xfer[K, V]) rounds(ctx context.Context, src reduce.RunReader[K, V], total, part int64, dest func(kb []byte) int, move func(context.Context, reduce.Run[K, V]) ([]reduce.Run[K, V], error)) (reduce.RunReader[K, V], error) {
	defer src.Close()
	more := true
	var kb, vb []byte
	to := make([]int64, x.r.N())
	for round := 0; ; round++ {
		var batch reduce.Run[K, V]
		if x.all {
			batch.Off = []int{0}
		}
		var bytes int64
		clear(to)
		for more && bytes < total {
			if !src.Next() {
				more = false
				if err := src.Err(); err != nil {
					return nil, err
				}
				break
			}
			k, vs := src.Key(), src.Values()
			kb = x.kc.Append(kb[:0], k)
			rec := int64(len(kb)) * int64(len(vs))
			if f := x.vc.Fixed(); f > 0 {
				rec += int64(f * len(vs))
			} else {
				for _, v := range vs {
					vb = x.vc.Append(vb[:0], v)
					rec += int64(len(vb))
				}
			}
			batch.Keys = append(batch.Keys, k)
			batch.Vals = append(batch.Vals, vs...)
			if x.all {
				batch.Tags = append(batch.Tags, src.Tags()...)
				batch.Off = append(batch.Off, len(batch.Vals))
				rec += tagBytes * int64(len(vs))
			}
			bytes += rec
			d := 0
			if dest != nil {
				d = dest(kb)
			}
			to[d] += rec
			if to[d] >= part {
				break
			}
		}
		runs, err := move(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("round %d of a bounded move: %w", round, err)
		}
		for from, e := range runs {
			if len(e.Keys) == 0 {
				continue
			}
			if err := x.s.AddRun(e); err != nil {
				return nil, fmt.Errorf("round %d of a bounded move, pairs of rank %d: %w", round, from, err)
			}
		}
		x.st.Rounds++
		// Another round while any rank has pairs left.
		left := []int64{0}
		if more {
			left[0] = 1
		}
		if err := coll.AllreduceInPlace(ctx, x.r.World(), coll.Private(left), 1, coll.Max[int64]()); err != nil {
			return nil, fmt.Errorf("round %d of a bounded move: %w", round, err)
		}
		if left[0] == 0 {
			break
		}
	}
	return x.s.DrainStream()
}
