// Package coll is the extended collectives library of the UPC world
// (seeds/002 chapter 3 and appendix A) over the pgas runtime: the standard
// families, in-place, rooted, vector-variant, team-based and get/put/priv
// forms, as package-level generic functions. It uses only pgas's one-sided
// operations, barriers and atomics, so it runs on every transport.
//
//	w := r.World()
//	// priv broadcast: root's private slice to every member's private slice
//	err := coll.Broadcast(ctx, w, coll.Private(dst), coll.Private(src), n, coll.Root(0))
//	// UPC-MR's reduce-phase collective: variable counts, private in and out
//	err = coll.AllgatherV(ctx, w, coll.Private(all), coll.Private(mine), counts, nil, nil)
//	// all-to-all from this member's own send and receive counts
//	err = coll.AlltoallV(ctx, w, coll.Private(in), coll.Private(out), sendCounts, recvCounts)
//
// # Forms
//
// One function covers the four get/put/priv forms of a UPC collective: its
// src and dst are each a Buf, Shared (a range of a pgas.Array) or Private
// (the calling rank's slice). In-place forms are separate functions
// (BroadcastInPlace, ...). Rooted forms take the Root option (a team id,
// default 0). Teams come from pgas (Rank.World, Rank.Split,
// Rank.NewTeam): a call on a team involves its members only, and disjoint
// teams run collectives at the same time. AllThr selects the team_allthr
// placement (by global rank). Counts are in elements of T; the raw (byte)
// forms are the same functions with T = byte.
//
// # Synchronisation
//
// WithSync takes UPC's modes: InAll/InMy/InNo or'ed with
// OutAll/OutMy/OutNo, default InAll|OutAll. MY is implemented as ALL, which
// the UPC specification permits. With OutNo the library still never
// overwrites internal staging another member may be reading: staging is
// double-buffered and ordered by each staging round's barrier. When both
// source and destination are private, only their owners ever touch them and
// the modes have no observable effect, so the entry and exit barriers are
// skipped: the staging barrier is the only synchronisation.
//
// # Algorithms
//
// Broadcast (and the reductions' final broadcast) follows a tree chosen by
// WithAlgo over the rank-to-node topology of pgas.Config.RanksPerNode:
// Flat (the root sends to everyone in one step), Binomial (recursive
// halving over members grouped by node, ceil(log2 n) steps with a team
// barrier between steps), BinomialFlat (binomial over one leader per node,
// then flat inside each node), FlatFlat (the root to one leader per node,
// then flat inside each node: the flat-tree hierarchical algorithm, one
// message between nodes per node), Chain (a broadcast between private
// buffers pipelined along the members in chunks, through a ring in each
// member's segment, on transports that map segments in memory; Flat for
// everything else), or Auto (flat on one node, binomial with one rank per
// node, binomial-flat otherwise; the chain for private broadcasts of 512
// KiB or more on one node). Reduce and Allreduce of a
// commutative operation combine their partial results along the same tree
// run backwards when WithAlgo names Binomial, BinomialFlat or FlatFlat
// (binomial: ceil(log2 n) rounds; the hierarchical ones: inside each node
// at its leader, then one message per node); Auto and Flat gather them to the root in one
// round, which keeps the combining order, and so floating-point bits, of
// every team size. Gather and Scatter go along the tree too (any
// algorithm but Flat, Auto included; not with AllThr): one message per
// tree edge, each member forwarding its subtree's chunks through a private
// buffer (a shared source or destination is read or written at the
// ends). Other families
// move every
// chunk directly, in one step; ExchangeInPlace on a shared buffer whose
// regions are their members' own swaps chunks pairwise (seeds/002 Fig.
// 3.3: floor(T/2) stages, member i and i+s in stage s, through one private
// array) with no synchronisation but the call's entry and exit. Segment splits transfers into messages of at
// most that many bytes. A private destination is filled by its own rank:
// senders put into the receiver's staging area in its segment, and the
// receiver copies from there after a barrier (seeds/002 fig. 3.7).
//
// Every member plans the chunks of a collective from its single-valued
// arguments. Where both buffers are private, the all-to-all families
// (Allgather, Exchange and their in-place forms, AllgatherV, ExchangeV,
// ExchangeVMerge) plan only the calling member's own chunks, the one it
// sends to each member and the one it receives from each: O(Size) work and
// memory per member (ExchangeV and ExchangeVMerge still read their Size²
// counts), where planning every chunk cost O(Size²) per member, Size³ over
// the team. AlltoallV is the all-to-all for members that know only their
// own row and column of the counts.
//
// # Rules
//
// Every member calls the same collectives in the same order with the same
// single-valued arguments (counts, displacements, options, root; only
// AlltoallV's counts are each member's own). A mismatch that makes members
// wait for each other would hang, so each call first compares its name
// and arguments across the team, and the member that differs gets an
// error naming both calls; under pgas.Config.NoCheck, which turns that
// off, such a mismatch hangs or ends in an error after
// pgas.Config.SyncTimeout if the job sets one.
// Arguments that are wrong on their face (a negative count, a
// non-permutation, a chunk outside its array or private slice) panic with a
// message saying what is wrong.
package coll
