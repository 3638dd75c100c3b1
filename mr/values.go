package mr

import (
	"context"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/vmihailenco/msgpack/v5"
)

// GatherValues is collective: every rank passes its value v, and root gets
// every rank's value, in rank order; the other ranks get nil. It carries a
// job's per-rank side results, what is not a pair (the files a rank read,
// the ones it skipped), to the rank that builds the result, so that they
// need not travel as fake keys. T is encoded with msgpack: exported
// fields, slices, maps and strings move; T need not be pointer-free. A T
// that msgpack would not give back whole (a struct with an unexported
// field, an interface, a channel or a function) is an error naming it.
func GatherValues[T any](ctx context.Context, r *pgas.Rank, v T, root int) ([]T, error) {
	if root < 0 || root >= r.N() {
		return nil, fmt.Errorf("mr: GatherValues: root %d is not a rank (ranks are 0 to %d)", root, r.N()-1)
	}
	return gatherValues(ctx, r, v, root, false)
}

// AllGatherValues is GatherValues with every rank getting every value.
func AllGatherValues[T any](ctx context.Context, r *pgas.Rank, v T) ([]T, error) {
	return gatherValues(ctx, r, v, 0, true)
}

func gatherValues[T any](ctx context.Context, r *pgas.Rank, v T, root int, all bool) ([]T, error) {
	if err := movable[T](); err != nil {
		return nil, fmt.Errorf("mr: gathering values: %w", err)
	}
	mine, err := msgpack.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("mr: encoding rank %d's %T: %w", r.ID(), v, err)
	}
	n := r.N()
	lens := make([]int64, n)
	if err := coll.Allgather(ctx, r.World(), coll.Private(lens), coll.Private([]int64{int64(len(mine))}), 1); err != nil {
		return nil, fmt.Errorf("mr: gathering value sizes: %w", err)
	}
	counts := make([]int, n)
	total := 0
	for i, l := range lens {
		counts[i] = int(l)
		total += int(l)
	}
	var recv []byte
	if all || r.ID() == root {
		recv = make([]byte, total)
	}
	if all {
		err = coll.AllgatherV(ctx, r.World(), coll.Private(recv), coll.Private(mine), counts, nil, nil)
	} else {
		err = coll.GatherV(ctx, r.World(), coll.Private(recv), coll.Private(mine), counts, nil, nil, coll.Root(root))
	}
	if err != nil {
		return nil, fmt.Errorf("mr: gathering values: %w", err)
	}
	if recv == nil {
		return nil, nil
	}
	out := make([]T, n)
	off := 0
	for i, c := range counts {
		if err := msgpack.Unmarshal(recv[off:off+c], &out[i]); err != nil {
			return nil, fmt.Errorf("mr: decoding rank %d's %T: %w", i, out[i], err)
		}
		off += c
	}
	return out, nil
}

// BroadcastValue is collective: root passes v, and every rank gets it
// (root its own v, the others a copy decoded from root's encoding; the
// other ranks' v is unused). T is encoded with msgpack, as in
// GatherValues. It is how one rank's look at the outside world (a
// directory listing, a file's header) becomes every rank's, so that ranks
// agree on it and the work is done once per job instead of once per rank.
func BroadcastValue[T any](ctx context.Context, r *pgas.Rank, v T, root int) (T, error) {
	var zero T
	if root < 0 || root >= r.N() {
		return zero, fmt.Errorf("mr: BroadcastValue: root %d is not a rank (ranks are 0 to %d)", root, r.N()-1)
	}
	if err := movable[T](); err != nil {
		return zero, fmt.Errorf("mr: BroadcastValue: %w", err)
	}
	if r.N() == 1 {
		return v, nil
	}
	var enc []byte
	n := []int64{0}
	if r.ID() == root {
		var err error
		if enc, err = msgpack.Marshal(v); err != nil {
			return zero, fmt.Errorf("mr: encoding rank %d's %T: %w", root, v, err)
		}
		n[0] = int64(len(enc))
	}
	if err := coll.Broadcast(ctx, r.World(), coll.Private(n), coll.Private(n), 1, coll.Root(root)); err != nil {
		return zero, fmt.Errorf("mr: BroadcastValue from root %d: %w", root, err)
	}
	if r.ID() != root {
		enc = make([]byte, n[0])
	}
	if err := coll.Broadcast(ctx, r.World(), coll.Private(enc), coll.Private(enc), len(enc), coll.Root(root)); err != nil {
		return zero, fmt.Errorf("mr: BroadcastValue from root %d: %w", root, err)
	}
	if r.ID() == root {
		return v, nil
	}
	var out T
	if err := msgpack.Unmarshal(enc, &out); err != nil {
		return zero, fmt.Errorf("mr: decoding rank %d's %T: %w", root, out, err)
	}
	return out, nil
}

// fromRoot is collective: rank 0 runs f and every rank gets its value
// (BroadcastValue). If f fails, rank 0 returns its error and every other
// rank runs f itself, so that it returns f's own error (typed, naming the
// path at fault) rather than a copy of rank 0's text; a rank whose own
// run succeeds (what f looks at changed in between) returns an error
// quoting rank 0's. It is how a job looks at the outside world once
// instead of once per rank.
func fromRoot[T any](ctx context.Context, r *pgas.Rank, f func() (T, error)) (T, error) {
	type result struct {
		Value  T
		Failed string // rank 0's error, "" if f succeeded
	}
	var mine result
	var rootErr error
	if r.ID() == 0 {
		mine.Value, rootErr = f()
		if rootErr != nil {
			mine = result{Failed: rootErr.Error()}
		}
	}
	got, err := BroadcastValue(ctx, r, mine, 0)
	var zero T
	switch {
	case err != nil:
		return zero, err
	case rootErr != nil:
		return zero, rootErr
	case got.Failed == "":
		return got.Value, nil
	}
	if _, err := f(); err != nil {
		return zero, err
	}
	return zero, fmt.Errorf("mr: rank 0 failed where rank %d did not: %s", r.ID(), got.Failed)
}
