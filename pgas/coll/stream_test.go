package coll_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// streamSegment is a segment far smaller than the transfers of
// TestStreamingStaging: its staging area (an eighth of it per half) holds
// 16 KiB, so every priv call below streams through it in many sub-rounds.
const streamSegment = 128 << 10

// streamVal is element i of rank r's source data in TestStreamingStaging.
func streamVal(r, i int) int64 { return int64(r)<<40 | int64(i)*2654435761%1000003 }

// streamCount is how many elements rank r sends to rank d: uneven, some
// zero, most far larger than the staging area.
func streamCount(r, d int) int {
	if (r+2*d)%5 == 4 {
		return 0
	}
	return 3000 + 1777*((r*7+d*3)%11)
}

// TestStreamingStaging: the private (priv) collectives move data many
// times larger than the staging area the segment can hold, through it in
// rounds, and every rank gets what a loop over ranks says (the oracle),
// for the vector, fixed-size, and in-place families.
func TestStreamingStaging(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		for _, fill := range []int64{0, 96 << 10} {
			name := fmt.Sprintf("ranks=%d", n)
			if fill > 0 {
				// Leave the staging area less than its usual share.
				name += ",nearly-full"
			}
			t.Run(name, func(t *testing.T) {
				cfg := pgas.Config{Ranks: n, RanksPerNode: 2, SegmentBytes: streamSegment, FragmentBytes: 4096, NoCheck: n != 3}
				if err := pgas.Run(t.Context(), cfg, func(ctx context.Context, r *pgas.Rank) error {
					if fill > 0 {
						if _, err := r.AllAlloc(ctx, fill); err != nil {
							return err
						}
					}
					return streamChecks(ctx, r)
				}); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func streamChecks(ctx context.Context, r *pgas.Rank) error {
	var opts []coll.Option
	w := r.World()
	n, me := r.N(), r.ID()
	counts := make([]int, n*n)
	for s := range n {
		for d := range n {
			counts[s*n+d] = streamCount(s, d)
		}
	}
	// AllgatherV and GatherV: rank s contributes streamCount(s, s)+s*5000
	// elements.
	gcounts := make([]int, n)
	for s := range n {
		gcounts[s] = streamCount(s, s) + s*5000
	}
	mine := make([]int64, gcounts[me])
	for i := range mine {
		mine[i] = streamVal(me, i)
	}
	var want []int64
	for s := range n {
		for i := range gcounts[s] {
			want = append(want, streamVal(s, i))
		}
	}
	got := make([]int64, len(want))
	if err := coll.AllgatherV(ctx, w, coll.Private(got), coll.Private(mine), gcounts, nil, nil, opts...); err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("AllgatherV: rank %d got %s", me, diff(got, want))
	}
	root := n / 2
	var gdst []int64
	if me == root {
		gdst = make([]int64, len(want))
	}
	if err := coll.GatherV(ctx, w, coll.Private(gdst), coll.Private(mine), gcounts, nil, nil, append(opts, coll.Root(root))...); err != nil {
		return err
	}
	if me == root && !slices.Equal(gdst, want) {
		return fmt.Errorf("GatherV: root %d got %s", me, diff(gdst, want))
	}
	// ScatterV from the root: the inverse.
	sc := make([]int64, gcounts[me])
	var ssrc []int64
	if me == root {
		ssrc = want
	}
	if err := coll.ScatterV(ctx, w, coll.Private(sc), coll.Private(ssrc), gcounts, nil, nil, append(opts, coll.Root(root))...); err != nil {
		return err
	}
	if !slices.Equal(sc, mine) {
		return fmt.Errorf("ScatterV: rank %d got %s", me, diff(sc, mine))
	}

	// ExchangeV: packed in receiver order on the send side, sender order on
	// the receive side.
	var send, wantX []int64
	for d := range n {
		for i := range counts[me*n+d] {
			send = append(send, streamVal(me, d*100000+i))
		}
	}
	for s := range n {
		for i := range counts[s*n+me] {
			wantX = append(wantX, streamVal(s, me*100000+i))
		}
	}
	gotX := make([]int64, len(wantX))
	if err := coll.ExchangeV(ctx, w, coll.Private(gotX), coll.Private(send), counts, nil, nil, opts...); err != nil {
		return err
	}
	if !slices.Equal(gotX, wantX) {
		return fmt.Errorf("ExchangeV: rank %d got %s", me, diff(gotX, wantX))
	}

	// Fixed-size, in place: a later sub-round reads sources an earlier one
	// overwrote.
	const k = 9000 // elements per slot
	buf := make([]int64, n*k)
	for j := range n {
		for i := range k {
			buf[j*k+i] = streamVal(me, j*k+i)
		}
	}
	if err := coll.ExchangeInPlace(ctx, w, coll.Private(buf), k, opts...); err != nil {
		return err
	}
	for j := range n {
		for i := range k {
			if v, w := buf[j*k+i], streamVal(j, me*k+i); v != w {
				return fmt.Errorf("ExchangeInPlace: rank %d slot %d element %d = %#x, want %#x", me, j, i, v, w)
			}
		}
	}
	all := make([]int64, n*k)
	for i := range k {
		all[i] = streamVal(me, i) // the start of the region is the source
	}
	if err := coll.AllgatherInPlace(ctx, w, coll.Private(all), k, opts...); err != nil {
		return err
	}
	for j := range n {
		for i := range k {
			if v, w := all[j*k+i], streamVal(j, i); v != w {
				return fmt.Errorf("AllgatherInPlace: rank %d slot %d element %d = %#x, want %#x", me, j, i, v, w)
			}
		}
	}
	bc := make([]int64, 3*k)
	if me == root {
		for i := range bc {
			bc[i] = streamVal(root, i)
		}
	}
	if err := coll.BroadcastInPlace(ctx, w, coll.Private(bc), len(bc), append(opts, coll.Root(root))...); err != nil {
		return err
	}
	for i, v := range bc {
		if w := streamVal(root, i); v != w {
			return fmt.Errorf("BroadcastInPlace: rank %d element %d = %#x, want %#x", me, i, v, w)
		}
	}

	return nil
}

// diff describes the first difference between got and want.
func diff(got, want []int64) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d elements, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("element %d = %#x, want %#x", i, got[i], want[i])
		}
	}
	return "equal"
}
