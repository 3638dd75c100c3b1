package shuffle

import (
	"context"
	"fmt"

	"github.com/cespare/xxhash/v2"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/reduce"
)

// The bounded exchange. A rank whose store spills (reduce.Store.SetSpill,
// set by package mr under pgas.Config.MemoryBytes) holds more pairs than
// its share of memory, so the partitioned gather cannot encode them all
// at once and receive everyone's: it moves them in rounds instead. In a
// round each rank reads the next pairs of its drained store (a stream
// merging its spilled runs, reduce.Store.DrainStream) until it holds a
// round's bytes, or its pairs for one destination reach that rank's part
// of a round, and exchanges them as the unbounded path exchanges all of
// them (coll.AlltoallV); a rank adds what it receives to its store, which
// spills it past the budget, and after the last round (agreed by an
// allreduce) drains it, merged. So a rank holds, besides its store's
// budget, at most a round's pairs to send and, however the keys hash,
// about a round's received from all ranks together (a part of a round
// from each).
//
// Received runs combine in the order they arrive (round, then sending
// rank), which for a commutative, associative combiner (integer sums,
// min, max) gives the result of the unbounded path exactly; a
// floating-point sum is regrouped, as across rank counts. A combiner that
// is not commutative, or a store that keeps all values, moves its pairs
// the unbounded way.

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
// exchange, as without a budget.
func boundedWanted[K comparable, V any](ctx context.Context, r *pgas.Rank, s *reduce.Store[K, V], o reduce.Options) (bool, error) {
	c := s.Combiner()
	if !s.Spilling() || o.Gather != reduce.GatherPartitioned || o.Transfer == reduce.ElementByElement ||
		c.KeepsAll() || !c.Commutative() || r.N() == 1 {
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

// roundBytes returns the bytes a round sends from each rank, and to each
// destination.
func roundBytes(r *pgas.Rank, s interface{ SpillBudget() int64 }) (total, perDest int64) {
	total = max(s.SpillBudget()/roundFraction, minDestBytes)
	return total, max(total/int64(r.N()), minDestBytes)
}

// exchangeRounds moves the pairs rd yields to their partitions in rounds,
// adding what this rank receives to x's store, and returns the store
// drained: the merge of every rank's pairs of this rank's partition.
// It closes rd.
func (x *xfer[K, V]) exchangeRounds(ctx context.Context, rd reduce.RunReader[K, V]) (reduce.Run[K, V], error) {
	defer rd.Close()
	total, perDest := roundBytes(x.r, x.s)
	n := x.r.N()
	w := x.r.World()
	more := true
	var kb, vb []byte
	dest := make([]int64, n)
	for round := 0; ; round++ {
		// This round's pairs: until the stream ends, the round's bytes are
		// reached, or one destination's part is.
		var batch reduce.Run[K, V]
		var bytes int64
		clear(dest)
		for more && bytes < total {
			if !rd.Next() {
				more = false
				if err := rd.Err(); err != nil {
					return reduce.Run[K, V]{}, err
				}
				break
			}
			k, vs := rd.Key(), rd.Values()
			if len(vs) != 1 {
				return reduce.Run[K, V]{}, fmt.Errorf("reduce: key %v of a combined run has %d values", k, len(vs))
			}
			kb = x.kc.Append(kb[:0], k)
			d := int(xxhash.Sum64(kb) % uint64(n))
			rec := int64(len(kb))
			if f := x.vc.Fixed(); f > 0 {
				rec += int64(f)
			} else {
				vb = x.vc.Append(vb[:0], vs[0])
				rec += int64(len(vb))
			}
			batch.Keys = append(batch.Keys, k)
			batch.Vals = append(batch.Vals, vs[0])
			bytes += rec
			dest[d] += rec
			if dest[d] >= perDest {
				break
			}
		}
		runs, err := x.exchange(ctx, batch)
		if err != nil {
			return reduce.Run[K, V]{}, fmt.Errorf("round %d of the bounded exchange: %w", round, err)
		}
		for src, e := range runs {
			if len(e.Keys) == 0 {
				continue
			}
			if err := x.s.AddRun(e); err != nil {
				return reduce.Run[K, V]{}, fmt.Errorf("round %d of the bounded exchange, pairs of rank %d: %w", round, src, err)
			}
		}
		x.st.Rounds++
		// Another round while any rank has pairs left.
		left := []int64{0}
		if more {
			left[0] = 1
		}
		if err := coll.AllreduceInPlace(ctx, w, coll.Private(left), 1, coll.Max[int64]()); err != nil {
			return reduce.Run[K, V]{}, fmt.Errorf("round %d of the bounded exchange: %w", round, err)
		}
		if left[0] == 0 {
			break
		}
	}
	out, err := x.s.DrainStream()
	if err != nil {
		return reduce.Run[K, V]{}, err
	}
	defer out.Close()
	return x.s.ReadAll(out)
}
