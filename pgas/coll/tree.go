package coll

import (
	"slices"

	"github.com/pgasmr/pgasmr/pgas"
)

// edge is one transfer of a tree round: from team id to team id.
type edge struct{ from, to int }

// resolve turns Auto into a concrete algorithm for the team's topology:
// Flat when every member is on one node, Binomial with one member per node,
// BinomialFlat otherwise.
func resolve(t *pgas.Team, a Algo) Algo {
	if a == Chain {
		return Flat // the chain is a broadcast's own (chainable)
	}
	if a != Auto {
		return a
	}
	switch nodes := t.Nodes(); {
	case nodes == 1:
		return Flat
	case nodes == t.Size():
		return Binomial
	}
	return BinomialFlat
}

// nodeOrder returns the team ids grouped by node, the root's node first
// and the root first in it, other nodes in increasing order relative to the
// root's node, members of a node in increasing tid order.
func nodeOrder(t *pgas.Team, root int) (order []int, groups [][]int) {
	r := t.Rank()
	members := t.Members()
	rootNode := r.NodeOf(members[root])
	nodes := r.Nodes()
	byNode := map[int][]int{}
	for tid, m := range members {
		rel := (r.NodeOf(m) - rootNode + nodes) % nodes
		byNode[rel] = append(byNode[rel], tid)
	}
	rels := make([]int, 0, len(byNode))
	for k := range byNode {
		rels = append(rels, k)
	}
	slices.Sort(rels)
	for _, k := range rels {
		g := byNode[k]
		if k == 0 { // the root leads its node
			i := slices.Index(g, root)
			g = append([]int{root}, slices.Delete(slices.Clone(g), i, i+1)...)
		}
		groups = append(groups, g)
		order = append(order, g...)
	}
	return order, groups
}

// binomial returns the rounds of a binomial broadcast over ids, ids[0]
// being the root: in round k every holder at position p < 2^k sends to
// position p + 2^k. The root sends ceil(log2 len(ids)) times.
func binomial(ids []int) [][]edge {
	var rounds [][]edge
	for s := 1; s < len(ids); s <<= 1 {
		var rd []edge
		for p := 0; p < s && p+s < len(ids); p++ {
			rd = append(rd, edge{ids[p], ids[p+s]})
		}
		rounds = append(rounds, rd)
	}
	return rounds
}

// broadcastTree returns the rounds of edges that carry a root's data to
// every member with algorithm a.
func broadcastTree(t *pgas.Team, root int, a Algo) [][]edge {
	// The tree depends only on the team, the root and the algorithm: build
	// it once per team, and once for the members a process hosts, which
	// share it (a tree of the team on every member is memory in the square
	// of its size). Rebuilding it took O(members) map work on every member
	// for every call: half of a broadcast at 1,024 in-process ranks.
	// Callers only read it.
	return t.Shared(treeKey{root, a}, func() any { return buildBroadcastTree(t, root, a) }).([][]edge)
}

// treeKey names a cached broadcast tree of a team.
type treeKey struct {
	root int
	algo Algo
}

func buildBroadcastTree(t *pgas.Team, root int, a Algo) [][]edge {
	order, groups := nodeOrder(t, root)
	switch resolve(t, a) {
	case Flat:
		var rd []edge
		for _, tid := range order[1:] {
			rd = append(rd, edge{root, tid})
		}
		if rd == nil {
			return nil
		}
		return [][]edge{rd}
	case Binomial:
		return binomial(order)
	default: // BinomialFlat, FlatFlat
		leaders := make([]int, len(groups))
		for i, g := range groups {
			leaders[i] = g[0]
		}
		var rounds [][]edge
		if resolve(t, a) == FlatFlat {
			var first []edge
			for _, l := range leaders[1:] {
				first = append(first, edge{root, l})
			}
			if first != nil {
				rounds = append(rounds, first)
			}
		} else {
			rounds = binomial(leaders)
		}
		var last []edge
		for _, g := range groups {
			for _, tid := range g[1:] {
				last = append(last, edge{g[0], tid})
			}
		}
		if last != nil {
			rounds = append(rounds, last)
		}
		return rounds
	}
}
