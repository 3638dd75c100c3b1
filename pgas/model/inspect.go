package model

import (
	"context"
	"fmt"
	"slices"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// Inspect counts, for every rank, what the three SpMV strategies move in
// one iteration (seeds/000 §5.4): rank q computes the rows it owns of
// arrays laid out as lay and reads x at the column indices cols[q] (its
// part of J, any order, repeats counted). Rank q is on node
// q/ranksPerNode; ranksPerNode <= 0 puts every rank on one node. It is the
// sequential oracle of InspectAll, and a way to count a matrix without
// running a job.
//
// It returns an error if len(cols) differs from lay.Ranks or a column is
// outside [0, lay.N).
func Inspect(lay pgas.Layout, ranksPerNode int, cols [][]int64) ([]RankCounts, error) {
	if len(cols) != lay.Ranks {
		return nil, fmt.Errorf("model: Inspect: %d column lists for %d ranks", len(cols), lay.Ranks)
	}
	node := nodeOf(lay.Ranks, ranksPerNode)
	out := make([]RankCounts, lay.Ranks)
	need := make([][]int64, lay.Ranks)
	for q := range lay.Ranks {
		var err error
		if out[q], need[q], err = inspectRank(lay, node, q, cols[q]); err != nil {
			return nil, err
		}
	}
	addSends(out, need, node)
	return out, nil
}

// InspectAll is collective: every rank passes the layout of x (the same on
// every rank) and its own column indices, and gets every rank's counts,
// indexed by rank, as Inspect would give them. Nodes are those of
// pgas.Config.RanksPerNode. Its own traffic (an all-gather of N+10 words
// per rank, so O(N²) memory over the job) is counted in Stats; reset them
// after it if they should show the SpMV only.
//
// It returns an error if lay is not for r.N() ranks, a column is out of
// range on some rank (on that rank; the others then fail in the
// all-gather), or the all-gather fails.
func InspectAll(ctx context.Context, r *pgas.Rank, lay pgas.Layout, cols []int64) ([]RankCounts, error) {
	if lay.Ranks != r.N() {
		return nil, fmt.Errorf("model: InspectAll: layout for %d ranks in a job of %d", lay.Ranks, r.N())
	}
	n := r.N()
	node := func(q int) int { return r.NodeOf(q) }
	mine, need, err := inspectRank(lay, node, r.ID(), cols)
	if err != nil {
		return nil, err
	}
	const fixed = 10
	words := fixed + n
	src := make([]int64, words)
	copy(src, []int64{mine.Rows, mine.Indv.Local, mine.Indv.Remote, mine.Blocks.Local, mine.Blocks.Remote,
		mine.OwnBlocks, mine.BlockElems.Local, mine.BlockElems.Remote, mine.Recv.Local, mine.Recv.Remote})
	copy(src[fixed:], need)
	dst := make([]int64, n*words)
	if err := coll.Allgather(ctx, r.World(), coll.Private(dst), coll.Private(src), words); err != nil {
		return nil, fmt.Errorf("model: InspectAll: rank %d: %w", r.ID(), err)
	}
	out := make([]RankCounts, n)
	needs := make([][]int64, n)
	for q := range n {
		w := dst[q*words : (q+1)*words]
		out[q] = RankCounts{
			Rank: q, Node: node(q), Rows: w[0],
			Indv:       Classes{w[1], w[2]},
			Blocks:     Classes{w[3], w[4]},
			OwnBlocks:  w[5],
			BlockElems: Classes{w[6], w[7]},
			Recv:       Classes{w[8], w[9]},
		}
		needs[q] = w[fixed:]
	}
	addSends(out, needs, node)
	return out, nil
}

func nodeOf(ranks, perNode int) func(int) int {
	if perNode <= 0 {
		perNode = ranks
	}
	return func(q int) int { return q / perNode }
}

// inspectRank counts rank q's side and returns, per owner, the number of
// unique elements q needs from it (0 for q itself).
func inspectRank(lay pgas.Layout, node func(int) int, q int, cols []int64) (RankCounts, []int64, error) {
	c := RankCounts{Rank: q, Node: node(q), Rows: lay.LocalLen(q)}
	add := func(cl *Classes, o int, v int64) {
		if node(o) == c.Node {
			cl.Local += v
		} else {
			cl.Remote += v
		}
	}
	sorted := slices.Clone(cols)
	slices.Sort(sorted)
	if len(sorted) > 0 && (sorted[0] < 0 || sorted[len(sorted)-1] >= lay.N) {
		bad := sorted[0]
		if bad >= 0 {
			bad = sorted[len(sorted)-1]
		}
		return c, nil, fmt.Errorf("model: rank %d reads column %d, outside [0,%d)", q, bad, lay.N)
	}
	need := make([]int64, lay.Ranks)
	blocks := map[int64]bool{}
	for k, g := range sorted {
		o := lay.Owner(g)
		if o != q {
			add(&c.Indv, o, 1) // eq. 10: every occurrence
			if k == 0 || sorted[k-1] != g {
				need[o]++ // eqs. 12-15: unique values
			}
		}
		blocks[g/lay.Block] = true
	}
	for mb := range lay.LocalBlocks(q) { // own blocks, as Listing 4 copies them
		blocks[lay.GlobalIndex(q, mb*lay.Block)/lay.Block] = true
	}
	for b := range blocks {
		lo := b * lay.Block
		o := lay.Owner(lo)
		elems := min(lay.Block, lay.N-lo)
		add(&c.Blocks, o, 1)
		add(&c.BlockElems, o, elems)
		if o == q {
			c.OwnBlocks++
		}
	}
	for o, v := range need {
		add(&c.Recv, o, v)
	}
	return c, need, nil
}

// addSends fills Send and SendMsgs from what every rank needs from every
// other: need[q][o] values go from o to q in one message.
func addSends(out []RankCounts, need [][]int64, node func(int) int) {
	for q, row := range need {
		for o, v := range row {
			if v == 0 || o == q {
				continue
			}
			s := &out[o]
			if node(o) == node(q) {
				s.Send.Local += v
				s.SendMsgs.Local++
			} else {
				s.Send.Remote += v
				s.SendMsgs.Remote++
			}
		}
	}
}
