package colltest

// Checks of the data-movement families (names "move-..."): Broadcast,
// Scatter, Gather, Allgather, Exchange and Permute, their in-place forms,
// the four get/put/priv forms, every root, several counts, element types,
// layouts, algorithms, sync modes and teams.
//
// Every case is described by an mvCase, plain data that every rank of the
// job builds the same way. Each rank computes the expected contents of
// every buffer from the case alone (mvCase.expected: the placement rules
// of the coll documentation written out as plain loops over slots, on
// int64 tags) and compares them with what it holds itself: its partition
// of each shared array and its own private slices. Together the ranks cover
// every element, including those that must stay untouched (elements around
// the range, slots of non-members with AllThr, sources).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

func init() {
	register(
		Check{Name: "move-broadcast", MinRanks: 1, Run: mvFamilyCheck(mvBroadcast)},
		Check{Name: "move-broadcast-in-place", MinRanks: 1, Run: mvFamilyCheck(mvBroadcastIP)},
		Check{Name: "move-scatter", MinRanks: 1, Run: mvFamilyCheck(mvScatter)},
		Check{Name: "move-scatter-in-place", MinRanks: 1, Run: mvFamilyCheck(mvScatterIP)},
		Check{Name: "move-gather", MinRanks: 1, Run: mvFamilyCheck(mvGather)},
		Check{Name: "move-gather-in-place", MinRanks: 1, Run: mvFamilyCheck(mvGatherIP)},
		Check{Name: "move-allgather", MinRanks: 1, Run: mvFamilyCheck(mvAllgather)},
		Check{Name: "move-allgather-in-place", MinRanks: 1, Run: mvFamilyCheck(mvAllgatherIP)},
		Check{Name: "move-exchange", MinRanks: 1, Run: mvFamilyCheck(mvExchange)},
		Check{Name: "move-exchange-in-place", MinRanks: 1, Run: mvFamilyCheck(mvExchangeIP)},
		Check{Name: "move-permute", MinRanks: 1, Run: mvFamilyCheck(mvPermute)},
		Check{Name: "move-permute-in-place", MinRanks: 1, Run: mvFamilyCheck(mvPermuteIP)},
		Check{Name: "move-layouts", MinRanks: 1, Run: mvLayoutsCheck},
		Check{Name: "move-sync", MinRanks: 1, Run: mvSyncCheck},
		Check{Name: "move-sync-chain", MinRanks: 1, Run: mvSyncChainCheck},
		Check{Name: "move-repeat", MinRanks: 1, Run: mvRepeatCheck},
		Check{Name: "move-segment", MinRanks: 1, Run: mvSegmentCheck},
		Check{Name: "move-team-split", MinRanks: 2, Run: mvSplitCheck},
		Check{Name: "move-team-skip", MinRanks: 2, Run: mvSkipCheck(false)},
		Check{Name: "move-team-allthr", MinRanks: 2, Run: mvSkipCheck(true)},
	)
}

// ---- element types ----

// The element types of the checks besides int64: a small array and a
// struct with padding. Values are made from int64 tags.
type (
	mvTriple [3]int16
	mvPair   struct {
		A int32
		B float64
	}
)

type mvType uint8

const (
	mvInt64 mvType = iota
	mvTripleT
	mvPairT
)

func (t mvType) String() string {
	return [...]string{"int64", "[3]int16", "struct{A int32; B float64}"}[t]
}

// mvMake returns the value of type T that stands for tag v; different tags
// (|v| < 2^47) give different values.
func mvMake[T any](v int64) T {
	var z T
	switch p := any(&z).(type) {
	case *int64:
		*p = v
	case *mvTriple:
		*p = mvTriple{int16(v), int16(v >> 16), int16(v >> 32)}
	case *mvPair:
		*p = mvPair{A: int32(v), B: float64(v) + 0.25}
	default:
		panic(fmt.Sprintf("colltest: no values for element type %T", z))
	}
	return z
}

// ---- families and buffer shapes ----

type mvFam uint8

const (
	mvBroadcast mvFam = iota
	mvBroadcastIP
	mvScatter
	mvScatterIP
	mvGather
	mvGatherIP
	mvAllgather
	mvAllgatherIP
	mvExchange
	mvExchangeIP
	mvPermute
	mvPermuteIP
	mvFamilies // count
)

func (f mvFam) String() string {
	return [...]string{"Broadcast", "BroadcastInPlace", "Scatter", "ScatterInPlace", "Gather", "GatherInPlace",
		"Allgather", "AllgatherInPlace", "Exchange", "ExchangeInPlace", "Permute", "PermuteInPlace"}[f]
}

func (f mvFam) inPlace() bool { return f%2 == 1 }

func (f mvFam) rooted() bool { return f <= mvGatherIP }

// A buffer's shape says how much of it a family uses, in chunks of n
// elements, with S slots.
type mvShape uint8

const (
	mvOne    mvShape = iota // n elements (the broadcast source)
	mvChunk                 // one chunk per slot
	mvRegion                // one region of S chunks per slot
	mvArea                  // the root's area of S chunks
)

// shapes returns the shapes of the source and destination (in-place: of
// the buffer, twice).
func (f mvFam) shapes() (src, dst mvShape) {
	switch f {
	case mvBroadcast:
		return mvOne, mvChunk
	case mvBroadcastIP, mvPermute, mvPermuteIP:
		return mvChunk, mvChunk
	case mvScatter:
		return mvArea, mvChunk
	case mvGather:
		return mvChunk, mvArea
	case mvAllgather:
		return mvChunk, mvRegion
	}
	return mvRegion, mvRegion
}

// ---- cases ----

// mvBufSpec is one buffer of a case: a private slice on every member, or a
// range of a shared array of block size blk starting at element at.
type mvBufSpec struct {
	priv bool
	blk  int64
	at   int64
}

func (s mvBufSpec) String() string {
	if s.priv {
		return "private"
	}
	var b string
	switch s.blk {
	case pgas.Cyclic:
		b = "cyclic"
	case pgas.Star:
		b = "star"
	case pgas.Indefinite:
		b = "indefinite"
	default:
		b = fmt.Sprintf("blk=%d", s.blk)
	}
	return fmt.Sprintf("shared[%s]@%d", b, s.at)
}

// mvTail is the number of elements after the used part of every buffer
// that must stay untouched.
const mvTail = 2

// mvCase is one collective call, as plain data.
type mvCase struct {
	fam      mvFam
	typ      mvType
	n        int
	root     int // team id
	algo     coll.Algo
	sync     coll.Sync
	withSync bool // pass WithSync even for the default mode
	allThr   bool
	seg      int64 // Segment option, 0 for none
	perm     []int
	src, dst mvBufSpec // in-place: src is the buffer
	members  []int     // the team's ranks, increasing
	ranks    int       // THREADS
	salt     int64     // makes every case's values different
	nilOther bool      // private buffers no member needs are nil
	// late makes one rank (late-1) slow: it sleeps before filling its
	// partitions (lateInit) or before calling (otherwise).
	late     int
	lateInit bool
}

func (c mvCase) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v[%v](", c.fam, c.typ)
	if c.fam.inPlace() {
		fmt.Fprintf(&b, "%v", c.src)
	} else {
		fmt.Fprintf(&b, "%s, dst %v, src %v", c.form(), c.dst, c.src)
	}
	fmt.Fprintf(&b, ", n=%d", c.n)
	if c.fam.rooted() {
		fmt.Fprintf(&b, ", root=%d", c.root)
	}
	if c.fam == mvBroadcast || c.fam == mvBroadcastIP {
		fmt.Fprintf(&b, ", %v", c.algo)
	}
	if c.perm != nil {
		fmt.Fprintf(&b, ", perm=%v", c.perm)
	}
	if c.sync != 0 || c.withSync {
		fmt.Fprintf(&b, ", %v", c.sync)
	}
	if c.seg > 0 {
		fmt.Fprintf(&b, ", segment=%d", c.seg)
	}
	if len(c.members) != c.ranks {
		fmt.Fprintf(&b, ", team %v", c.members)
	}
	if c.allThr {
		b.WriteString(", allthr")
	}
	if c.nilOther {
		b.WriteString(", nil unused private buffers")
	}
	if c.late > 0 {
		what := "calling"
		if c.lateInit {
			what = "filling its partitions"
		}
		fmt.Fprintf(&b, ", rank %d late %s", c.late-1, what)
	}
	b.WriteString(")")
	return b.String()
}

// form names the get/put/priv variant.
func (c mvCase) form() string {
	switch {
	case c.src.priv && c.dst.priv:
		return "priv"
	case c.dst.priv:
		return "get"
	case c.src.priv:
		return "put"
	}
	return "shared"
}

func (c mvCase) nbufs() int {
	if c.fam.inPlace() {
		return 1
	}
	return 2
}

func (c mvCase) spec(b int) mvBufSpec {
	if b == 0 {
		return c.src
	}
	return c.dst
}

func (c mvCase) shape(b int) mvShape {
	s, d := c.fam.shapes()
	if b == 0 {
		return s
	}
	return d
}

// slots is the number of chunk slots: team members, or THREADS with
// AllThr.
func (c mvCase) slots() int {
	if c.allThr {
		return c.ranks
	}
	return len(c.members)
}

// slot returns the slot of team id tid.
func (c mvCase) slot(tid int) int {
	if c.allThr {
		return c.members[tid]
	}
	return tid
}

func (c mvCase) rootRank() int { return c.members[c.root] }

func (c mvCase) isMember(rank int) bool { return slices.Contains(c.members, rank) }

// units returns how many chunks of n elements a buffer of shape s spans:
// in a shared array (all members' parts) or in one member's slice.
func (c mvCase) units(s mvShape, shared bool) int64 {
	S := int64(c.slots())
	switch s {
	case mvOne:
		return 1
	case mvChunk:
		if shared {
			return S
		}
		return 1
	case mvRegion:
		if shared {
			return S * S
		}
		return S
	}
	return S // area
}

// sharedLen is the length of buffer b's shared array.
func (c mvCase) sharedLen(b int) int64 {
	sp := c.spec(b)
	return sp.at + c.units(c.shape(b), true)*int64(c.n) + mvTail
}

// privLen is the length of member rank's slice for buffer b, or -1 for nil.
func (c mvCase) privLen(b, rank int) int {
	sh := c.shape(b)
	if c.nilOther && (c.n == 0 || (sh == mvOne || sh == mvArea) && rank != c.rootRank()) {
		return -1
	}
	return int(c.units(sh, false))*c.n + mvTail
}

// initTag is the tag initially at index idx of buffer b: of the shared
// array (rank < 0) or of rank's slice. Destinations start out negative.
func (c mvCase) initTag(b, rank int, idx int64) int64 {
	v := c.salt + idx
	if rank < 0 {
		v += 1_000_000
	} else {
		v += int64(rank+1) * 100_000
	}
	if b == 1 {
		v = -v
	}
	return v
}

// mvLoc is a position in a buffer: element idx of the shared array (rank
// < 0) or of rank's slice.
type mvLoc struct {
	b    int
	rank int
	idx  int64
}

// chunk is member tid's chunk of buffer b.
func (c mvCase) chunk(b, tid int) mvLoc {
	if c.spec(b).priv {
		return mvLoc{b, c.members[tid], 0}
	}
	return mvLoc{b, -1, c.spec(b).at + int64(c.slot(tid))*int64(c.n)}
}

// region is chunk j of member tid's region of buffer b.
func (c mvCase) region(b, tid, j int) mvLoc {
	n, S := int64(c.n), int64(c.slots())
	if c.spec(b).priv {
		return mvLoc{b, c.members[tid], int64(j) * n}
	}
	return mvLoc{b, -1, c.spec(b).at + (int64(c.slot(tid))*S+int64(j))*n}
}

// area is chunk j of the root's area of buffer b.
func (c mvCase) area(b, j int) mvLoc {
	if c.spec(b).priv {
		return mvLoc{b, c.rootRank(), int64(j) * int64(c.n)}
	}
	return mvLoc{b, -1, c.spec(b).at + int64(j)*int64(c.n)}
}

// mvModel holds the tags of every buffer: the whole shared array, or every
// member's slice (nil for non-members and nil slices).
type mvModel struct {
	sh [2][]int64
	pv [2][][]int64
}

func (m *mvModel) at(l mvLoc) []int64 {
	if l.rank < 0 {
		return m.sh[l.b][l.idx:]
	}
	return m.pv[l.b][l.rank][l.idx:]
}

func (c mvCase) initial() *mvModel {
	m := &mvModel{}
	for b := range c.nbufs() {
		if !c.spec(b).priv {
			s := make([]int64, c.sharedLen(b))
			for g := range s {
				s[g] = c.initTag(b, -1, int64(g))
			}
			m.sh[b] = s
			continue
		}
		m.pv[b] = make([][]int64, c.ranks)
		for _, p := range c.members {
			if l := c.privLen(b, p); l >= 0 {
				s := make([]int64, l)
				for i := range s {
					s[i] = c.initTag(b, p, int64(i))
				}
				m.pv[b][p] = s
			}
		}
	}
	return m
}

// expected returns the contents of every buffer after the call: the
// family's moves applied to a copy of the initial contents, every move
// reading the initial contents.
func (c mvCase) expected() *mvModel {
	before, after := c.initial(), c.initial()
	c.moves(func(from, to mvLoc) {
		copy(after.at(to)[:c.n], before.at(from)[:c.n])
	})
	return after
}

// moves calls move for every chunk the call moves, as the coll
// documentation states them.
func (c mvCase) moves(move func(from, to mvLoc)) {
	S := len(c.members)
	src, dst := 0, 1
	if c.fam.inPlace() {
		dst = 0
	}
	switch c.fam {
	case mvBroadcast: // the root's n source elements to every member's chunk
		for m := range S {
			move(c.area(src, 0), c.chunk(dst, m))
		}
	case mvBroadcastIP: // the root's chunk to every other member's chunk
		for m := range S {
			move(c.chunk(src, c.root), c.chunk(dst, m))
		}
	case mvScatter: // slot m of the root's area to member m's chunk
		for m := range S {
			move(c.area(src, c.slot(m)), c.chunk(dst, m))
		}
	case mvScatterIP: // slot m of the root's region to the start of member m's region
		for m := range S {
			move(c.region(src, c.root, c.slot(m)), c.region(dst, m, 0))
		}
	case mvGather: // member m's chunk to slot m of the root's area
		for m := range S {
			move(c.chunk(src, m), c.area(dst, c.slot(m)))
		}
	case mvGatherIP: // the start of member m's region to slot m of the root's region
		for m := range S {
			move(c.region(src, m, 0), c.region(dst, c.root, c.slot(m)))
		}
	case mvAllgather: // member m's chunk to slot m of every member's region
		for m := range S {
			for k := range S {
				move(c.chunk(src, m), c.region(dst, k, c.slot(m)))
			}
		}
	case mvAllgatherIP: // the start of member m's region to slot m of every region
		for m := range S {
			for k := range S {
				move(c.region(src, m, 0), c.region(dst, k, c.slot(m)))
			}
		}
	case mvExchange, mvExchangeIP: // slot j of member i's region to slot i of member j's region
		for i := range S {
			for j := range S {
				move(c.region(src, i, c.slot(j)), c.region(dst, j, c.slot(i)))
			}
		}
	case mvPermute, mvPermuteIP: // member m's chunk to member perm[m]'s chunk (slots)
		for m := range S {
			to := c.perm[c.slot(m)]
			if c.allThr {
				to = slices.Index(c.members, to)
			}
			move(c.chunk(src, m), c.chunk(dst, to))
		}
	}
}

func (c mvCase) options() []coll.Option {
	var o []coll.Option
	if c.fam.rooted() {
		if c.root != 0 {
			o = append(o, coll.Root(c.root))
		}
		if c.algo != coll.Auto {
			o = append(o, coll.WithAlgo(c.algo))
		}
	}
	if c.sync != 0 || c.withSync {
		o = append(o, coll.WithSync(c.sync))
	}
	if c.allThr {
		o = append(o, coll.AllThr())
	}
	if c.seg > 0 {
		o = append(o, coll.Segment(c.seg))
	}
	return o
}

// ---- running cases ----

// mvInst is one rank's side of a case: the arrays and its own slices.
type mvInst[T comparable] struct {
	c    mvCase
	r    *pgas.Rank
	arrs [2]*pgas.Array[T]
	priv [2][]T
}

// mvRunner is an mvInst of any element type.
type mvRunner interface {
	call(ctx context.Context, t *pgas.Team) error
	verify() error
	free(ctx context.Context) error
}

// mvSetup is collective over all ranks: it allocates the case's shared
// arrays and fills this rank's partitions and (on members) private
// slices with the initial tags.
func mvSetup(ctx context.Context, r *pgas.Rank, c mvCase) (mvRunner, error) {
	switch c.typ {
	case mvTripleT:
		return mvSetupT[mvTriple](ctx, r, c)
	case mvPairT:
		return mvSetupT[mvPair](ctx, r, c)
	}
	return mvSetupT[int64](ctx, r, c)
}

func mvSetupT[T comparable](ctx context.Context, r *pgas.Rank, c mvCase) (*mvInst[T], error) {
	in := &mvInst[T]{c: c, r: r}
	me := r.ID()
	for b := range c.nbufs() {
		if sp := c.spec(b); !sp.priv {
			a, err := pgas.AllAllocArray[T](ctx, r, c.sharedLen(b), sp.blk)
			if err != nil {
				return nil, fmt.Errorf("%v: allocating a shared buffer: %w", c, err)
			}
			in.arrs[b] = a
		}
	}
	if c.lateInit && me == c.late-1 {
		time.Sleep(mvLateSleep)
	}
	for b := range c.nbufs() {
		if a := in.arrs[b]; a != nil {
			for g0, blk := range a.MyBlocks() {
				for k := range blk {
					blk[k] = mvMake[T](c.initTag(b, -1, g0+int64(k)))
				}
			}
			continue
		}
		if !c.isMember(me) {
			continue
		}
		if l := c.privLen(b, me); l >= 0 {
			s := make([]T, l)
			for i := range s {
				s[i] = mvMake[T](c.initTag(b, me, int64(i)))
			}
			in.priv[b] = s
		}
	}
	return in, nil
}

// mvLateSleep is how late a late rank is.
const mvLateSleep = 5 * time.Millisecond

func (in *mvInst[T]) buf(b int) coll.Buf[T] {
	if in.c.spec(b).priv {
		return coll.Private(in.priv[b])
	}
	return coll.Shared(in.arrs[b], in.c.spec(b).at)
}

// call makes the case's collective call on team t.
func (in *mvInst[T]) call(ctx context.Context, t *pgas.Team) error {
	c := in.c
	o := c.options()
	var err error
	switch c.fam {
	case mvBroadcast:
		err = coll.Broadcast(ctx, t, in.buf(1), in.buf(0), c.n, o...)
	case mvBroadcastIP:
		err = coll.BroadcastInPlace(ctx, t, in.buf(0), c.n, o...)
	case mvScatter:
		err = coll.Scatter(ctx, t, in.buf(1), in.buf(0), c.n, o...)
	case mvScatterIP:
		err = coll.ScatterInPlace(ctx, t, in.buf(0), c.n, o...)
	case mvGather:
		err = coll.Gather(ctx, t, in.buf(1), in.buf(0), c.n, o...)
	case mvGatherIP:
		err = coll.GatherInPlace(ctx, t, in.buf(0), c.n, o...)
	case mvAllgather:
		err = coll.Allgather(ctx, t, in.buf(1), in.buf(0), c.n, o...)
	case mvAllgatherIP:
		err = coll.AllgatherInPlace(ctx, t, in.buf(0), c.n, o...)
	case mvExchange:
		err = coll.Exchange(ctx, t, in.buf(1), in.buf(0), c.n, o...)
	case mvExchangeIP:
		err = coll.ExchangeInPlace(ctx, t, in.buf(0), c.n, o...)
	case mvPermute:
		err = coll.Permute(ctx, t, in.buf(1), in.buf(0), c.perm, c.n, o...)
	case mvPermuteIP:
		err = coll.PermuteInPlace(ctx, t, in.buf(0), c.perm, c.n, o...)
	}
	if err != nil {
		return fmt.Errorf("%v on rank %d: %w", c, in.r.ID(), err)
	}
	return nil
}

// verify compares this rank's partitions of the shared arrays and its own
// private slices with the expected contents.
func (in *mvInst[T]) verify() error {
	c, me := in.c, in.r.ID()
	want := c.expected()
	bad := 0
	var first string
	report := func(where string, got T, w int64) {
		if bad == 0 {
			first = fmt.Sprintf("%s = %v; want %v", where, got, mvMake[T](w))
		}
		bad++
	}
	names := [2]string{"src", "dst"}
	if c.fam.inPlace() {
		names[0] = "buf"
	}
	for b := range c.nbufs() {
		if a := in.arrs[b]; a != nil {
			for g0, blk := range a.MyBlocks() {
				for k, v := range blk {
					g := g0 + int64(k)
					if w := want.sh[b][g]; v != mvMake[T](w) {
						report(fmt.Sprintf("shared %s element %d (start %d, on rank %d)", names[b], g, c.spec(b).at, me), v, w)
					}
				}
			}
		}
		if c.spec(b).priv && c.isMember(me) {
			got, w := in.priv[b], want.pv[b][me]
			if len(got) != len(w) {
				return fmt.Errorf("%v on rank %d: private %s has %d elements; want %d", c, me, names[b], len(got), len(w))
			}
			for i, v := range got {
				if v != mvMake[T](w[i]) {
					report(fmt.Sprintf("private %s[%d]", names[b], i), v, w[i])
				}
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%v on rank %d: %s (%d wrong elements on this rank)", c, me, first, bad)
	}
	return nil
}

func (in *mvInst[T]) free(ctx context.Context) error {
	for _, a := range in.arrs {
		if a != nil {
			if err := a.AllFree(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// mvRunSet is collective over all ranks. It sets up cases, then every rank
// calls, in order, the cases whose team it is in, on its team t (nil on a
// rank in no team), then every rank verifies every case and frees it.
// Cases of disjoint teams run at the same time. With between, members
// pass a team barrier between consecutive calls, as a user must before a
// call that depends on an earlier OutNo one. A member verifies a case with
// OutAll right after the call, without any barrier (OutAll promises the
// data is complete on return); other verifications follow a barrier.
func mvRunSet(ctx context.Context, r *pgas.Rank, t *pgas.Team, between bool, cs ...mvCase) error {
	ins := make([]mvRunner, len(cs))
	pre := false // a barrier before the calls
	for i, c := range cs {
		in, err := mvSetup(ctx, r, c)
		if err != nil {
			return err
		}
		ins[i] = in
		// Non-members fill their partitions of a team's arrays; with InNo
		// the caller guarantees that every member's data is ready. With
		// InAll and the world team the collective itself must wait for
		// every member's initialisation.
		pre = pre || len(c.members) < r.N() || c.sync&coll.InNo != 0 || len(cs) > 1
	}
	if pre {
		if err := r.Barrier(ctx); err != nil {
			return err
		}
	}
	done := make([]bool, len(cs))
	calls := 0
	for i, c := range cs {
		if !c.isMember(r.ID()) {
			continue
		}
		if calls > 0 && between {
			if err := t.Barrier(ctx); err != nil {
				return err
			}
		}
		calls++
		if c.late-1 == r.ID() && !c.lateInit {
			time.Sleep(mvLateSleep)
		}
		if err := ins[i].call(ctx, t); err != nil {
			return err
		}
		if c.sync&coll.OutNo == 0 {
			if err := ins[i].verify(); err != nil {
				return err
			}
			done[i] = true
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	for i, in := range ins {
		if !done[i] {
			if err := in.verify(); err != nil {
				return err
			}
		}
	}
	for _, in := range ins {
		if err := in.free(ctx); err != nil {
			return err
		}
	}
	return nil
}

// mvRunAll runs the cases one at a time on team t.
func mvRunAll(ctx context.Context, r *pgas.Rank, t *pgas.Team, cs []mvCase) error {
	for _, c := range cs {
		if err := mvRunSet(ctx, r, t, false, c); err != nil {
			return err
		}
	}
	return nil
}

// ---- case generators ----

var (
	mvAlgos = []coll.Algo{coll.Auto, coll.Flat, coll.Binomial, coll.BinomialFlat, coll.FlatFlat, coll.Chain}
	// mvLayouts are block sizes for shared buffers; none of them puts a
	// member's chunk on that member in general.
	mvLayouts = []int64{pgas.Cyclic, 3, pgas.Star, 8, pgas.Indefinite, 5}
)

// mvForms returns the (src, dst) privacy of the forms of f: the four
// get/put/priv forms, or shared and private for in-place forms.
func mvForms(f mvFam) [][2]bool {
	if f.inPlace() {
		return [][2]bool{{false, false}, {true, true}}
	}
	return [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}}
}

// mvWorld returns the ranks 0..n-1.
func mvWorld(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

// mvPerms returns a few permutations of [0,S): a rotation, the reversal, a
// fixed shuffle and the identity.
func mvPerms(S int) [][]int {
	rot, rev, id := make([]int, S), make([]int, S), make([]int, S)
	for i := range S {
		rot[i] = (i + 1) % S
		rev[i] = S - 1 - i
		id[i] = i
	}
	shuf := slices.Clone(id)
	rand.New(rand.NewPCG(uint64(S), 7)).Shuffle(S, func(i, j int) { shuf[i], shuf[j] = shuf[j], shuf[i] })
	return [][]int{rot, rev, shuf, id}
}

// mvAllThrPerms returns permutations of the ranks [0,N) that send members
// to members: the members rotated, and reversed; non-members are fixed.
func mvAllThrPerms(N int, members []int) [][]int {
	rot, rev := mvWorld(N), mvWorld(N)
	M := len(members)
	for k, m := range members {
		rot[m] = members[(k+1)%M]
		rev[m] = members[M-1-k]
	}
	return [][]int{rot, rev}
}

// mvGen builds the cases of one check, varying layouts, starts and salts
// from case to case.
type mvGen struct {
	ranks   int
	members []int
	allThr  bool
	k       int
	cs      []mvCase
}

func (g *mvGen) add(c mvCase) {
	c.members, c.ranks, c.allThr = g.members, g.ranks, g.allThr
	c.salt = int64(len(g.cs)+1) * 10_000_000
	if c.fam == mvPermute || c.fam == mvPermuteIP {
		if c.perm == nil {
			var ps [][]int
			if g.allThr {
				ps = mvAllThrPerms(g.ranks, g.members)
			} else {
				ps = mvPerms(len(g.members))
			}
			c.perm = ps[g.k%len(ps)]
		}
	}
	g.cs = append(g.cs, c)
	g.k++
}

// buf returns a buffer spec: private, or shared with the next layout.
func (g *mvGen) buf(priv bool, n int, shift int) mvBufSpec {
	if priv {
		return mvBufSpec{priv: true}
	}
	blk := mvLayouts[(g.k+shift)%len(mvLayouts)]
	if n >= 100 && blk > 0 && blk < int64(n) {
		blk = int64(n) // bounded message counts for large chunks
	}
	return mvBufSpec{blk: blk, at: int64((g.k + shift) % 3 * 2)}
}

// sweep adds f's cases: every form; every root (a sample beyond 8
// members); counts 1 and 7 with int64 (every algorithm for broadcasts);
// count 7 with the other element types; count 0 (nil private buffers);
// and count big if it is not 0. Private buffers that no member needs are
// nil in every other case. Without full: count 5 and one other type.
func (g *mvGen) sweep(f mvFam, big int, full bool) {
	S := len(g.members)
	roots := []int{0}
	switch {
	case f.rooted() && S <= 8:
		roots = mvWorld(S)
	case f.rooted(): // a sample, for large jobs
		roots = []int{0, 1, S / 2, S - 1}
	}
	algos := []coll.Algo{coll.Auto}
	if f == mvBroadcast || f == mvBroadcastIP {
		algos = mvAlgos
	}
	counts := []int{1, 7}
	if !full {
		counts = []int{5}
	}
	for _, form := range mvForms(f) {
		for _, root := range roots {
			for _, algo := range algos {
				for _, n := range counts {
					g.add(mvCase{fam: f, n: n, root: root, algo: algo,
						src: g.buf(form[0], n, 0), dst: g.buf(form[1], n, 2), nilOther: g.k%2 == 0})
				}
			}
			types := []mvType{mvTripleT, mvPairT}
			if !full {
				types = types[root%2 : root%2+1]
			}
			for _, typ := range types {
				g.add(mvCase{fam: f, typ: typ, n: 7, root: root, algo: algos[(root+int(typ))%len(algos)],
					src: g.buf(form[0], 7, 1), dst: g.buf(form[1], 7, 3)})
			}
		}
		last := roots[len(roots)-1]
		g.add(mvCase{fam: f, n: 0, root: last, algo: algos[g.k%len(algos)],
			src: g.buf(form[0], 0, 0), dst: g.buf(form[1], 0, 1), nilOther: true})
		if big > 0 {
			g.add(mvCase{fam: f, typ: mvType(g.k % 3), n: big, root: roots[len(roots)/2], algo: algos[g.k%len(algos)],
				src: g.buf(form[0], big, 0), dst: g.buf(form[1], big, 1)})
		}
	}
}

// mvBig returns a large count that keeps region-shaped buffers (S*S*n
// elements) to a few tens of thousands of elements.
func mvBig(f mvFam, S int) int {
	if f >= mvAllgather && f <= mvExchangeIP {
		return min(1000, 60000/(S*S))
	}
	return 1000
}

// ---- checks ----

// mvFamilyCheck: every form of f on the world team, every root, counts 0,
// 1, 7 and 1000, three element types, every broadcast algorithm.
func mvFamilyCheck(f mvFam) func(context.Context, *pgas.Rank) error {
	return func(ctx context.Context, r *pgas.Rank) error {
		g := &mvGen{ranks: r.N(), members: mvWorld(r.N())}
		g.sweep(f, mvBig(f, r.N()), true)
		if f == mvPermute || f == mvPermuteIP {
			for i, perm := range mvPerms(r.N()) {
				for _, form := range mvForms(f) {
					g.add(mvCase{fam: f, typ: mvType(i % 3), n: 3, perm: perm, src: g.buf(form[0], 3, 0), dst: g.buf(form[1], 3, 1)})
				}
			}
		}
		return mvRunAll(ctx, r, r.World(), g.cs)
	}
}

// mvLayoutsCheck: every family over shared arrays of every layout (cyclic,
// blocked, star, indefinite), source and destination in different
// layouts, at several starts, so that chunks lie on other ranks than their
// members and span ranks.
func mvLayoutsCheck(ctx context.Context, r *pgas.Rank) error {
	N := r.N()
	g := &mvGen{ranks: N, members: mvWorld(N)}
	for f := range mvFamilies {
		for i, blk := range mvLayouts {
			for _, at := range []int64{0, 5} {
				for _, form := range mvForms(f) {
					if form[0] && form[1] {
						continue
					}
					n := 3 + i%2*2
					src := mvBufSpec{priv: form[0], blk: blk, at: at}
					dst := mvBufSpec{priv: form[1], blk: mvLayouts[(i+1)%len(mvLayouts)], at: 5 - at}
					g.add(mvCase{fam: f, typ: mvType(i % 3), n: n, root: (i + int(at)) % N, algo: mvAlgos[i%len(mvAlgos)], src: src, dst: dst})
				}
			}
		}
	}
	return mvRunAll(ctx, r, r.World(), g.cs)
}

// mvSyncCheck: every family and form with InNo|OutNo, two calls in a row
// with a barrier between them and two calls back to back; InAll|OutAll and
// InMy|OutMy given explicitly, and the mixed modes.
func mvSyncCheck(ctx context.Context, r *pgas.Rank) error {
	N := r.N()
	w := r.World()
	g := &mvGen{ranks: N, members: mvWorld(N)}
	for f := range mvFamilies {
		for _, form := range mvForms(f) {
			mk := func(s coll.Sync, n int) mvCase {
				c := mvCase{fam: f, n: n, root: N - 1, algo: mvAlgos[g.k%len(mvAlgos)], sync: s, withSync: true,
					src: g.buf(form[0], n, 0), dst: g.buf(form[1], n, 1)}
				g.add(c)
				return g.cs[len(g.cs)-1]
			}
			no := coll.InNo | coll.OutNo
			for _, between := range []bool{true, false} {
				a, b := mk(no, 7), mk(no, 4)
				if err := mvRunSet(ctx, r, w, between, a, b); err != nil {
					return fmt.Errorf("two calls in a row (barrier between: %v): %w", between, err)
				}
			}
			modes := []coll.Sync{coll.InAll | coll.OutAll, coll.InMy | coll.OutMy}
			if form[0] && form[1] || N == 1 {
				// Private-only calls have no observable entry and exit.
				modes = append(modes, coll.InNo|coll.OutAll, coll.InAll|coll.OutNo)
			}
			for _, s := range modes {
				if err := mvRunSet(ctx, r, w, false, mk(s, 6)); err != nil {
					return err
				}
			}
			if form[0] && form[1] || N == 1 {
				continue
			}
			// InAll: the others must not read or write before the late
			// rank has filled its partitions. OutAll: nobody may return
			// before the late rank has moved its data.
			for _, s := range []coll.Sync{coll.InAll | coll.OutNo, coll.InNo | coll.OutAll} {
				c := mvCase{fam: f, n: 6, root: 0, algo: coll.Flat, sync: s, withSync: true, late: N, lateInit: s&coll.InNo == 0,
					src: mvBufSpec{priv: form[0], blk: pgas.Cyclic, at: 1}, dst: mvBufSpec{priv: form[1], blk: pgas.Cyclic}}
				g.add(c)
				if err := mvRunSet(ctx, r, w, false, g.cs[len(g.cs)-1]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// mvRepeatCheck: ten calls in a row of every family, private buffers
// (staged) with counts that grow and shrink so that the staging area is
// reused and grown; first one call at a time, then all ten back to back
// with InNo|OutNo and no barrier between them.
func mvRepeatCheck(ctx context.Context, r *pgas.Rank) error {
	N := r.N()
	w := r.World()
	g := &mvGen{ranks: N, members: mvWorld(N)}
	for f := range mvFamilies {
		big := mvBig(f, N)
		counts := []int{1, 2, 7, 0, big / 8, 1, big / 2, 3, big, 5}
		var cs []mvCase
		for i, n := range counts {
			form := [2]bool{true, true}
			if i == 6 && !f.inPlace() {
				form = [2]bool{false, true}
			}
			g.add(mvCase{fam: f, typ: mvType(i % 3), n: n, root: i % N, algo: mvAlgos[i%len(mvAlgos)],
				src: g.buf(form[0], n, 0), dst: g.buf(form[1], n, 1)})
			cs = append(cs, g.cs[len(g.cs)-1])
		}
		if err := mvRunAll(ctx, r, w, cs); err != nil {
			return err
		}
		for i := range cs {
			cs[i].sync, cs[i].salt = coll.InNo|coll.OutNo, cs[i].salt+5_000_000
		}
		if err := mvRunSet(ctx, r, w, false, cs...); err != nil {
			return fmt.Errorf("ten calls back to back: %w", err)
		}
	}
	return nil
}

// mvSegmentCheck: the Segment option with a size that is not a multiple
// of the element size, so that transfers and staging split into many
// messages.
func mvSegmentCheck(ctx context.Context, r *pgas.Rank) error {
	N := r.N()
	g := &mvGen{ranks: N, members: mvWorld(N)}
	for f := range mvFamilies {
		for i, form := range mvForms(f) {
			n := 200
			if f >= mvAllgather && f <= mvExchangeIP {
				n = 40
			}
			g.add(mvCase{fam: f, typ: mvType((i + int(f)) % 3), n: n, root: (i + 1) % N, algo: mvAlgos[(i+int(f))%4], seg: 20,
				src: g.buf(form[0], 100, 0), dst: g.buf(form[1], 100, 1)})
		}
	}
	return mvRunAll(ctx, r, r.World(), g.cs)
}

// mvSplitCheck: two disjoint teams from Split(ID%2) run different
// collectives at the same time, on arrays spread over all ranks; each
// case is verified in full.
func mvSplitCheck(ctx context.Context, r *pgas.Rank) error {
	N := r.N()
	t, err := r.Split(ctx, r.ID()%2)
	if err != nil {
		return err
	}
	var teams [2][]int
	for p := range N {
		teams[p%2] = append(teams[p%2], p)
	}
	gs := [2]*mvGen{{ranks: N, members: teams[0]}, {ranks: N, members: teams[1]}}
	pairs := [][2]mvFam{
		{mvAllgather, mvExchange}, {mvBroadcast, mvScatter}, {mvGather, mvAllgatherIP},
		{mvPermute, mvExchangeIP}, {mvScatterIP, mvGatherIP}, {mvBroadcastIP, mvPermuteIP},
		{mvExchange, mvBroadcast}, {mvScatter, mvGather},
	}
	salt := int64(0)
	for i, p := range pairs {
		for j, n := range []int{1, 7, 100} {
			var cs [2]mvCase
			for side, g := range gs {
				f := p[side]
				forms := mvForms(f)
				form := forms[(i+j+side)%len(forms)]
				g.add(mvCase{fam: f, typ: mvType((i + j) % 3), n: n, root: (i + j) % len(g.members), algo: mvAlgos[(i+j+side)%4],
					src: g.buf(form[0], n, 0), dst: g.buf(form[1], n, 1)})
				cs[side] = g.cs[len(g.cs)-1]
				salt += 10_000_000
				cs[side].salt = salt
			}
			if err := mvRunSet(ctx, r, t, false, cs[0], cs[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// mvSkipCheck: a team from NewTeam without rank 1 runs every family,
// form and root; with allThr, placement by global rank: the slots of rank
// 1 (in every shared and private buffer) must stay untouched.
func mvSkipCheck(allThr bool) func(context.Context, *pgas.Rank) error {
	return func(ctx context.Context, r *pgas.Rank) error {
		N := r.N()
		members := slices.DeleteFunc(mvWorld(N), func(p int) bool { return p == 1 })
		t, err := r.NewTeam(ctx, members)
		if err != nil {
			return err
		}
		g := &mvGen{ranks: N, members: members, allThr: allThr}
		for f := range mvFamilies {
			g.sweep(f, 0, false)
		}
		return mvRunAll(ctx, r, t, g.cs)
	}
}

// mvSyncChainCheck: calls whose input is the output of the previous one,
// all InNo|OutNo with a barrier between them as a user must place it:
// Scatter then Allgather (every member ends up with the root's area), and
// ScatterInPlace then AllgatherInPlace, with private and shared buffers.
func mvSyncChainCheck(ctx context.Context, r *pgas.Rank) error {
	N, me := r.N(), r.ID()
	w := r.World()
	const n = 5
	no := coll.WithSync(coll.InNo | coll.OutNo)
	tag := func(root, j int) int64 { return int64(root+1)*1000 + int64(j) }
	for _, root := range []int{0, N - 1} {
		// Private.
		area := make([]int64, N*n)
		if me == root {
			for j := range area {
				area[j] = tag(root, j)
			}
		}
		mine := make([]int64, n)
		all := make([]int64, N*n)
		if err := coll.Scatter(ctx, w, coll.Private(mine), coll.Private(area), n, coll.Root(root), no); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if err := coll.Allgather(ctx, w, coll.Private(all), coll.Private(mine), n, no); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		for j, v := range all {
			if v != tag(root, j) {
				return fmt.Errorf("Scatter(priv, root=%d, n=%d) then Allgather(priv), InNo|OutNo, on rank %d: all[%d] = %d; want %d", root, n, me, j, v, tag(root, j))
			}
		}
		// Private, in place.
		buf := make([]int64, N*n)
		for j := range buf {
			buf[j] = -1
			if me == root {
				buf[j] = tag(root, j)
			}
		}
		if err := coll.ScatterInPlace(ctx, w, coll.Private(buf), n, coll.Root(root), no); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if err := coll.AllgatherInPlace(ctx, w, coll.Private(buf), n, no); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		for j, v := range buf {
			if v != tag(root, j) {
				return fmt.Errorf("ScatterInPlace(priv, root=%d, n=%d) then AllgatherInPlace(priv), InNo|OutNo, on rank %d: buf[%d] = %d; want %d", root, n, me, j, v, tag(root, j))
			}
		}
		// Shared: src area on cyclic, chunks blocked by 3, regions star.
		src, err := pgas.AllAllocArray[int64](ctx, r, int64(N*n), pgas.Cyclic)
		if err != nil {
			return err
		}
		mid, err := pgas.AllAllocArray[int64](ctx, r, int64(N*n), 3)
		if err != nil {
			return err
		}
		dst, err := pgas.AllAllocArray[int64](ctx, r, int64(N*N*n), pgas.Star)
		if err != nil {
			return err
		}
		for g0, blk := range src.MyBlocks() {
			for k := range blk {
				blk[k] = tag(root, int(g0)+k)
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if err := coll.Scatter(ctx, w, coll.Shared(mid, 0), coll.Shared(src, 0), n, coll.Root(root), no); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if err := coll.Allgather(ctx, w, coll.Shared(dst, 0), coll.Shared(mid, 0), n, no); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		for g0, blk := range dst.MyBlocks() {
			for k, v := range blk {
				g := int(g0) + k
				if want := tag(root, g%(N*n)); v != want {
					return fmt.Errorf("Scatter(shared, root=%d, n=%d) then Allgather(shared), InNo|OutNo, on rank %d: dst element %d = %d; want %d", root, n, me, g, v, want)
				}
			}
		}
		// Shared, in place: the root's region holds the data.
		for g0, blk := range dst.MyBlocks() {
			for k := range blk {
				g := int(g0) + k
				blk[k] = -1
				if g/(N*n) == root {
					blk[k] = tag(root, g%(N*n))
				}
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if err := coll.ScatterInPlace(ctx, w, coll.Shared(dst, 0), n, coll.Root(root), no); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if err := coll.AllgatherInPlace(ctx, w, coll.Shared(dst, 0), n, no); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		for g0, blk := range dst.MyBlocks() {
			for k, v := range blk {
				g := int(g0) + k
				if want := tag(root, g%(N*n)); v != want {
					return fmt.Errorf("ScatterInPlace(shared, root=%d, n=%d) then AllgatherInPlace(shared), InNo|OutNo, on rank %d: element %d = %d; want %d", root, n, me, g, v, want)
				}
			}
		}
		for _, a := range []*pgas.Array[int64]{src, mid, dst} {
			if err := a.AllFree(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}
