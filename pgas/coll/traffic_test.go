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

// countCall runs body's collective once to warm up (staging allocation),
// then once more between resets of the counting transport, and returns the
// per-rank counts of that second call.
func countCall(t *testing.T, cfg pgas.Config, body func(ctx context.Context, r *pgas.Rank) error) []wrap.Counts {
	t.Helper()
	c := wrap.NewCounting(inproc.New())
	cfg.Transport = c
	cfg.NoCheck = true // the counts are the algorithm's, without the call checks' gets
	err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		if err := body(ctx, r); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == 0 {
			c.Reset()
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if err := body(ctx, r); err != nil {
			return err
		}
		return r.Barrier(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]wrap.Counts, cfg.Ranks)
	for q := range counts {
		counts[q] = c.Counts(q)
	}
	return counts
}

// tally sums every rank's messages: in all, between nodes of rpn ranks,
// and the most one rank sent.
func tally(counts []wrap.Counts, rpn int) (total, inter, maxSend int64) {
	for q, cq := range counts {
		var mine int64
		for p, pc := range cq.Peers {
			mine += pc.Messages
			if p/rpn != q/rpn {
				inter += pc.Messages
			}
		}
		total += mine
		maxSend = max(maxSend, mine)
	}
	return total, inter, maxSend
}

func bcastBody(n int, opts ...coll.Option) func(ctx context.Context, r *pgas.Rank) error {
	return func(ctx context.Context, r *pgas.Rank) error {
		src := make([]int64, n)
		for i := range src {
			src[i] = int64(i)
		}
		dst := make([]int64, n)
		if err := coll.Broadcast(ctx, r.World(), coll.Private(dst), coll.Private(src), n, opts...); err != nil {
			return err
		}
		for i, v := range dst {
			if v != int64(i) {
				return fmt.Errorf("dst[%d] = %d", i, v)
			}
		}
		return nil
	}
}

func TestBroadcastTreeMessages(t *testing.T) {
	const n = 16 // 128 bytes
	for _, tc := range []struct {
		name         string
		ranks, rpn   int
		algo         coll.Algo
		seg          int64
		rootMsgs     int64
		interNode    int64
		totalMsgs    int64
		maxPerSender int64
	}{
		{"flat/8x1", 8, 1, coll.Flat, 0, 7, 7, 7, 7},
		{"binomial/8x1", 8, 1, coll.Binomial, 0, 3, 7, 7, 3},
		{"auto/8x1", 8, 1, coll.Auto, 0, 3, 7, 7, 3},
		{"binomial-flat/2x4", 8, 4, coll.BinomialFlat, 0, 4, 1, 7, 4},
		{"auto/2x4", 8, 4, coll.Auto, 0, 4, 1, 7, 4},
		{"flat-flat/2x4", 8, 4, coll.FlatFlat, 0, 4, 1, 7, 4},
		{"flat-flat/3x4", 12, 4, coll.FlatFlat, 0, 5, 2, 11, 5},
		{"flat/segmented", 4, 4, coll.Flat, 48, 3 * 3, 0, 9, 9}, // ceil(128/48) = 3 per receiver
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []coll.Option{coll.WithAlgo(tc.algo)}
			if tc.seg > 0 {
				opts = append(opts, coll.Segment(tc.seg))
			}
			counts := countCall(t, pgas.Config{Ranks: tc.ranks, RanksPerNode: tc.rpn}, bcastBody(n, opts...))
			total, inter, maxSend := tally(counts, tc.rpn)
			if got := counts[0].Messages(); got != tc.rootMsgs {
				t.Errorf("root sent %d messages; want %d", got, tc.rootMsgs)
			}
			if inter != tc.interNode {
				t.Errorf("%d inter-node messages; want %d", inter, tc.interNode)
			}
			if total != tc.totalMsgs || maxSend != tc.maxPerSender {
				t.Errorf("%d messages in all, at most %d from one rank; want %d and %d", total, maxSend, tc.totalMsgs, tc.maxPerSender)
			}
		})
	}
}

// TestAllgatherVPrivTraffic: every rank receives exactly the other ranks'
// contributions, one message from each sender, and nothing else moves.
func TestAllgatherVPrivTraffic(t *testing.T) {
	const ranks = 5
	counts := []int{3, 0, 7, 1, 12}
	body := func(ctx context.Context, r *pgas.Rank) error {
		mine := make([]float64, counts[r.ID()])
		for i := range mine {
			mine[i] = float64(100*r.ID() + i)
		}
		all := make([]float64, 23)
		if err := coll.AllgatherV(ctx, r.World(), coll.Private(all), coll.Private(mine), counts, nil, nil); err != nil {
			return err
		}
		k := 0
		for q, cq := range counts {
			for i := range cq {
				if all[k] != float64(100*q+i) {
					return fmt.Errorf("all[%d] = %v; want %v", k, all[k], 100*q+i)
				}
				k++
			}
		}
		return nil
	}
	got := countCall(t, pgas.Config{Ranks: ranks}, body)
	for me := range ranks {
		var recv, msgs int64
		for q := range ranks {
			pc := got[q].Peers[me]
			if q == me {
				if pc.Messages != 0 {
					t.Errorf("rank %d sent %d messages to itself", q, pc.Messages)
				}
				continue
			}
			recv += pc.BytesSent
			msgs += pc.Messages
			want := int64(0)
			if counts[q] > 0 {
				want = 1
			}
			if pc.Messages != want || pc.BytesSent != int64(counts[q])*8 {
				t.Errorf("rank %d -> %d: %+v; want %d message of %d bytes", q, me, pc, want, counts[q]*8)
			}
		}
		want := int64(23-counts[me]) * 8
		if recv != want {
			t.Errorf("rank %d received %d bytes; want %d", me, recv, want)
		}
		if got[me].BytesReceived() != 0 {
			t.Errorf("rank %d issued gets of %d bytes; want none", me, got[me].BytesReceived())
		}
	}
}

// TestReduceTreeMessages: Reduce and Allreduce of a commutative operation
// combine their partials along the tree WithAlgo names: flat (every member
// to the root, one round), binomial (ceil(log2 n) rounds, each member
// sending once), binomial-flat (inside each node to its leader, then one
// message per node between nodes); Auto keeps the flat gather. The
// results are exact (integer sums), and the rounds of Reduce are counted
// as the staging barriers on the root.
func TestReduceTreeMessages(t *testing.T) {
	const n = 5 // elements a member
	for _, tc := range []struct {
		name                      string
		ranks, rpn                int
		algo                      coll.Algo
		totalMsgs, interNode      int64
		maxPerSender, rootBarrier int64
	}{
		{"flat/8x4", 8, 4, coll.Flat, 7, 4, 1, 1},
		{"auto/8x4", 8, 4, coll.Auto, 7, 4, 1, 1},
		{"binomial/8x1", 8, 1, coll.Binomial, 7, 7, 1, 3},
		{"binomial/5x1", 5, 1, coll.Binomial, 4, 4, 1, 3},
		{"binomial-flat/8x4", 8, 4, coll.BinomialFlat, 7, 1, 1, 2},
		{"binomial-flat/12x4", 12, 4, coll.BinomialFlat, 11, 2, 1, 3},
		{"flat-flat/12x4", 12, 4, coll.FlatFlat, 11, 2, 1, 2},
	} {
		for _, all := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/all=%v", tc.name, all), func(t *testing.T) {
				body := func(ctx context.Context, r *pgas.Rank) error {
					src := make([]int64, n)
					for i := range src {
						src[i] = int64(r.ID()*n + i)
					}
					dst := make([]int64, 1)
					var err error
					if all {
						err = coll.Allreduce(ctx, r.World(), coll.Private(dst), coll.Private(src), n, coll.Add[int64](), coll.WithAlgo(tc.algo))
					} else {
						err = coll.Reduce(ctx, r.World(), coll.Private(dst), coll.Private(src), n, coll.Add[int64](), coll.WithAlgo(tc.algo))
					}
					if err != nil {
						return err
					}
					total := int64(r.N()*n) * int64(r.N()*n-1) / 2
					if (all || r.ID() == 0) && dst[0] != total {
						return fmt.Errorf("rank %d: sum %d, want %d", r.ID(), dst[0], total)
					}
					return nil
				}
				counts := countCall(t, pgas.Config{Ranks: tc.ranks, RanksPerNode: tc.rpn}, body)
				total, inter, maxSend := tally(counts, tc.rpn)
				wantTotal, wantInter, wantMax := tc.totalMsgs, tc.interNode, tc.maxPerSender
				if all { // and the result's broadcast along the same tree
					wantTotal *= 2
					wantMax = -1
				}
				if total != wantTotal || (!all && inter != wantInter) || (wantMax >= 0 && maxSend != wantMax) {
					t.Errorf("%d messages (%d between nodes), at most %d from one rank; want %d (%d), %d", total, inter, maxSend, wantTotal, wantInter, wantMax)
				}
				// A round is a staging barrier; 3 more are the counting
				// harness's two and the call's own.
				if got := counts[0].Ops[wrap.OpBarrier] - 3; !all && got != tc.rootBarrier {
					t.Errorf("the root passed %d rounds; want %d", got, tc.rootBarrier)
				}
			})
		}
	}
}

// TestGatherScatterTree: Gather and Scatter between private buffers go
// along the WithAlgo tree: one message per tree edge, so binomial has
// every member send (gather) or receive (scatter) once with the root at
// ceil(log2 n) edges, and binomial-flat one message between nodes per
// node; flat has the root meet every member. Results are checked.
func TestGatherScatterTree(t *testing.T) {
	const n = 3
	for _, tc := range []struct {
		name                 string
		ranks, rpn           int
		algo                 coll.Algo
		rootEdges, interNode int64
	}{
		{"flat/8x4", 8, 4, coll.Flat, 7, 4},
		{"binomial/8x1", 8, 1, coll.Binomial, 3, 7},
		{"binomial/6x1", 6, 1, coll.Binomial, 3, 5},
		{"binomial-flat/8x4", 8, 4, coll.BinomialFlat, 4, 1},
		{"auto/12x4", 12, 4, coll.Auto, 5, 2},
		{"flat-flat/12x4", 12, 4, coll.FlatFlat, 5, 2},
	} {
		for _, scatter := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/scatter=%v", tc.name, scatter), func(t *testing.T) {
				root := 1 % tc.ranks
				body := func(ctx context.Context, r *pgas.Rank) error {
					me, size := r.ID(), r.N()
					val := func(m, i int) int64 { return int64(m*100 + i) }
					opts := []coll.Option{coll.WithAlgo(tc.algo), coll.Root(root)}
					if scatter {
						var src []int64
						if me == root {
							src = make([]int64, size*n)
							for m := range size {
								for i := range n {
									src[m*n+i] = val(m, i)
								}
							}
						}
						dst := make([]int64, n)
						if err := coll.Scatter(ctx, r.World(), coll.Private(dst), coll.Private(src), n, opts...); err != nil {
							return err
						}
						for i, v := range dst {
							if v != val(me, i) {
								return fmt.Errorf("rank %d: dst[%d] = %d, want %d", me, i, v, val(me, i))
							}
						}
						return nil
					}
					src := make([]int64, n)
					for i := range src {
						src[i] = val(me, i)
					}
					var dst []int64
					if me == root {
						dst = make([]int64, size*n)
					}
					if err := coll.Gather(ctx, r.World(), coll.Private(dst), coll.Private(src), n, opts...); err != nil {
						return err
					}
					for m := range size {
						for i := range n {
							if me == root && dst[m*n+i] != val(m, i) {
								return fmt.Errorf("root: dst[%d] = %d, want %d", m*n+i, dst[m*n+i], val(m, i))
							}
						}
					}
					return nil
				}
				counts := countCall(t, pgas.Config{Ranks: tc.ranks, RanksPerNode: tc.rpn}, body)
				var total, inter, toRoot int64
				for q, cq := range counts {
					for p, pc := range cq.Peers {
						total += pc.Messages
						if p/tc.rpn != q/tc.rpn {
							inter += pc.Messages
						}
						if p == root {
							toRoot += pc.Messages
						}
					}
				}
				rootEdges := toRoot // gather: what the root's children put to it
				if scatter {
					rootEdges = counts[root].Messages()
				}
				if total != int64(tc.ranks-1) || inter != tc.interNode || rootEdges != tc.rootEdges {
					t.Errorf("%d messages, %d between nodes, %d at the root; want %d, %d, %d", total, inter, rootEdges, tc.ranks-1, tc.interNode, tc.rootEdges)
				}
			})
		}
	}
}
