package colltest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// Checks of the vector variants (ScatterV, GatherV, AllgatherV,
// BroadcastV, ExchangeV, ExchangeVMerge, PermuteV, VectorCopy).
//
// Each generic check runs its collective in every form (shared/shared,
// get, put, priv), over three team scenarios (the world; the two teams of
// r.Split(r.ID()%2) working at the same time; a team without rank 1 with
// AllThr), with packed (nil) and explicit displacements, and for rooted
// collectives with several roots. The oracle is a list of element copies
// each rank derives from the documented semantics; every rank applies it
// to values it computes from (rank, index) and compares with what it holds:
// its private destination, and its partition of every shared destination.

func init() {
	register(
		Check{Name: "vector-allgatherv", MinRanks: 1, Run: vecGeneric("AllgatherV", 2, 1, vAllgatherV)},
		Check{Name: "vector-scatterv", MinRanks: 1, Run: vecGeneric("ScatterV", 2, 3, vScatterV)},
		Check{Name: "vector-gatherv", MinRanks: 1, Run: vecGeneric("GatherV", 2, 3, vGatherV)},
		Check{Name: "vector-broadcastv", MinRanks: 1, Run: vecGeneric("BroadcastV", 3, 3, vBroadcastV)},
		Check{Name: "vector-exchangev", MinRanks: 1, Run: vecGeneric("ExchangeV", 2, 1, vExchangeV)},
		Check{Name: "vector-exchangevmerge", MinRanks: 1, Run: vecGeneric("ExchangeVMerge", 2, 1, vExchangeVMerge)},
		Check{Name: "vector-permutev", MinRanks: 1, Run: vecGeneric("PermuteV", 2, 1, vPermuteV)},
		Check{Name: "vector-copy", MinRanks: 1, Run: vecGeneric("VectorCopy", 2, 1, vVectorCopy)},
		Check{Name: "vector-exchangevmerge-npb-is", MinRanks: 1, Run: vecBucketSort},
		Check{Name: "vector-allgatherv-zero", MinRanks: 1, Run: vecAllgatherZero},
		Check{Name: "vector-allgatherv-raw", MinRanks: 1, Run: vecAllgatherRaw},
	)
}

const (
	vB        = 64 // elements of each rank's block in the shared arrays
	vSentinel = int64(-1)
)

// vsval is element i of the shared source array of a color; vpval element i
// of rank's private source.
func vsval(color, i int) int64 { return int64(1_000_000*(color+1) + i) }
func vpval(rank, i int) int64  { return int64(100_000_000 + 10_000*rank + i) }

// vgroup is one team of a scenario, as plain data every rank knows.
type vgroup struct {
	color   int
	members []int // ranks, increasing; tid = index
	allThr  bool
	n       int // ranks in the job
}

func (g *vgroup) size() int { return len(g.members) }

func (g *vgroup) slots() int {
	if g.allThr {
		return g.n
	}
	return len(g.members)
}

func (g *vgroup) slot(tid int) int {
	if g.allThr {
		return g.members[tid]
	}
	return tid
}

// rankForSlot returns the rank that slot s's local displacement refers
// to: the member's rank, or with AllThr the rank s itself (member or not).
func (g *vgroup) rankForSlot(s int) int {
	if g.allThr {
		return s
	}
	return g.members[s]
}

// tidOfSlot returns the member of slot s, or -1.
func (g *vgroup) tidOfSlot(s int) int {
	if g.allThr {
		return slices.Index(g.members, s)
	}
	return s
}

func (g *vgroup) opts() []coll.Option {
	if g.allThr {
		return []coll.Option{coll.AllThr()}
	}
	return nil
}

type vscen struct {
	name   string
	groups []*vgroup
	mine   *vgroup
	team   *pgas.Team
}

// vscenarios creates the teams; it is collective over all ranks.
func vscenarios(ctx context.Context, r *pgas.Rank) ([]*vscen, error) {
	n, me := r.N(), r.ID()
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	world := &vgroup{color: 0, members: all, n: n}
	scs := []*vscen{{name: "world", groups: []*vgroup{world}, mine: world, team: r.World()}}

	t, err := r.Split(ctx, me%2)
	if err != nil {
		return nil, err
	}
	split := &vscen{name: "split", team: t}
	for c := range min(2, n) {
		g := &vgroup{color: c, n: n}
		for q := c; q < n; q += 2 {
			g.members = append(g.members, q)
		}
		split.groups = append(split.groups, g)
	}
	split.mine = split.groups[me%2]
	scs = append(scs, split)

	if n >= 2 {
		members := slices.Delete(slices.Clone(all), 1, 2)
		t, err := r.NewTeam(ctx, members)
		if err != nil {
			return nil, err
		}
		g := &vgroup{color: 0, members: members, allThr: true, n: n}
		sc := &vscen{name: "allthr-skip1", groups: []*vgroup{g}, team: t}
		if t != nil {
			sc.mine = g
		}
		scs = append(scs, sc)
	}
	return scs, nil
}

type vform struct {
	name         string
	srcSh, dstSh bool
}

var vforms = []vform{{"shared", true, true}, {"get", true, false}, {"put", false, true}, {"priv", false, false}}

// vaddr is an element location: an index of the shared array, or an
// offset in rank's private slice.
type vaddr struct {
	shared bool
	rank   int
	idx    int
}

type vcopy struct {
	src, dst vaddr
	n        int
}

// vcase is one group's view of one run: what a builder needs to choose
// arguments and state the expected copies.
type vcase struct {
	g            *vgroup
	f            vform
	src, dst     *pgas.Array[int64]
	srcAt, dstAt int64 // shared Buf starts; builders may change them
	root         int   // tid
	variant      int
}

func (x *vcase) sbuf() coll.Buf[int64] {
	if x.f.srcSh {
		return coll.Shared(x.src, x.srcAt)
	}
	return coll.Private[int64](nil)
}

func (x *vcase) dbuf() coll.Buf[int64] {
	if x.f.dstSh {
		return coll.Shared(x.dst, x.dstAt)
	}
	return coll.Private[int64](nil)
}

// sLocal and dLocal return the displacement of element li of rank's part.
func (x *vcase) sLocal(rank, li int) int { return coll.LocalDispl(x.sbuf(), rank, li) }
func (x *vcase) dLocal(rank, li int) int { return coll.LocalDispl(x.dbuf(), rank, li) }

// sAddr and dAddr return where displacement d of member tid's buffer is.
func (x *vcase) sAddr(tid, d int) vaddr {
	if x.f.srcSh {
		return vaddr{shared: true, rank: -1, idx: int(x.srcAt) + d}
	}
	return vaddr{rank: x.g.members[tid], idx: d}
}

func (x *vcase) dAddr(tid, d int) vaddr {
	if x.f.dstSh {
		return vaddr{shared: true, rank: -1, idx: int(x.dstAt) + d}
	}
	return vaddr{rank: x.g.members[tid], idx: d}
}

// rootStart is the shared Buf start that puts a rooted area in the root's
// block (0 for a private buffer).
func (x *vcase) rootStart(shared bool) int64 {
	if !shared {
		return 0
	}
	return int64(x.g.members[x.root] * vB)
}

type vcallFn func(ctx context.Context, t *pgas.Team, dst, src coll.Buf[int64], opts []coll.Option) error

type vplan struct {
	copies []vcopy
	call   vcallFn
}

// A vbuild returns the plan of one group, or nil if the combination does
// not apply.
type vbuild func(x *vcase) *vplan

type vArrays struct {
	src, dst [2]*pgas.Array[int64]
}

func vAllocArrays(ctx context.Context, r *pgas.Rank) (*vArrays, error) {
	a := &vArrays{}
	for c := range 2 {
		var err error
		if a.src[c], err = pgas.AllAllocArray[int64](ctx, r, int64(r.N()*vB), vB); err != nil {
			return nil, err
		}
		if a.dst[c], err = pgas.AllAllocArray[int64](ctx, r, int64(r.N()*vB), vB); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (a *vArrays) free(ctx context.Context) error {
	for c := range 2 {
		if err := a.src[c].AllFree(ctx); err != nil {
			return err
		}
		if err := a.dst[c].AllFree(ctx); err != nil {
			return err
		}
	}
	return nil
}

// vecGeneric returns a check that runs build over scenarios, forms,
// variants and roots.
func vecGeneric(fn string, variants, roots int, build vbuild) func(ctx context.Context, r *pgas.Rank) error {
	return func(ctx context.Context, r *pgas.Rank) error {
		scs, err := vscenarios(ctx, r)
		if err != nil {
			return err
		}
		arrs, err := vAllocArrays(ctx, r)
		if err != nil {
			return err
		}
		for _, sc := range scs {
			for _, f := range vforms {
				for v := range variants {
					for k := range roots {
						if err := vrun(ctx, r, fn, sc, arrs, f, v, k, build); err != nil {
							return err
						}
					}
				}
			}
		}
		return arrs.free(ctx)
	}
}

// vrootPick returns the k-th root choice for a team of size n.
func vrootPick(k, n int) int {
	switch k {
	case 1:
		return n - 1
	case 2:
		return n / 2
	}
	return 0
}

func vextent(copies []vcopy, shared bool, rank int, dst bool) int {
	e := 0
	for _, c := range copies {
		a := c.src
		if dst {
			a = c.dst
		}
		if c.n > 0 && a.shared == shared && (shared || a.rank == rank) {
			e = max(e, a.idx+c.n)
		}
	}
	return e
}

func vrun(ctx context.Context, r *pgas.Rank, fn string, sc *vscen, arrs *vArrays, f vform, variant, rootK int, build vbuild) error {
	me := r.ID()
	plans := make([]*vplan, len(sc.groups))
	cases := make([]*vcase, len(sc.groups))
	for i, g := range sc.groups {
		x := &vcase{g: g, f: f, src: arrs.src[g.color], dst: arrs.dst[g.color], root: vrootPick(rootK, g.size()), variant: variant}
		plans[i], cases[i] = build(x), x
	}
	var mine *vplan
	var mx *vcase
	for i, g := range sc.groups {
		if g == sc.mine {
			mine, mx = plans[i], cases[i]
		}
	}
	what := fmt.Sprintf("%s scenario=%s form=%s variant=%d root#%d", fn, sc.name, f.name, variant, rootK)

	// Fill the shared arrays and this rank's private buffers.
	for c := range 2 {
		src, dst := arrs.src[c].Local(), arrs.dst[c].Local()
		for li := range src {
			src[li] = vsval(c, int(arrs.src[c].Layout().GlobalIndex(me, int64(li))))
		}
		for li := range dst {
			dst[li] = vSentinel
		}
	}
	var psrc, pdst []int64
	if mine != nil {
		psrc = make([]int64, vextent(mine.copies, false, me, false)+2)
		for i := range psrc {
			psrc[i] = vpval(me, i)
		}
		pdst = make([]int64, vextent(mine.copies, false, me, true)+3)
		for i := range pdst {
			pdst[i] = vSentinel
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if mine != nil {
		src, dst := coll.Private(psrc), coll.Private(pdst)
		if f.srcSh {
			src = coll.Shared(mx.src, mx.srcAt)
		}
		if f.dstSh {
			dst = coll.Shared(mx.dst, mx.dstAt)
		}
		if err := mine.call(ctx, sc.team, dst, src, mx.g.opts()); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}

	// Verify.
	value := func(a vaddr, color, k int) int64 {
		if a.shared {
			return vsval(color, a.idx+k)
		}
		return vpval(a.rank, a.idx+k)
	}
	if mine != nil {
		for i, v := range psrc {
			if v != vpval(me, i) {
				return fmt.Errorf("%s: rank %d: private source [%d] changed to %d", what, me, i, v)
			}
		}
		if !f.dstSh {
			want := make([]int64, len(pdst))
			for i := range want {
				want[i] = vSentinel
			}
			for _, c := range mine.copies {
				if !c.dst.shared && c.dst.rank == me {
					for k := range c.n {
						want[c.dst.idx+k] = value(c.src, mx.g.color, k)
					}
				}
			}
			if i := vfirstDiff(pdst, want); i >= 0 {
				return fmt.Errorf("%s: rank %d: private dst[%d] = %d, want %d\n got  %v\n want %v", what, me, i, pdst[i], want[i], pdst, want)
			}
		}
	}
	for c := range 2 {
		a := arrs.dst[c]
		want := make([]int64, a.Len())
		for i := range want {
			want[i] = vSentinel
		}
		for i, g := range sc.groups {
			if g.color != c || plans[i] == nil {
				continue
			}
			for _, cp := range plans[i].copies {
				if cp.dst.shared {
					for k := range cp.n {
						want[cp.dst.idx+k] = value(cp.src, c, k)
					}
				}
			}
		}
		for li, v := range a.Local() {
			gi := a.Layout().GlobalIndex(me, int64(li))
			if v != want[gi] {
				return fmt.Errorf("%s: rank %d: shared dst (color %d) element %d = %d, want %d", what, me, c, gi, v, want[gi])
			}
		}
	}
	return r.Barrier(ctx)
}

func vfirstDiff(a, b []int64) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func vcounts(n, salt int) []int {
	c := make([]int, n)
	for s := range c {
		c[s] = (s*7 + salt) % 5
	}
	return c
}

func vprefix(c []int) ([]int, int) {
	p := make([]int, len(c))
	s := 0
	for i, v := range c {
		p[i] = s
		s += v
	}
	return p, s
}

// vrevOffsets lays chunks out in reverse slot order with a gap of one
// element between them.
func vrevOffsets(counts []int) []int {
	off := make([]int, len(counts))
	s := 0
	for i := len(counts) - 1; i >= 0; i-- {
		off[i] = s
		s += counts[i] + 1
	}
	return off
}

func vAllgatherV(x *vcase) *vplan {
	g := x.g
	S := g.slots()
	counts := vcounts(S, 1+x.variant)
	packed, total := vprefix(counts)
	var sd, dd []int
	var extra []coll.Option
	switch x.variant {
	case 0: // packed
		x.srcAt, x.dstAt = 3, 1
		extra = append(extra, coll.WithSync(coll.InNo|coll.OutNo))
	case 1: // contributions at phase 2 of their member's part, areas at phase 5
		sd, dd = make([]int, S), make([]int, S)
		for s := range S {
			sd[s] = x.sLocal(g.rankForSlot(s), 2)
			dd[s] = x.dLocal(g.rankForSlot(s), 5)
		}
		extra = append(extra, coll.Segment(16))
	}
	var cps []vcopy
	for m := range g.size() {
		sm := g.slot(m)
		from := packed[sm]
		if sd != nil {
			from = sd[sm]
		} else if !x.f.srcSh {
			from = 0
		}
		for k := range g.size() {
			sk := g.slot(k)
			to := sk * total
			if dd != nil {
				to = dd[sk]
			} else if !x.f.dstSh {
				to = 0
			}
			cps = append(cps, vcopy{x.sAddr(m, from), x.dAddr(k, to+packed[sm]), counts[sm]})
		}
	}
	return &vplan{cps, func(ctx context.Context, t *pgas.Team, dst, src coll.Buf[int64], opts []coll.Option) error {
		return coll.AllgatherV(ctx, t, dst, src, counts, sd, dd, append(opts, extra...)...)
	}}
}

func vScatterV(x *vcase) *vplan {
	g := x.g
	S := g.slots()
	counts := vcounts(S, 3+x.variant)
	packed, _ := vprefix(counts)
	rootRank := g.members[x.root]
	var sd, dd []int
	extra := []coll.Option{coll.Root(x.root)}
	switch x.variant {
	case 0:
		x.srcAt, x.dstAt = x.rootStart(x.f.srcSh), 3
		extra = append(extra, coll.WithSync(coll.InNo|coll.OutNo))
	case 1:
		rev := vrevOffsets(counts)
		sd, dd = make([]int, S), make([]int, S)
		for s := range S {
			sd[s] = x.sLocal(rootRank, rev[s])
			dd[s] = x.dLocal(g.rankForSlot(s), 4)
		}
		extra = append(extra, coll.Segment(16))
	}
	var cps []vcopy
	for m := range g.size() {
		s := g.slot(m)
		from := packed[s]
		if sd != nil {
			from = sd[s]
		}
		to := packed[s]
		if dd != nil {
			to = dd[s]
		} else if !x.f.dstSh {
			to = 0
		}
		cps = append(cps, vcopy{x.sAddr(x.root, from), x.dAddr(m, to), counts[s]})
	}
	return &vplan{cps, func(ctx context.Context, t *pgas.Team, dst, src coll.Buf[int64], opts []coll.Option) error {
		return coll.ScatterV(ctx, t, dst, src, counts, sd, dd, append(opts, extra...)...)
	}}
}

func vGatherV(x *vcase) *vplan {
	g := x.g
	S := g.slots()
	counts := vcounts(S, 2+x.variant)
	packed, _ := vprefix(counts)
	rootRank := g.members[x.root]
	var sd, dd []int
	extra := []coll.Option{coll.Root(x.root)}
	switch x.variant {
	case 0:
		x.srcAt, x.dstAt = 2, x.rootStart(x.f.dstSh)
	case 1:
		rev := vrevOffsets(counts)
		sd, dd = make([]int, S), make([]int, S)
		for s := range S {
			sd[s] = x.sLocal(g.rankForSlot(s), 1)
			dd[s] = x.dLocal(rootRank, rev[s])
		}
		extra = append(extra, coll.Segment(8), coll.WithSync(coll.InNo))
	}
	var cps []vcopy
	for m := range g.size() {
		s := g.slot(m)
		from := packed[s]
		if sd != nil {
			from = sd[s]
		} else if !x.f.srcSh {
			from = 0
		}
		to := packed[s]
		if dd != nil {
			to = dd[s]
		}
		cps = append(cps, vcopy{x.sAddr(m, from), x.dAddr(x.root, to), counts[s]})
	}
	return &vplan{cps, func(ctx context.Context, t *pgas.Team, dst, src coll.Buf[int64], opts []coll.Option) error {
		return coll.GatherV(ctx, t, dst, src, counts, sd, dd, append(opts, extra...)...)
	}}
}

func vBroadcastV(x *vcase) *vplan {
	g := x.g
	S := g.slots()
	var dd []int
	n := []int{5, 3, 0}[x.variant]
	algo := []coll.Algo{coll.Binomial, coll.BinomialFlat, coll.Flat}[x.variant]
	extra := []coll.Option{coll.Root(x.root), coll.WithAlgo(algo)}
	x.srcAt = x.rootStart(x.f.srcSh)
	switch x.variant {
	case 0:
		x.dstAt = 2
	case 1:
		dd = make([]int, S)
		for s := range S {
			dd[s] = x.dLocal(g.rankForSlot(s), 6)
		}
		extra = append(extra, coll.Segment(16))
	case 2:
		x.dstAt = 0
	}
	var cps []vcopy
	for m := range g.size() {
		s := g.slot(m)
		to := s * n
		if dd != nil {
			to = dd[s]
		} else if !x.f.dstSh {
			to = 0
		}
		cps = append(cps, vcopy{x.sAddr(x.root, 0), x.dAddr(m, to), n})
	}
	return &vplan{cps, func(ctx context.Context, t *pgas.Team, dst, src coll.Buf[int64], opts []coll.Option) error {
		return coll.BroadcastV(ctx, t, dst, src, n, dd, append(opts, extra...)...)
	}}
}

// vmatrix returns an S*S count matrix (row = sender) and its row and
// column prefix sums.
func vmatrix(S, salt int) (counts, rowPre, colPre []int) {
	counts = make([]int, S*S)
	for i := range S {
		for j := range S {
			counts[i*S+j] = (i*3 + j*5 + salt) % 5
		}
	}
	rowPre, colPre = make([]int, S*S), make([]int, S*S)
	for i := range S {
		s := 0
		for j := range S {
			rowPre[i*S+j] = s
			s += counts[i*S+j]
		}
	}
	for j := range S {
		s := 0
		for i := range S {
			colPre[i*S+j] = s
			s += counts[i*S+j]
		}
	}
	return counts, rowPre, colPre
}

// vexplicitSend places sender i's chunks in its own part, in reverse
// receiver order with one-element gaps.
func vexplicitSend(x *vcase, counts []int, S int) []int {
	sd := make([]int, S*S)
	for i := range S {
		off := vrevOffsets(counts[i*S : (i+1)*S])
		for j := range S {
			sd[i*S+j] = x.sLocal(x.g.rankForSlot(i), off[j])
		}
	}
	return sd
}

func vExchangeV(x *vcase) *vplan {
	g := x.g
	S := g.slots()
	counts, rowPre, colPre := vmatrix(S, 1+x.variant)
	var sd, dd []int
	explicit := x.variant == 1
	if explicit || x.f.srcSh {
		sd = vexplicitSend(x, counts, S)
	}
	if explicit || x.f.dstSh {
		dd = make([]int, S*S)
		for i := range S {
			for j := range S {
				dd[i*S+j] = x.dLocal(g.rankForSlot(j), colPre[i*S+j]+i)
			}
		}
	}
	var extra []coll.Option
	if explicit {
		extra = append(extra, coll.Segment(24))
	}
	var cps []vcopy
	for i := range g.size() {
		for j := range g.size() {
			k := g.slot(i)*S + g.slot(j)
			from, to := rowPre[k], colPre[k]
			if sd != nil {
				from = sd[k]
			}
			if dd != nil {
				to = dd[k]
			}
			cps = append(cps, vcopy{x.sAddr(i, from), x.dAddr(j, to), counts[k]})
		}
	}
	return &vplan{cps, func(ctx context.Context, t *pgas.Team, dst, src coll.Buf[int64], opts []coll.Option) error {
		return coll.ExchangeV(ctx, t, dst, src, counts, sd, dd, append(opts, extra...)...)
	}}
}

func vExchangeVMerge(x *vcase) *vplan {
	g := x.g
	S := g.slots()
	counts, rowPre, colPre := vmatrix(S, 3+x.variant)
	recv := make([]int, S)
	for k, n := range counts {
		recv[k%S] += n
	}
	recvPre, _ := vprefix(recv)
	var sd, start []int
	var extra []coll.Option
	switch x.variant {
	case 0:
		if x.f.srcSh {
			sd = vexplicitSend(x, counts, S)
		}
		x.dstAt = 1
	case 1:
		sd = vexplicitSend(x, counts, S)
		start = make([]int, S)
		for s := range S {
			start[s] = x.dLocal(g.rankForSlot(s), 3)
		}
		extra = append(extra, coll.WithSync(coll.OutNo))
	}
	var cps []vcopy
	for i := range g.size() {
		for j := range g.size() {
			sj := g.slot(j)
			k := g.slot(i)*S + sj
			from := rowPre[k]
			if sd != nil {
				from = sd[k]
			}
			to := 0
			switch {
			case start != nil:
				to = start[sj]
			case x.f.dstSh:
				to = recvPre[sj]
			}
			cps = append(cps, vcopy{x.sAddr(i, from), x.dAddr(j, to+colPre[k]), counts[k]})
		}
	}
	return &vplan{cps, func(ctx context.Context, t *pgas.Team, dst, src coll.Buf[int64], opts []coll.Option) error {
		return coll.ExchangeVMerge(ctx, t, dst, src, counts, sd, start, append(opts, extra...)...)
	}}
}

func vPermuteV(x *vcase) *vplan {
	g := x.g
	S := g.slots()
	n := g.size()
	perm := make([]int, S)
	for s := range perm {
		perm[s] = s // non-member slots under AllThr stay put
	}
	for m := range n {
		to := (m + 1) % n
		if x.variant == 1 {
			to = n - 1 - m
		}
		perm[g.slot(m)] = g.slot(to)
	}
	counts := vcounts(S, 2+x.variant)
	var displs []int
	phase := func(s int) int { return 0 }
	if x.variant == 1 {
		phase = func(s int) int { return (s * 5) % 7 }
		displs = make([]int, S)
		for s := range S {
			displs[s] = phase(s)
			if x.f.srcSh {
				displs[s] += s * vB
			}
		}
	}
	var cps []vcopy
	for m := range n {
		s := g.slot(m)
		to := g.tidOfSlot(perm[s])
		ph := phase(s)
		from, at := ph, ph
		if x.f.srcSh {
			from += s * vB
		}
		if x.f.dstSh {
			at += perm[s] * vB
		}
		cps = append(cps, vcopy{x.sAddr(m, from), x.dAddr(to, at), counts[s]})
	}
	return &vplan{cps, func(ctx context.Context, t *pgas.Team, dst, src coll.Buf[int64], opts []coll.Option) error {
		return coll.PermuteV(ctx, t, dst, src, perm, counts, displs, opts...)
	}}
}

func vVectorCopy(x *vcase) *vplan {
	g := x.g
	n := g.size()
	var copies []coll.Copy
	var cps []vcopy
	switch x.variant {
	case 0: // every member sends to itself and its next two members
		incoming := make([]int, n)
		for i := range n {
			var tos []int
			for d := range 3 {
				if to := (i + d) % n; !slices.Contains(tos, to) {
					tos = append(tos, to)
				}
			}
			for q, j := range tos {
				cnt := (i+2*j)%4 + 1
				cp := coll.Copy{
					Src: x.sLocal(g.members[i], 10*q), Dst: x.dLocal(g.members[j], 10*incoming[j]+1), N: cnt,
					SrcRank: g.slot(i), DstRank: g.slot(j),
				}
				incoming[j]++
				copies = append(copies, cp)
				cps = append(cps, vcopy{x.sAddr(i, cp.Src), x.dAddr(j, cp.Dst), cnt})
			}
		}
	case 1: // List 3.7: the upper triangle of an 8x8 matrix, shared only
		if !x.f.srcSh || !x.f.dstSh {
			return nil
		}
		const m = 8
		for i := range m {
			copies = append(copies, coll.Copy{Src: i*m + i, Dst: i*m + i, N: m - i})
			cps = append(cps, vcopy{x.sAddr(0, i*m+i), x.dAddr(0, i*m+i), m - i})
		}
	}
	return &vplan{cps, func(ctx context.Context, t *pgas.Team, dst, src coll.Buf[int64], opts []coll.Option) error {
		return coll.VectorCopy(ctx, t, dst, src, copies, opts...)
	}}
}

// vecBucketSort is the communication of NPB IS: every member draws random
// keys, counts them per bucket (bucket j belongs to member j), exchanges
// the count rows with Allgather, and sends each bucket's keys to its
// owner with ExchangeVMerge, which packs what a member receives in sender
// order. It runs on the world and on the two split teams at once, with
// private (priv) and shared (get, UPC's _merge_local_get) sources.
func vecBucketSort(ctx context.Context, r *pgas.Rank) error {
	scs, err := vscenarios(ctx, r)
	if err != nil {
		return err
	}
	src, err := pgas.AllAllocArray[int32](ctx, r, int64(r.N()*vB), vB)
	if err != nil {
		return err
	}
	const perBucket = 16
	keysOf := func(rank, S, round int) []int32 {
		rng := rand.New(rand.NewPCG(uint64(rank), uint64(round)))
		k := make([]int32, 10+rng.IntN(vB-10))
		for i := range k {
			k[i] = int32(rng.IntN(S * perBucket))
		}
		return k
	}
	for _, sc := range scs[:2] {
		g, t := sc.mine, sc.team
		S, tid := g.size(), t.ID()
		for round, shared := range []bool{false, true} {
			keys := keysOf(r.ID(), S, round)
			row := make([]int, S)
			for _, k := range keys {
				row[int(k)/perBucket]++
			}
			counts := make([]int, S*S)
			if err := coll.Allgather(ctx, t, coll.Private(counts), coll.Private(row), S); err != nil {
				return err
			}
			if !slices.Equal(counts[tid*S:(tid+1)*S], row) {
				return fmt.Errorf("npb-is: allgathered count row %v, want %v", counts[tid*S:(tid+1)*S], row)
			}
			// Counting sort of the keys into buckets, in draw order.
			pos := make([]int, S)
			for j := 1; j < S; j++ {
				pos[j] = pos[j-1] + row[j-1]
			}
			send := make([]int32, len(keys))
			for _, k := range keys {
				b := int(k) / perBucket
				send[pos[b]] = k
				pos[b]++
			}
			recvN := 0
			for i := range S {
				recvN += counts[i*S+tid]
			}
			recv := make([]int32, recvN)
			srcBuf := coll.Private(send)
			var sd []int
			if shared {
				copy(src.Local(), send)
				srcBuf = coll.Shared(src, 0)
				sd = make([]int, S*S)
				for i := range S {
					off := 0
					for j := range S {
						sd[i*S+j] = coll.LocalDispl(srcBuf, g.members[i], off)
						off += counts[i*S+j]
					}
				}
			}
			if err := coll.ExchangeVMerge(ctx, t, coll.Private(recv), srcBuf, counts, sd, nil); err != nil {
				return err
			}
			var want []int32
			for i := range S {
				for _, k := range keysOf(g.members[i], S, round) {
					if int(k)/perBucket == tid {
						want = append(want, k)
					}
				}
			}
			if !slices.Equal(recv, want) {
				return fmt.Errorf("npb-is %s round %d: rank %d received %v, want %v", sc.name, round, r.ID(), recv, want)
			}
			slices.Sort(recv)
			if len(recv) > 0 && (int(recv[0]) < tid*perBucket || int(recv[len(recv)-1]) >= (tid+1)*perBucket) {
				return fmt.Errorf("npb-is: rank %d got keys outside its bucket: %v", r.ID(), recv)
			}
			// Everyone is done reading src before the next round refills it.
			if err := r.Barrier(ctx); err != nil {
				return err
			}
		}
	}
	return src.AllFree(ctx)
}

// vecAllgatherZero runs AllgatherV with zero counts for some members, for
// all members, and with one contributor, private and shared destination.
func vecAllgatherZero(ctx context.Context, r *pgas.Rank) error {
	scs, err := vscenarios(ctx, r)
	if err != nil {
		return err
	}
	dstA, err := pgas.AllAllocArray[int64](ctx, r, int64(r.N()*vB), vB)
	if err != nil {
		return err
	}
	for _, sc := range scs {
		g := sc.mine
		if g == nil {
			g = sc.groups[0] // a non-member only takes part in the barriers
		}
		S := g.slots()
		patterns := [][]int{make([]int, S), make([]int, S), make([]int, S)}
		for s := range S {
			if s%2 == 1 {
				patterns[0][s] = s%4 + 1 // even slots contribute nothing
			}
		}
		patterns[2][S-1] = 3 // one contributor, the last slot
		for pi, counts := range patterns {
			_, total := vprefix(counts)
			var mine []int64
			if sc.mine != nil {
				mine = make([]int64, counts[g.slot(sc.team.ID())])
				for i := range mine {
					mine[i] = vpval(r.ID(), i)
				}
			}
			want := make([]int64, 0, total)
			for s := range S {
				if g.tidOfSlot(s) < 0 {
					// A non-member slot under AllThr keeps its room.
					for range counts[s] {
						want = append(want, vSentinel)
					}
					continue
				}
				for i := range counts[s] {
					want = append(want, vpval(g.rankForSlot(s), i))
				}
			}
			for _, shared := range []bool{false, true} {
				for li := range dstA.Local() {
					dstA.Local()[li] = vSentinel
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				var dst coll.Buf[int64]
				var got []int64
				if sc.mine != nil {
					if shared {
						// Each member's copy in its own block (world-wide
						// placement, so the split teams do not collide).
						dst = coll.Shared(dstA, 0)
						dd := coll.LocalDispls(sc.team, dst, make([]int, S), g.opts()...)
						for s := range S {
							if dd[s] != g.rankForSlot(s)*vB {
								return fmt.Errorf("LocalDispls(%s) = %v: slot %d is not at the start of rank %d's block", sc.name, dd, s, g.rankForSlot(s))
							}
						}
						if err := coll.AllgatherV(ctx, sc.team, dst, coll.Private(mine), counts, nil, dd, g.opts()...); err != nil {
							return err
						}
						got = dstA.Local()[:total]
					} else {
						got = make([]int64, total)
						for i := range got {
							got[i] = vSentinel
						}
						if err := coll.AllgatherV(ctx, sc.team, coll.Private(got), coll.Private(mine), counts, nil, nil, g.opts()...); err != nil {
							return err
						}
					}
					if !slices.Equal(got, want) {
						return fmt.Errorf("allgatherv-zero %s pattern %d shared=%v: rank %d got %v, want %v", sc.name, pi, shared, r.ID(), got, want)
					}
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
			}
		}
	}
	return dstA.AllFree(ctx)
}

// vecAllgatherRaw is the _v_raw form as UPC-MR uses it: variable-size
// records moved as bytes with AllgatherV[byte], their lengths with
// AllgatherV[int].
func vecAllgatherRaw(ctx context.Context, r *pgas.Rank) error {
	n := r.N()
	w := r.World()
	recordsOf := func(p int) [][]byte {
		var rs [][]byte
		for k := range (p + 2) % 4 {
			rs = append(rs, bytes.Repeat([]byte{byte('a' + (p+k)%26)}, (p*3+k)%7+1))
		}
		return rs
	}
	mine := recordsOf(r.ID())
	var data []byte
	lens := make([]int, len(mine))
	for i, rec := range mine {
		data = append(data, rec...)
		lens[i] = len(rec)
	}
	nrec, nbytes := make([]int, n), make([]int, n)
	for p := range n {
		for _, rec := range recordsOf(p) {
			nrec[p]++
			nbytes[p] += len(rec)
		}
	}
	allLens := make([]int, vsum(nrec))
	if err := coll.AllgatherV(ctx, w, coll.Private(allLens), coll.Private(lens), nrec, nil, nil); err != nil {
		return err
	}
	all := make([]byte, vsum(nbytes))
	if err := coll.AllgatherV(ctx, w, coll.Private(all), coll.Private(data), nbytes, nil, nil); err != nil {
		return err
	}
	var got [][]byte
	for _, l := range allLens {
		got = append(got, all[:l])
		all = all[l:]
	}
	var want [][]byte
	for p := range n {
		want = append(want, recordsOf(p)...)
	}
	if !slices.EqualFunc(got, want, bytes.Equal) {
		return fmt.Errorf("allgatherv-raw: rank %d decoded %q, want %q", r.ID(), got, want)
	}
	return nil
}

func vsum(c []int) int {
	s := 0
	for _, v := range c {
		s += v
	}
	return s
}
