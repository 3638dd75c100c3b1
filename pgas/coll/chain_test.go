package coll_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

type triple [3]int32 // 12 bytes: chunks are not a power of two

// TestChainBroadcast: private broadcasts along the chain, with chunks far
// smaller than the message (the ring wraps many times) and a 9 MiB message
// in the default chunks, roots rotating
// from call to call (a member is receiver, sender, root and last in turn,
// so the counters carry over between calls), in place and not, give every
// member the root's data.
func TestChainBroadcast(t *testing.T) {
	for _, ranks := range []int{2, 3, 5} {
		t.Run(fmt.Sprintf("ranks=%d", ranks), func(t *testing.T) {
			err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
				for call := range 4 * ranks {
					root := call % ranks
					inPlace := call%2 == 0
					seg := []int64{64, 12, 1 << 20, 0}[call%4] // 5, 1 and all elements a chunk; no Segment option
					n := 1000
					if seg == 0 {
						n = (9<<20)/12 + 7 // 37 chunks, the last short: the ring wraps four times
					}
					want := func(i int) triple { return triple{int32(call), int32(root), int32(i)} }
					buf := make([]triple, n)
					var src []triple
					if r.ID() == root {
						src = make([]triple, n)
						for i := range src {
							src[i] = want(i)
						}
						if inPlace {
							copy(buf, src)
						}
					}
					opts := []coll.Option{coll.Root(root), coll.WithAlgo(coll.Chain)}
					if seg > 0 {
						opts = append(opts, coll.Segment(seg))
					}
					var err error
					if inPlace {
						err = coll.BroadcastInPlace(ctx, r.World(), coll.Private(buf), n, opts...)
					} else {
						err = coll.Broadcast(ctx, r.World(), coll.Private(buf), coll.Private(src), n, opts...)
					}
					if err != nil {
						return err
					}
					for i, v := range buf {
						if v != want(i) {
							return fmt.Errorf("call %d (root %d, in place %v, segment %d): rank %d element %d = %v, want %v", call, root, inPlace, seg, r.ID(), i, v, want(i))
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestChainMessages: along the chain every hop carries one put per 256 KiB
// chunk and two atomics per chunk (the arrival, then the acknowledgement),
// and nothing else, so a rank sends to its successor only (also over a
// 9 MiB message, whose ring wraps): Auto takes the chain for a private
// broadcast of 512 KiB on one node and not below it, and never on a
// transport whose segments are not mapped in memory.
func TestChainMessages(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bytes  int
		mapped bool
		chain  bool
	}{
		{"auto/1MiB", 1 << 20, true, true},
		{"auto/9MiB", 9<<20 + 24, true, true},
		{"auto/256KiB", 256 << 10, true, false},
		{"auto/1MiB/not-mapped", 1 << 20, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const ranks = 3
			cfg := pgas.Config{Ranks: ranks, SegmentBytes: 32 << 20, NoCheck: true}
			if !tc.mapped {
				cfg.Transport = wrap.NewLatency(inproc.New(), 0)
			}
			err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
				n := tc.bytes / 8
				buf := make([]float64, n)
				if r.ID() == 0 {
					for i := range buf {
						buf[i] = float64(i)
					}
				}
				if err := coll.BroadcastInPlace(ctx, r.World(), coll.Private(buf), n); err != nil { // allocates the ring
					return err
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				r.ResetStats()
				if err := coll.BroadcastInPlace(ctx, r.World(), coll.Private(buf), n); err != nil {
					return err
				}
				st := r.Stats()
				for i, v := range buf {
					if v != float64(i) {
						return fmt.Errorf("rank %d element %d = %v", r.ID(), i, v)
					}
				}
				chunks := int64((tc.bytes + 256<<10 - 1) / (256 << 10))
				puts, atomics := st.Remote[pgas.OpPut], st.Remote[pgas.OpAtomic]
				if !tc.chain {
					if atomics != 0 {
						return fmt.Errorf("rank %d: %d remote atomics; want the staged broadcast, without any", r.ID(), atomics)
					}
					return nil
				}
				wantPuts, wantAtomics := chunks, 2*chunks // sender: puts and arrivals; receiver: acks
				switch r.ID() {
				case 0:
					wantAtomics = chunks
				case ranks - 1:
					wantPuts, wantAtomics = 0, chunks
				}
				if puts != wantPuts || atomics != wantAtomics {
					return fmt.Errorf("rank %d: %d puts and %d remote atomics; want %d and %d", r.ID(), puts, atomics, wantPuts, wantAtomics)
				}
				for q, p := range st.Peers {
					if want := r.ID() == q+1 || r.ID()+1 == q; p.Messages > 0 && !want {
						return fmt.Errorf("rank %d sent %d messages to rank %d, not a neighbour on the chain", r.ID(), p.Messages, q)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestChainNoRoom: when no ring fits in the segments (8 slots of a 64 KiB
// element are more than a 512 KiB segment holds), a chain broadcast takes
// the staged path, which streams through a smaller staging area, and
// still delivers.
func TestChainNoRoom(t *testing.T) {
	type big [8192]float64
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 2, SegmentBytes: 512 << 10}, func(ctx context.Context, r *pgas.Rank) error {
		const n = 4
		buf := make([]big, n)
		if r.ID() == 0 {
			for i := range buf {
				buf[i][i] = float64(i + 1)
			}
		}
		r.ResetStats()
		if err := coll.BroadcastInPlace(ctx, r.World(), coll.Private(buf), n, coll.WithAlgo(coll.Chain)); err != nil {
			return err
		}
		for i := range buf {
			if buf[i][i] != float64(i+1) {
				return fmt.Errorf("rank %d: element %d not delivered", r.ID(), i)
			}
		}
		if a := r.Stats().Remote[pgas.OpAtomic]; a != 0 {
			return fmt.Errorf("rank %d: %d remote atomics; want the staged path", r.ID(), a)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
