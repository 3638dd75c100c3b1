package coll

import (
	"context"
	"fmt"
	"iter"

	"github.com/pgasmr/pgasmr/pgas"
)

// Reductions (upc_all_reduceT, upc_all_reduceT_all, upc_all_prefix_reduceT
// and their in-place, get/put/priv, rooted, chunked (_v) and team forms).
//
// # The sequence
//
// A reduction combines a sequence of elements with an Op, in sequence
// order where the Op is not commutative:
//
//   - Shared source: the elements of the source array, in index order: for
//     Reduce, Allreduce and PrefixReduce elements [Start, Start+n) (UPC's
//     src of type shared [blk] T[n], blk being the array's block size); for
//     the chunked forms the chunks in the order given.
//   - Private source: the concatenation, in team-id order, of every
//     member's part: its slice[0:n] for Reduce, Allreduce and PrefixReduce
//     (so the sequence has n*Size elements), its own spans or chunks for
//     the chunked forms (which are then per-member, not single-valued: each
//     member passes the spans of its own slice, UPC's privparam form).
//
// An empty sequence has no result: Reduce and Allreduce then leave their
// destinations as they are.
//
// # Algorithm (seeds/002 §3.2.1, §3.2.4)
//
// Each member reduces the elements it owns (its blocks of a shared source,
// through the privatised partition, or its private part) into partial
// results; elements owned by ranks outside the team are read remotely by
// member (rank mod Size). With a commutative Op each member produces one
// partial result; with a non-commutative one it produces one per block
// piece (per chunk with CyclicChunks), so that the partials can be combined
// in index order. The partials travel to the root in one gather round
// through the team's staging memory (never from one rank's private memory
// to another's; on the world team the transport's native all-to-all
// carries them, unless NoNative), and the root combines them in sequence
// order, the earlier range always on the left. Allreduce then broadcasts
// the result along the WithAlgo tree (or with the native broadcast); each
// member writes its own destination. PrefixReduce
// gathers the partial totals the same way; the root computes each piece's
// exclusive prefix (the combination of everything before it) and scatters
// them back, and each member finishes the prefixes of its pieces locally
// and writes them.
//
// # Options
//
// Root selects the member that receives (Reduce) or combines (Allreduce,
// PrefixReduce) the result, default 0. WithSync, WithAlgo (for
// Allreduce's broadcast) and Segment work as for the other families;
// CyclicChunks applies to the chunked forms with a shared source. AllThr is
// not defined for reductions and makes them panic.

// Span is one chunk of a chunked reduction (ReduceV, AllreduceV): N
// elements starting at Off. For a shared source Off is relative to the
// Buf's start; for a private source it is an offset into the calling
// member's slice.
type Span struct{ Off, N int }

// Chunk is one chunk of a chunked prefix reduction (PrefixReduceV): N
// source elements starting at Src, whose prefixes go to N destination
// elements starting at Dst. Offsets are relative to a shared Buf's start,
// or into the calling member's private slice.
type Chunk struct{ Src, Dst, N int }

// redPart is a partial result; ok is false for an empty range, which has
// none (an Op need not have an identity).
type redPart[T any] struct {
	v  T
	ok bool
}

// then returns p combined with the later partial q.
func (p redPart[T]) then(op Op[T], q redPart[T]) redPart[T] {
	switch {
	case !q.ok:
		return p
	case !p.ok:
		return q
	}
	return redPart[T]{op.combine(p.v, q.v), true}
}

// redFold returns acc combined with xs, left to right.
func redFold[T any](op Op[T], acc redPart[T], xs []T) redPart[T] {
	if len(xs) == 0 {
		return acc
	}
	if !acc.ok {
		acc = redPart[T]{xs[0], true}
		xs = xs[1:]
	}
	v := acc.v
	for _, x := range xs {
		v = op.combine(v, x)
	}
	return redPart[T]{v, true}
}

// redUnit is one contiguous piece of the sequence that one member reduces:
// source elements [src, src+n) (an element index of a shared source, or an
// offset in the member's private slice), whose prefixes go to destination
// positions [dst, dst+n) (relative to a shared destination's start, or an
// offset in a private destination). owner is the rank that owns the
// elements of a shared source (the member's own rank for a private one).
type redUnit struct {
	src, dst, n int64
	owner       int
}

// redPlan lays out a reduction's partial results: how many each member
// produces (counts, the same on every member), the calling member's units
// in the order of its partials, and every partial in sequence order (walk,
// used by the combining member). With perMember, a member's units are
// consecutive in the sequence and fold into its one partial.
type redPlan struct {
	counts    []int
	mine      iter.Seq[redUnit]
	walk      func(fn func(m, k int))
	perMember bool
}

// collapse turns a plan into one partial per member, for commutative
// reductions.
func (c *rcall[T]) collapse(p redPlan) redPlan {
	s := c.size()
	counts := ones(c.t)
	return redPlan{counts: counts, mine: p.mine, perMember: true, walk: func(fn func(m, k int)) {
		for m := range s {
			fn(m, 0)
		}
	}}
}

// ones returns a slice of t.Size() ones, shared by the members of t a
// process hosts (they only read it).
func ones(t *pgas.Team) []int {
	return t.Shared(onesKey{}, func() any {
		o := make([]int, t.Size())
		for i := range o {
			o[i] = 1
		}
		return o
	}).([]int)
}

type onesKey struct{}

// rcall is one reduction invocation on one member.
type rcall[T any] struct {
	*call[T]
	op    Op[T]
	opts  []Option
	merge bool // one partial per member: a member's own blocks are one unit
}

func newRcall[T any](t *pgas.Team, name string, dst, src Buf[T], op Op[T], opts []Option) *rcall[T] {
	op.mustValid(name)
	needValid(name, dst, src)
	c := newCall(t, name, dst, src, opts)
	if c.o.allThr {
		panic(fmt.Sprintf("coll: %s: AllThr is not defined for the reductions", name))
	}
	return &rcall[T]{call: c, op: op, opts: opts}
}

func (c *rcall[T]) size() int   { return c.t.Size() }
func (c *rcall[T]) tid() int    { return c.t.ID() }
func (c *rcall[T]) src() Buf[T] { return c.bufs[bufSrc] }
func (c *rcall[T]) dst() Buf[T] { return c.bufs[bufDst] }

func (c *rcall[T]) sig(args string) func() string {
	return func() string {
		return fmt.Sprintf("op=%s %s %s", c.op.name, args, kind(c.dst(), c.src()))
	}
}

// assign returns, for every rank of the job, the team id of the member that
// reduces the elements that rank owns: the rank itself if it is a member,
// else member (rank mod Size).
func (c *rcall[T]) assign(ranks int) []int {
	a := make([]int, ranks)
	for q := range a {
		if m := c.t.TeamID(q); m >= 0 {
			a[q] = m
		} else {
			a[q] = q % c.size()
		}
	}
	return a
}

// blockPlan plans elements [s, s+n) of the shared source: one unit per
// block piece, reduced by the owner's member; a member's units are listed
// rank by rank (its own, then the non-members it reads for), block by block,
// so that nobody scans the blocks of others except the combining member.
// With merge (for a commutative Op, whose plan collapse turns into one
// partial per member) a member's own blocks form one unit.
func (c *rcall[T]) blockPlan(s, n int64, merge bool) redPlan {
	l := c.src().arr.Layout()
	counts := make([]int, c.size())
	if n == 0 {
		return redPlan{counts: counts, mine: func(func(redUnit) bool) {}, walk: func(func(m, k int)) {}}
	}
	R, B := int64(l.Ranks), l.Block
	e := s + n
	b0, b1 := s/B, (e-1)/B
	asg := c.assign(l.Ranks)
	first := make([]int64, R) // first block of rank q at or after b0
	base := make([]int64, R)  // index of rank q's first unit in its member's list
	for q := range l.Ranks {
		rel := (int64(q) - int64(l.First) + R) % R
		f := b0 + ((rel-b0)%R+R)%R
		first[q] = f
		base[q] = int64(counts[asg[q]])
		if f <= b1 {
			counts[asg[q]] += int((b1-f)/R + 1)
		}
	}
	me := c.tid()
	mine := func(yield func(redUnit) bool) {
		for q := range l.Ranks {
			if asg[q] != me || first[q] > b1 {
				continue
			}
			if q == c.me && merge {
				// This rank's elements of the range are contiguous in its
				// partition: one unit (its dst is meaningless).
				last := first[q] + (b1-first[q])/R*R
				lo, hi := max(s, first[q]*B), min(e, (last+1)*B)
				n := l.LocalIndex(hi-1) - l.LocalIndex(lo) + 1
				if !yield(redUnit{src: lo, n: n, owner: q}) {
					return
				}
				continue
			}
			for b := first[q]; b <= b1; b += R {
				lo, hi := max(s, b*B), min(e, (b+1)*B)
				if !yield(redUnit{src: lo, dst: lo - s, n: hi - lo, owner: q}) {
					return
				}
			}
		}
	}
	walk := func(fn func(m, k int)) {
		for b := b0; b <= b1; b++ {
			q := int((int64(l.First) + b) % R)
			fn(asg[q], int(base[q]+(b-first[q])/R))
		}
	}
	return redPlan{counts: counts, mine: mine, walk: walk}
}

// scanPlan plans the chunks of a shared source: one unit per block piece
// of each chunk, reduced by the owner's member, listed in sequence order.
// Every member scans the chunk list.
func (c *rcall[T]) scanPlan(chunks []Chunk) redPlan {
	a := c.src().arr
	l := a.Layout()
	base := c.src().at
	asg := c.assign(l.Ranks)
	pieces := func(fn func(u redUnit, m int) bool) {
		for _, ch := range chunks {
			s, e := base+int64(ch.Src), base+int64(ch.Src)+int64(ch.N)
			for i := s; i < e; {
				b := i / l.Block
				hi := min(e, (b+1)*l.Block)
				q := l.Owner(i)
				if !fn(redUnit{src: i, dst: int64(ch.Dst) + i - s, n: hi - i, owner: q}, asg[q]) {
					return
				}
				i = hi
			}
		}
	}
	counts := make([]int, c.size())
	pieces(func(_ redUnit, m int) bool { counts[m]++; return true })
	me := c.tid()
	mine := func(yield func(redUnit) bool) {
		pieces(func(u redUnit, m int) bool { return m != me || yield(u) })
	}
	walk := func(fn func(m, k int)) {
		cur := make([]int, c.size())
		pieces(func(_ redUnit, m int) bool { fn(m, cur[m]); cur[m]++; return true })
	}
	return redPlan{counts: counts, mine: mine, walk: walk}
}

// cyclicPlan plans the chunks of a shared source under CyclicChunks:
// chunk j is one unit of member j mod Size, which checks that it owns the
// chunk; nobody scans the chunks of others except the combining member.
func (c *rcall[T]) cyclicPlan(chunks []Chunk) redPlan {
	a := c.src().arr
	l := a.Layout()
	base := c.src().at
	s := c.size()
	counts := make([]int, s)
	for m := range counts {
		if m < len(chunks) {
			counts[m] = (len(chunks) - m + s - 1) / s
		}
	}
	me, rank := c.tid(), c.me
	mine := func(yield func(redUnit) bool) {
		for j := me; j < len(chunks); j += s {
			ch := chunks[j]
			lo := base + int64(ch.Src)
			if ch.N > 0 {
				hi := lo + int64(ch.N) - 1
				if l.Owner(lo) != rank || (l.Ranks > 1 && lo/l.Block != hi/l.Block) {
					panic(fmt.Sprintf("coll: %s: CyclicChunks: chunk %d (source elements [%d,%d)) does not lie on rank %d (team id %d = %d mod %d)",
						c.name, j, lo, hi+1, rank, me, j, s))
				}
			}
			if !yield(redUnit{src: lo, dst: int64(ch.Dst), n: int64(ch.N), owner: rank}) {
				return
			}
		}
	}
	walk := func(fn func(m, k int)) {
		for j := range chunks {
			fn(j%s, j/s)
		}
	}
	return redPlan{counts: counts, mine: mine, walk: walk}
}

// privatePlan plans a private source: this member's units, one partial per
// member.
func (c *rcall[T]) privatePlan(units []redUnit) redPlan {
	p := c.collapse(redPlan{})
	p.mine = func(yield func(redUnit) bool) {
		for _, u := range units {
			if !yield(u) {
				return
			}
		}
	}
	return p
}

// read returns the elements of unit u of the source: a view of this rank's
// partition or private slice, or a private copy of remote elements.
func (c *rcall[T]) read(ctx context.Context, u redUnit) ([]T, error) {
	if u.n == 0 {
		return nil, nil
	}
	src := c.src()
	if src.isPr {
		if u.src+u.n > int64(len(src.priv)) {
			panic(fmt.Sprintf("coll: %s: rank %d's private source has %d elements, needs [%d,%d)",
				c.name, c.me, len(src.priv), u.src, u.src+u.n))
		}
		return src.priv[u.src : u.src+u.n], nil
	}
	a := src.arr
	if u.owner == c.me {
		li := a.Layout().LocalIndex(u.src)
		return a.Local()[li : li+u.n], nil
	}
	tmp := make([]T, u.n)
	h := &pgas.Handle{}
	c.getRange(ctx, loc{buf: bufSrc, idx: u.src}, tmp, h)
	return tmp, h.Wait(ctx)
}

// partials reduces this member's units into its partial results, and
// returns the units with their elements when keep is set.
func (c *rcall[T]) partials(ctx context.Context, p redPlan, keep bool) ([]redPart[T], []redUnit, [][]T, error) {
	var parts []redPart[T]
	var units []redUnit
	var vals [][]T
	var acc redPart[T]
	for u := range p.mine {
		xs, err := c.read(ctx, u)
		if err != nil {
			return nil, nil, nil, c.wrap(err)
		}
		if p.perMember {
			acc = redFold(c.op, acc, xs)
		} else {
			parts = append(parts, redFold(c.op, redPart[T]{}, xs))
		}
		if keep {
			units = append(units, u)
			vals = append(vals, xs)
		}
	}
	if p.perMember {
		parts = []redPart[T]{acc}
	}
	if len(parts) != p.counts[c.tid()] {
		panic(fmt.Sprintf("coll: %s: internal error: rank %d made %d partial results, planned %d", c.name, c.me, len(parts), p.counts[c.tid()]))
	}
	return parts, units, vals, nil
}

// redSub returns a call on the same team, with the same name and options,
// that moves values of type X between private buffers: the partial
// results.
func redSub[X, T any](c *rcall[T], dst, src Buf[X]) *call[X] {
	return newCall(c.t, c.name, dst, src, c.opts)
}

// gather moves every member's partials to the root's list, member m's at
// offset prefix(counts)[m]; only the root's result is non-nil.
func (c *rcall[T]) gather(ctx context.Context, mine []redPart[T], counts []int, root int) ([]redPart[T], error) {
	var all []redPart[T]
	if c.tid() == root {
		all = make([]redPart[T], sum(counts))
	}
	g := redSub(c, Private(all), Private(mine))
	rr := c.t.RankOf(root)
	return all, g.redRound(ctx, func() []move {
		offs := prefix(counts)
		var ms []move
		for m, n := range counts {
			if n > 0 {
				ms = append(ms, move{loc{buf: bufSrc, rank: c.t.RankOf(m)}, loc{buf: bufDst, rank: rr, idx: int64(offs[m])}, int64(n)})
			}
		}
		return ms
	})
}

// redRound runs one round of private-to-private moves: with the transport's
// native all-to-all-v on the world team (unless NoNative), else through
// staging.
func (c *call[T]) redRound(ctx context.Context, build func() []move) error {
	p := c.sharedPlan(func() [][]move { return [][]move{build()} })
	if nat := c.native(); nat != nil && onePerPair(p.rounds[0].moves) {
		return c.wrap(c.alltoallv(ctx, nat, p.rounds[0].moves))
	}
	return c.run(ctx, p, false)
}

// scatter is gather's inverse: member m gets counts[m] values of the
// root's list from offset prefix(counts)[m].
func (c *rcall[T]) scatter(ctx context.Context, all []redPart[T], counts []int, root int) ([]redPart[T], error) {
	mine := make([]redPart[T], counts[c.tid()])
	g := redSub(c, Private(mine), Private(all))
	rr := c.t.RankOf(root)
	return mine, g.redRound(ctx, func() []move {
		offs := prefix(counts)
		var ms []move
		for m, n := range counts {
			if n > 0 {
				ms = append(ms, move{loc{buf: bufSrc, rank: rr, idx: int64(offs[m])}, loc{buf: bufDst, rank: c.t.RankOf(m)}, int64(n)})
			}
		}
		return ms
	})
}

// broadcast gives every member the root's res along the WithAlgo tree
// (or with the transport's native broadcast).
func (c *rcall[T]) broadcast(ctx context.Context, res redPart[T], root int) (redPart[T], error) {
	got := make([]redPart[T], 1)
	if c.tid() == root {
		got[0] = res
	}
	g := redSub(c, Private(got), Private(got))
	if nat := g.native(); nat != nil {
		err := nat.Broadcast(ctx, c.t.RankOf(root), pgas.Bytes(got))
		return got[0], g.wrap(err)
	}
	tree := broadcastTree(c.t, root, c.o.algo)
	err := g.runRounds(ctx, func() [][]move {
		var rounds [][]move
		for _, rd := range tree {
			var ms []move
			for _, e := range rd {
				ms = append(ms, move{loc{buf: bufDst, rank: c.t.RankOf(e.from)}, loc{buf: bufDst, rank: c.t.RankOf(e.to)}, 1})
			}
			rounds = append(rounds, ms)
		}
		return rounds
	}, false)
	return got[0], err
}

// combine gathers the partials to the root, which combines them in
// sequence order; only the root's result is meaningful.
func (c *rcall[T]) combine(ctx context.Context, p redPlan) (redPart[T], error) {
	parts, _, _, err := c.partials(ctx, p, false)
	if err != nil {
		return redPart[T]{}, err
	}
	root := c.o.root
	if c.treeCombines(p) {
		return c.treeCombine(ctx, parts, root)
	}
	all, err := c.gather(ctx, parts, p.counts, root)
	if err != nil {
		return redPart[T]{}, err
	}
	var res redPart[T]
	if c.tid() == root {
		offs := prefix(p.counts)
		p.walk(func(m, k int) { res = res.then(c.op, all[offs[m]+k]) })
	}
	return res, nil
}

// treeCombines reports whether the partials meet at the root along a
// tree rather than in one gather: the caller chose a tree with WithAlgo
// (Binomial, or BinomialFlat, seeds/002 Figs. 3.8-3.10) and the operation
// is commutative, so that each member holds one partial and partials may
// combine in any order. Auto keeps the one gather, whose combining order
// (team-id order) gives floating-point results the same bits at every
// team size and tree.
func (c *rcall[T]) treeCombines(p redPlan) bool {
	return c.op.comm && p.perMember && c.o.algo != Auto && resolve(c.t, c.o.algo) != Flat
}

// treeCombine combines every member's partial at the root along the
// WithAlgo broadcast tree run backwards: in each round, from the last to
// the first, every member that the broadcast would reach in that round
// sends what it has combined so far to the member it would hear from,
// which combines it. Binomial takes ceil(log2 Size) rounds; BinomialFlat
// first combines inside each node at its leader (one round) and then
// sends one message per node between nodes. Only the root's result is
// meaningful.
func (c *rcall[T]) treeCombine(ctx context.Context, parts []redPart[T], root int) (redPart[T], error) {
	var acc redPart[T]
	for _, q := range parts {
		acc = acc.then(c.op, q)
	}
	rounds := broadcastTree(c.t, root, c.o.algo)
	me := c.tid()
	for ri := len(rounds) - 1; ri >= 0; ri-- {
		rd := rounds[ri]
		mine := 0
		for _, e := range rd {
			if e.from == me {
				mine++
			}
		}
		recv := make([]redPart[T], mine)
		send := []redPart[T]{acc}
		if err := redSub(c, Private(recv), Private(send)).redRound(ctx, func() []move {
			// The k-th child of a parent in this round lands in slot k of
			// the parent's receive list.
			slots := map[int]int{}
			ms := make([]move, 0, len(rd))
			for _, e := range rd {
				k := slots[e.from]
				slots[e.from]++
				ms = append(ms, move{loc{buf: bufSrc, rank: c.t.RankOf(e.to)}, loc{buf: bufDst, rank: c.t.RankOf(e.from), idx: int64(k)}, 1})
			}
			return ms
		}); err != nil {
			return redPart[T]{}, err
		}
		for _, q := range recv {
			acc = acc.then(c.op, q)
		}
	}
	return acc, nil
}

// reduce runs Reduce or Allreduce: the plan, then store with the result
// on the root (all false) or on every member (all true). In-place forms
// need no extra synchronisation: a shared element the result overwrites
// was read either by the root itself, or by a member that then sent a
// partial result to the root, which no member receives the result before
// (through a staging barrier or a native collective).
func (c *rcall[T]) reduce(ctx context.Context, sig func() string, mk func() redPlan, all bool, store func(ctx context.Context, res redPart[T]) error) error {
	if err := pgas.CheckElem[T](); err != nil {
		return fmt.Errorf("coll: %s: %w", c.name, err)
	}
	c.merge = c.op.comm
	p := mk()
	if c.op.comm && !p.perMember {
		p = c.collapse(p)
	}
	if err := c.begin(ctx, sig); err != nil {
		return err
	}
	res, err := c.combine(ctx, p)
	if err != nil {
		return err
	}
	if all {
		if res, err = c.broadcast(ctx, res, c.o.root); err != nil {
			return err
		}
	}
	if res.ok && (all || c.tid() == c.o.root) {
		if err := store(ctx, res); err != nil {
			return c.wrap(err)
		}
	}
	return c.end(ctx)
}

// prefix runs a prefix reduction with plan p. Each unit's prefixes go to
// the destination at the unit's dst position; with a shared source and a
// private destination only the units this rank owns are written there.
func (c *rcall[T]) prefix(ctx context.Context, sig func() string, mk func() redPlan) error {
	if err := pgas.CheckElem[T](); err != nil {
		return fmt.Errorf("coll: %s: %w", c.name, err)
	}
	p := mk()
	if err := c.begin(ctx, sig); err != nil {
		return err
	}
	parts, units, vals, err := c.partials(ctx, p, true)
	if err != nil {
		return err
	}
	root := c.o.root
	all, err := c.gather(ctx, parts, p.counts, root)
	if err != nil {
		return err
	}
	if c.tid() == root {
		// Exclusive prefixes, in place: each partial becomes the
		// combination of everything before it.
		offs := prefix(p.counts)
		var acc redPart[T]
		p.walk(func(m, k int) {
			i := offs[m] + k
			acc, all[i] = acc.then(c.op, all[i]), acc
		})
	}
	excl, err := c.scatter(ctx, all, p.counts, root)
	if err != nil {
		return err
	}
	dst, src := c.dst(), c.src()
	h := &pgas.Handle{}
	var run redPart[T]
	for i, u := range units {
		if p.perMember {
			if i == 0 {
				run = excl[0]
			}
		} else {
			run = excl[i]
		}
		if u.n == 0 || (dst.isPr && !src.isPr && u.owner != c.me) {
			run = redFold(c.op, run, vals[i])
			continue
		}
		var out []T
		if dst.isPr {
			if u.dst+u.n > int64(len(dst.priv)) {
				panic(fmt.Sprintf("coll: %s: rank %d's private destination has %d elements, needs [%d,%d)",
					c.name, c.me, len(dst.priv), u.dst, u.dst+u.n))
			}
			out = dst.priv[u.dst : u.dst+u.n]
		} else {
			out = make([]T, u.n)
		}
		for k, x := range vals[i] {
			if run.ok {
				run.v = c.op.combine(run.v, x)
			} else {
				run = redPart[T]{x, true}
			}
			out[k] = run.v
		}
		if !dst.isPr {
			c.putRange(ctx, loc{buf: bufDst, idx: dst.at + u.dst}, out, h)
		}
	}
	if err := h.Wait(ctx); err != nil {
		return c.wrap(err)
	}
	return c.end(ctx)
}

// Argument checks. They panic, on every member for single-valued
// arguments and on the member concerned for private ones.

func (c *rcall[T]) checkSharedRange(b Buf[T], what string, lo, n int64) {
	if lo < 0 || n < 0 || lo+n > b.arr.Len() {
		panic(fmt.Sprintf("coll: %s: shared %s elements [%d,%d) outside array of %d",
			c.name, what, lo, lo+n, b.arr.Len()))
	}
}

func (c *rcall[T]) checkPrivLen(b Buf[T], what string, need int64) {
	if int64(len(b.priv)) < need {
		panic(fmt.Sprintf("coll: %s: rank %d's private %s has %d elements, needs %d",
			c.name, c.me, what, len(b.priv), need))
	}
}

// planN checks the source and returns the plan of Reduce, Allreduce and
// PrefixReduce over n elements. A private source's prefixes go to offset
// 0 of a private destination, or to position tid*n of a shared one.
func (c *rcall[T]) planN(n int64) func() redPlan {
	src := c.src()
	if src.isPr {
		c.checkPrivLen(src, "source", n)
		return func() redPlan {
			d := int64(0)
			if !c.dst().isPr {
				d = int64(c.tid()) * n
			}
			return c.privatePlan([]redUnit{{src: 0, dst: d, n: n, owner: c.me}})
		}
	}
	c.checkSharedRange(src, "source", src.at, n)
	return func() redPlan { return c.blockPlan(src.at, n, c.merge) }
}

// planChunks checks the chunks and returns the plan of the chunked forms;
// prefixDst says the chunks' Dst are used (PrefixReduceV).
func (c *rcall[T]) planChunks(chunks []Chunk, prefixDst bool) func() redPlan {
	src, dst := c.src(), c.dst()
	for j, ch := range chunks {
		if ch.Src < 0 || ch.N < 0 || ch.Dst < 0 {
			panic(fmt.Sprintf("coll: %s: chunk %d %+v has a negative field", c.name, j, ch))
		}
		if src.isPr {
			c.checkPrivLen(src, "source", int64(ch.Src)+int64(ch.N))
		} else {
			c.checkSharedRange(src, "source", src.at+int64(ch.Src), int64(ch.N))
		}
		if prefixDst && !dst.isPr {
			c.checkSharedRange(dst, "destination", dst.at+int64(ch.Dst), int64(ch.N))
		}
		if prefixDst && dst.isPr && src.isPr {
			c.checkPrivLen(dst, "destination", int64(ch.Dst)+int64(ch.N))
		}
	}
	if src.isPr {
		if c.o.cyclic {
			panic(fmt.Sprintf("coll: %s: CyclicChunks needs a shared source", c.name))
		}
		return func() redPlan {
			units := make([]redUnit, 0, len(chunks))
			for _, ch := range chunks {
				if ch.N > 0 {
					units = append(units, redUnit{src: int64(ch.Src), dst: int64(ch.Dst), n: int64(ch.N), owner: c.me})
				}
			}
			return c.privatePlan(units)
		}
	}
	if c.o.cyclic {
		return func() redPlan { return c.cyclicPlan(chunks) }
	}
	return func() redPlan { return c.scanPlan(chunks) }
}

func redSpanChunks(spans []Span) []Chunk {
	cs := make([]Chunk, len(spans))
	for i, s := range spans {
		if s.Off < 0 || s.N < 0 {
			panic(fmt.Sprintf("coll: span %d %+v has a negative field", i, s))
		}
		cs[i] = Chunk{Src: s.Off, N: s.N}
	}
	return cs
}

// redChunkSig describes chunked arguments for the call check: single-valued for
// a shared source, per-member (left out) for a private one.
func redChunkSig[X any](private bool, xs []X) string {
	if private {
		return "chunks=private"
	}
	return fmt.Sprintf("chunks=%v", xs)
}

// storeRoot returns the store of a rooted result: the element at a shared
// destination's start, or the root's private slice[0].
func (c *rcall[T]) storeRoot(b Buf[T]) func(context.Context, redPart[T]) error {
	if b.isPr {
		if c.tid() == c.o.root {
			c.checkPrivLen(b, "destination", 1)
		}
		return func(_ context.Context, res redPart[T]) error {
			b.priv[0] = res.v
			return nil
		}
	}
	c.checkSharedRange(b, "destination", b.at, 1)
	return func(ctx context.Context, res redPart[T]) error {
		return b.arr.Put(ctx, b.at, res.v)
	}
}

// storeAll returns the store of Allreduce: element at+stride*m of a shared
// destination for member m, or every member's private slice[0].
func (c *rcall[T]) storeAll(b Buf[T], stride int64) func(context.Context, redPart[T]) error {
	if b.isPr {
		c.checkPrivLen(b, "destination", 1)
		return func(_ context.Context, res redPart[T]) error {
			b.priv[0] = res.v
			return nil
		}
	}
	c.checkSharedRange(b, "destination", b.at, stride*int64(c.size()-1)+1)
	i := b.at + stride*int64(c.tid())
	return func(ctx context.Context, res redPart[T]) error {
		return b.arr.Put(ctx, i, res.v)
	}
}

// Reduce combines the sequence of n source elements with op and stores the
// result on the root (Root, default team id 0): in a shared dst, in the
// element at dst's start; in a private dst, in the root's slice[0]
// (upc_all_reduceT and its get/put/priv, rooted and team forms). A shared
// src gives the sequence elements [Start, Start+n) in index order; a
// private src the concatenation of every member's slice[0:n] in team-id
// order. With n = 0 dst is left as it is.
func Reduce[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], n int, op Op[T], opts ...Option) error {
	checkCount("Reduce", n)
	c := newRcall(t, "Reduce", dst, src, op, opts)
	mk := c.planN(int64(n))
	return c.reduce(ctx, c.sig(fmt.Sprintf("n=%d", n)), mk, false, c.storeRoot(dst))
}

// Allreduce is Reduce whose result every member gets (upc_all_reduceT_all
// and forms): member m's in element dst.Start()+m of a shared dst, or in its
// private slice[0]. Root picks the member that combines the partial
// results; WithAlgo the tree that broadcasts the result.
func Allreduce[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], n int, op Op[T], opts ...Option) error {
	checkCount("Allreduce", n)
	c := newRcall(t, "Allreduce", dst, src, op, opts)
	mk := c.planN(int64(n))
	return c.reduce(ctx, c.sig(fmt.Sprintf("n=%d", n)), mk, true, c.storeAll(dst, 1))
}

// PrefixReduce stores the inclusive prefixes of the sequence: position i
// gets op over positions 0..i (upc_all_prefix_reduceT and forms).
//
//   - Shared src (n elements from its start): a shared dst gets position i
//     in element dst.Start()+i; a private dst of each member gets, at
//     offset i, position i for every source element the member's rank
//     owns (other entries are left as they are; elements of ranks outside
//     the team are written nowhere).
//   - Private src (each member's slice[0:n], n*Size positions): a private
//     dst gets the member's own n prefixes in slice[0:n]; a shared dst gets
//     position p in element dst.Start()+p.
func PrefixReduce[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], n int, op Op[T], opts ...Option) error {
	checkCount("PrefixReduce", n)
	c := newRcall(t, "PrefixReduce", dst, src, op, opts)
	nn := int64(n)
	mk := c.planN(nn)
	switch {
	case !dst.isPr && src.isPr:
		c.checkSharedRange(dst, "destination", dst.at, nn*int64(c.size()))
	case !dst.isPr:
		c.checkSharedRange(dst, "destination", dst.at, nn)
	case src.isPr:
		c.checkPrivLen(dst, "destination", nn)
	}
	return c.prefix(ctx, c.sig(fmt.Sprintf("n=%d", n)), mk)
}

// ReduceInPlace combines the sequence of n elements of buf (as Reduce's
// src) and stores the result in the sequence's first element: element
// buf.Start() of a shared buf (stored by the root), or the root's slice[0]
// of a private one (upc_all_reduceT_in_place[_priv] and the rooted forms).
func ReduceInPlace[T any](ctx context.Context, t *pgas.Team, buf Buf[T], n int, op Op[T], opts ...Option) error {
	checkCount("ReduceInPlace", n)
	c := newRcall(t, "ReduceInPlace", buf, buf, op, opts)
	mk := c.planN(int64(n))
	var store func(context.Context, redPart[T]) error
	if n > 0 || buf.isPr {
		store = c.storeRoot(buf)
	}
	return c.reduce(ctx, c.sig(fmt.Sprintf("n=%d", n)), mk, false, store)
}

// AllreduceInPlace combines the sequence of n elements of buf (as
// Allreduce's src) and stores the result for every member m: in element
// buf.Start()+m*Block of a shared buf, Block being its array's block size
// (UPC's buffer[i*blk_size]), or in each member's private slice[0]
// (upc_all_reduceT_all_in_place[_priv]).
func AllreduceInPlace[T any](ctx context.Context, t *pgas.Team, buf Buf[T], n int, op Op[T], opts ...Option) error {
	checkCount("AllreduceInPlace", n)
	c := newRcall(t, "AllreduceInPlace", buf, buf, op, opts)
	mk := c.planN(int64(n))
	var stride int64
	if !buf.isPr {
		stride = buf.arr.Layout().Block
	}
	var store func(context.Context, redPart[T]) error
	if n > 0 || buf.isPr {
		store = c.storeAll(buf, stride)
	}
	return c.reduce(ctx, c.sig(fmt.Sprintf("n=%d", n)), mk, true, store)
}

// PrefixReduceInPlace replaces each element of the sequence of n elements
// of buf by its inclusive prefix: elements [Start, Start+n) of a shared
// buf, or every member's slice[0:n] of a private one, the sequence being
// their concatenation in team-id order
// (upc_all_prefix_reduceT_in_place[_priv]).
func PrefixReduceInPlace[T any](ctx context.Context, t *pgas.Team, buf Buf[T], n int, op Op[T], opts ...Option) error {
	checkCount("PrefixReduceInPlace", n)
	c := newRcall(t, "PrefixReduceInPlace", buf, buf, op, opts)
	mk := c.planN(int64(n))
	return c.prefix(ctx, c.sig(fmt.Sprintf("n=%d", n)), mk)
}

// ReduceV combines the elements of the spans in span order and stores the
// result as Reduce does (upc_all_reduceT_v and forms). With a shared src,
// span {Off, N} is elements src.Start()+Off .. +N and spans is
// single-valued; with CyclicChunks span j must lie on the rank of team id j
// mod Size, which then reduces it without scanning the other spans (it
// panics if the span is elsewhere). With a private src each member passes
// the spans of its own slice, and the sequence is member 0's spans in
// order, then member 1's, and so on; spans may then differ between members
// (CyclicChunks panics).
func ReduceV[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], spans []Span, op Op[T], opts ...Option) error {
	c := newRcall(t, "ReduceV", dst, src, op, opts)
	mk := c.planChunks(redSpanChunks(spans), false)
	return c.reduce(ctx, c.sig(redChunkSig(src.isPr, spans)), mk, false, c.storeRoot(dst))
}

// AllreduceV is ReduceV whose result every member gets, as Allreduce
// stores it (upc_all_reduceT_all_v and forms).
func AllreduceV[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], spans []Span, op Op[T], opts ...Option) error {
	c := newRcall(t, "AllreduceV", dst, src, op, opts)
	mk := c.planChunks(redSpanChunks(spans), false)
	return c.reduce(ctx, c.sig(redChunkSig(src.isPr, spans)), mk, true, c.storeAll(dst, 1))
}

// PrefixReduceV stores the prefixes of a chunked sequence
// (upc_all_prefix_reduceT_v and forms): element i of chunk j, source
// element Src+i, gets op over chunks 0..j-1 and elements 0..i of chunk j,
// stored in destination element Dst+i. The sequence and CyclicChunks are as
// for ReduceV (with a private src each member passes its own chunks, and
// its chunks' Dst are offsets into its private dst, or relative to a shared
// dst's start). With a shared src and a private dst, a member stores only
// the prefixes of the source elements its rank owns, at Dst+i of its own
// slice.
func PrefixReduceV[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], chunks []Chunk, op Op[T], opts ...Option) error {
	c := newRcall(t, "PrefixReduceV", dst, src, op, opts)
	mk := c.planChunks(chunks, true)
	return c.prefix(ctx, c.sig(redChunkSig(src.isPr, chunks)), mk)
}
