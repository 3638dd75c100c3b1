package coll

import (
	"context"
	"fmt"
)

// Tree gather and scatter between private buffers (seeds/002 Figs.
// 3.8-3.10): data travels along the WithAlgo broadcast tree, backwards
// for Gather (each member forwards the chunks of its subtree to the
// member it would hear from) and forwards for Scatter (each member
// passes on the chunks of its children's subtrees), one message per tree
// edge, so that the root sends or receives ceil(log2 n) messages
// (Binomial) or one per node between nodes (BinomialFlat), instead of n-1.

// subtrees returns, for the broadcast tree rounds of a team of size
// members, every member's subtree in the order its chunks lie in its
// forwarding buffer (itself first, then its children's subtrees in the
// order they join), and where each member's subtree starts in its
// parent's list.
func subtrees(size int, rounds [][]edge) (list [][]int, at []int) {
	list = make([][]int, size)
	at = make([]int, size)
	for m := range list {
		list[m] = []int{m}
	}
	for ri := len(rounds) - 1; ri >= 0; ri-- {
		for _, e := range rounds[ri] {
			at[e.to] = len(list[e.from])
			list[e.from] = append(list[e.from], list[e.to]...)
		}
	}
	return list, at
}

// treeMoves reports whether Gather or Scatter of this call goes along a
// tree: both buffers private, no AllThr, and a tree that is not flat.
func (c *call[T]) treeMoves() bool {
	return c.privOnly() && !c.o.allThr && c.t.Size() > 2 && resolve(c.t, c.o.algo) != Flat
}

// treeGather is Gather along the tree.
func (c *call[T]) treeGather(ctx context.Context, n int64) error {
	root, me := c.o.root, c.t.ID()
	rounds := broadcastTree(c.t, root, c.o.algo)
	list, at := subtrees(c.t.Size(), rounds)
	buf := make([]T, int64(len(list[me]))*n)
	copy(buf[:n], c.privSlice(loc{buf: bufSrc}, n))
	g := c.sub(buf)
	for ri := len(rounds) - 1; ri >= 0; ri-- {
		var ms []move
		for _, e := range rounds[ri] {
			k := int64(len(list[e.to])) * n
			ms = append(ms, move{loc{buf: bufSrc, rank: c.t.RankOf(e.to)}, loc{buf: bufDst, rank: c.t.RankOf(e.from), idx: int64(at[e.to]) * n}, k})
		}
		if err := g.redRound(ctx, ms); err != nil {
			return err
		}
	}
	if me == root {
		for pos, m := range list[root] {
			copy(c.privSlice(loc{buf: bufDst, idx: int64(c.slot(m)) * n}, n), buf[int64(pos)*n:int64(pos+1)*n])
		}
	}
	return nil
}

// treeScatter is Scatter along the tree.
func (c *call[T]) treeScatter(ctx context.Context, n int64) error {
	root, me := c.o.root, c.t.ID()
	rounds := broadcastTree(c.t, root, c.o.algo)
	list, at := subtrees(c.t.Size(), rounds)
	buf := make([]T, int64(len(list[me]))*n)
	if me == root {
		for pos, m := range list[root] {
			copy(buf[int64(pos)*n:int64(pos+1)*n], c.privSlice(loc{buf: bufSrc, idx: int64(c.slot(m)) * n}, n))
		}
	}
	g := c.sub(buf)
	for _, rd := range rounds {
		var ms []move
		for _, e := range rd {
			k := int64(len(list[e.to])) * n
			ms = append(ms, move{loc{buf: bufSrc, rank: c.t.RankOf(e.from), idx: int64(at[e.to]) * n}, loc{buf: bufDst, rank: c.t.RankOf(e.to)}, k})
		}
		if err := g.redRound(ctx, ms); err != nil {
			return err
		}
	}
	copy(c.privSlice(loc{buf: bufDst}, n), buf[:n])
	return nil
}

// treeCall runs f (a tree gather or scatter) as a whole collective call:
// the entry check, then f, then the exit.
func (c *call[T]) treeCall(ctx context.Context, n int64, f func(context.Context, int64) error) error {
	if err := c.begin(ctx, func() string { return fmt.Sprintf("n=%d %s", n, kind(c.bufs[bufDst], c.bufs[bufSrc])) }); err != nil {
		return err
	}
	if err := f(ctx, n); err != nil {
		return c.wrap(err)
	}
	return c.end(ctx)
}

// sub is a call like c between this member's private forwarding buffer
// and itself.
func (c *call[T]) sub(buf []T) *call[T] {
	g := newCall(c.t, c.name, Private(buf), Private(buf), nil)
	g.o = c.o
	return g
}
