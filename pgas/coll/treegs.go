package coll

import (
	"context"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
)

// Tree gather and scatter (seeds/002 Figs.
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

// subtrees is subtrees of the team's tree from root, shared by the
// members a process hosts (they only read it).
func (c *call[T]) subtrees(root int, rounds [][]edge) (list [][]int, at []int) {
	type subtreesKey struct{ tree treeKey }
	v := c.t.Shared(subtreesKey{treeKey{root, c.o.algo}}, func() any {
		list, at := subtrees(c.t.Size(), rounds)
		return [2]any{list, at}
	}).([2]any)
	return v[0].([][]int), v[1].([]int)
}

// treeMoves reports whether Gather or Scatter of this call goes along a
// tree: no AllThr, and a tree that is not flat. The tree's forwarding
// buffers are private; a shared source or destination is read or written
// at the ends (each member its own chunk, the root its area).
func (c *call[T]) treeMoves() bool {
	return !c.o.allThr && c.t.Size() > 2 && resolve(c.t, c.o.algo) != Flat
}

// readInto fills dst from l's len(dst) elements: this member's private
// slice, or the shared elements (a get where another rank holds them).
func (c *call[T]) readInto(ctx context.Context, l loc, dst []T) error {
	if c.isPriv(l) {
		copy(dst, c.privSlice(l, int64(len(dst))))
		return nil
	}
	h := &pgas.Handle{}
	c.getRange(ctx, l, dst, h)
	return h.Wait(ctx)
}

// writeFrom stores src at l: into this member's private slice, or into
// the shared elements.
func (c *call[T]) writeFrom(ctx context.Context, l loc, src []T) error {
	if c.isPriv(l) {
		copy(c.privSlice(l, int64(len(src))), src)
		return nil
	}
	h := &pgas.Handle{}
	c.putRange(ctx, l, src, h)
	return h.Wait(ctx)
}

// treeGather is Gather along the tree.
func (c *call[T]) treeGather(ctx context.Context, n int64) error {
	root, me := c.o.root, c.t.ID()
	rounds := broadcastTree(c.t, root, c.o.algo)
	list, at := c.subtrees(root, rounds)
	buf := make([]T, int64(len(list[me]))*n)
	if err := c.readInto(ctx, c.chunk(bufSrc, me, n), buf[:n]); err != nil {
		return err
	}
	g := c.sub(buf)
	for ri := len(rounds) - 1; ri >= 0; ri-- {
		if err := g.redRound(ctx, func() []move {
			var ms []move
			for _, e := range rounds[ri] {
				k := int64(len(list[e.to])) * n
				ms = append(ms, move{loc{buf: bufSrc, rank: c.t.RankOf(e.to)}, loc{buf: bufDst, rank: c.t.RankOf(e.from), idx: int64(at[e.to]) * n}, k})
			}
			return ms
		}); err != nil {
			return err
		}
	}
	if me == root {
		for pos, m := range list[root] {
			if err := c.writeFrom(ctx, c.area(bufDst, root, c.slot(m), n), buf[int64(pos)*n:int64(pos+1)*n]); err != nil {
				return err
			}
		}
	}
	return nil
}

// treeScatter is Scatter along the tree.
func (c *call[T]) treeScatter(ctx context.Context, n int64) error {
	root, me := c.o.root, c.t.ID()
	rounds := broadcastTree(c.t, root, c.o.algo)
	list, at := c.subtrees(root, rounds)
	buf := make([]T, int64(len(list[me]))*n)
	if me == root {
		for pos, m := range list[root] {
			if err := c.readInto(ctx, c.area(bufSrc, root, c.slot(m), n), buf[int64(pos)*n:int64(pos+1)*n]); err != nil {
				return err
			}
		}
	}
	g := c.sub(buf)
	for _, rd := range rounds {
		if err := g.redRound(ctx, func() []move {
			var ms []move
			for _, e := range rd {
				k := int64(len(list[e.to])) * n
				ms = append(ms, move{loc{buf: bufSrc, rank: c.t.RankOf(e.from), idx: int64(at[e.to]) * n}, loc{buf: bufDst, rank: c.t.RankOf(e.to)}, k})
			}
			return ms
		}); err != nil {
			return err
		}
	}
	return c.writeFrom(ctx, c.chunk(bufDst, me, n), buf[:n])
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
