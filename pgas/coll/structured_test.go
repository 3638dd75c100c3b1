package coll_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
	"github.com/pgasmr/pgasmr/pgas/transport/transporttest"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// The structured plans of the one-round collectives between private
// buffers (each member plans only its own chunks) against an oracle (a
// loop over members computing every destination slice) and against the
// global plan they replace (coll.ForceGlobalPlan): the same results and
// the same traffic, message for message, and (coll.CheckPlans) the same
// chunks, staging offsets and staging need on every member.

// sVal is element x of the source of the member of rank q; sWord is
// element x of its chunk for slot s (the exchanges).
func sVal(q, x int) int64     { return int64(q+1)<<32 | int64(x) }
func sWord(q, s, x int) int64 { return int64(q+1)<<40 | int64(s)<<20 | int64(x) }

// sFill returns n elements of -1, a value no source holds.
func sFill(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = -1
	}
	return s
}

// sEnv is one member's view of a case: its team, the placement, and a
// random source that every member of the team draws alike.
type sEnv struct {
	ctx    context.Context
	tm     *pgas.Team
	allThr bool
	rng    *rand.Rand
	big    bool // counts large enough to stream through a small segment
}

func (e *sEnv) slots() int {
	if e.allThr {
		return e.tm.Rank().N()
	}
	return e.tm.Size()
}

func (e *sEnv) slot(tid int) int {
	if e.allThr {
		return e.tm.RankOf(tid)
	}
	return tid
}

func (e *sEnv) opts(extra ...coll.Option) []coll.Option {
	var o []coll.Option
	if e.allThr {
		o = append(o, coll.AllThr())
	}
	return append(o, extra...)
}

// count draws a chunk's count: a third of them zero.
func (e *sEnv) count() int {
	if e.rng.IntN(3) == 0 {
		return 0
	}
	if e.big {
		return 500 + e.rng.IntN(2500)
	}
	return 1 + e.rng.IntN(6)
}

func (e *sEnv) counts(k int) []int {
	c := make([]int, k)
	for i := range c {
		c[i] = e.count()
	}
	return c
}

// packed returns the offsets of chunks of counts laid out one after
// another in order, gap(i) elements before chunk i, and the end.
func packed(counts []int, gap func(i int) int) ([]int, int) {
	at := make([]int, len(counts))
	s := 0
	for i, c := range counts {
		s += gap(i)
		at[i] = s
		s += c
	}
	return at, s
}

func noGap(int) int { return 0 }

// sRun is one call of a case with the given options: the destination it
// leaves on this member.
type sRun func(opts []coll.Option) ([]int64, error)

// sCase sets up one collective on a member: its run, and the destination
// the oracle says this member must end with.
type sCase struct {
	name  string
	setup func(e *sEnv) (run sRun, want []int64)
}

var sCases = []sCase{
	{"allgather", func(e *sEnv) (sRun, []int64) {
		n, S, me := e.count(), e.slots(), e.tm.Rank().ID()
		want := sFill(S * n)
		for m := range e.tm.Size() {
			for x := range n {
				want[e.slot(m)*n+x] = sVal(e.tm.RankOf(m), x)
			}
		}
		return func(opts []coll.Option) ([]int64, error) {
			src := make([]int64, n)
			for x := range src {
				src[x] = sVal(me, x)
			}
			dst := sFill(S * n)
			return dst, coll.Allgather(e.ctx, e.tm, coll.Private(dst), coll.Private(src), n, opts...)
		}, want
	}},
	{"allgather-in-place", func(e *sEnv) (sRun, []int64) {
		n, S, me := e.count(), e.slots(), e.tm.Rank().ID()
		init := func() []int64 {
			buf := sFill(S * n)
			for x := range n {
				buf[x] = sVal(me, x)
			}
			return buf
		}
		want := init()
		for m := range e.tm.Size() {
			for x := range n {
				want[e.slot(m)*n+x] = sVal(e.tm.RankOf(m), x)
			}
		}
		return func(opts []coll.Option) ([]int64, error) {
			buf := init()
			return buf, coll.AllgatherInPlace(e.ctx, e.tm, coll.Private(buf), n, opts...)
		}, want
	}},
	{"exchange", func(e *sEnv) (sRun, []int64) { return sExchange(e, false) }},
	{"exchange-in-place", func(e *sEnv) (sRun, []int64) { return sExchange(e, true) }},
	{"allgatherv", func(e *sEnv) (sRun, []int64) { return sAllgatherV(e, false) }},
	{"allgatherv-displs", func(e *sEnv) (sRun, []int64) { return sAllgatherV(e, true) }},
	{"exchangev", func(e *sEnv) (sRun, []int64) { return sExchangeV(e, false, false) }},
	{"exchangev-displs", func(e *sEnv) (sRun, []int64) { return sExchangeV(e, false, true) }},
	{"exchangevmerge", func(e *sEnv) (sRun, []int64) { return sExchangeV(e, true, false) }},
	{"exchangevmerge-displs", func(e *sEnv) (sRun, []int64) { return sExchangeV(e, true, true) }},
}

func sExchange(e *sEnv, inPlace bool) (sRun, []int64) {
	n, S, me := e.count(), e.slots(), e.tm.Rank().ID()
	mine := e.slot(e.tm.ID())
	init := func() []int64 {
		src := make([]int64, S*n)
		for s := range S {
			for x := range n {
				src[s*n+x] = sWord(me, s, x)
			}
		}
		return src
	}
	want := sFill(S * n)
	if inPlace {
		want = init()
	}
	for i := range e.tm.Size() {
		for x := range n {
			want[e.slot(i)*n+x] = sWord(e.tm.RankOf(i), mine, x)
		}
	}
	return func(opts []coll.Option) ([]int64, error) {
		src := init()
		if inPlace {
			return src, coll.ExchangeInPlace(e.ctx, e.tm, coll.Private(src), n, opts...)
		}
		dst := sFill(S * n)
		return dst, coll.Exchange(e.ctx, e.tm, coll.Private(dst), coll.Private(src), n, opts...)
	}, want
}

func sAllgatherV(e *sEnv, displs bool) (sRun, []int64) {
	S, me := e.slots(), e.tm.Rank().ID()
	counts := e.counts(S)
	var sd, dd []int
	if displs {
		sd, dd = make([]int, S), make([]int, S)
		for s := range S {
			sd[s], dd[s] = e.rng.IntN(4), e.rng.IntN(6)
		}
	}
	at := func(d []int, s int) int {
		if d == nil {
			return 0
		}
		return d[s]
	}
	mine := e.slot(e.tm.ID())
	pre, total := packed(counts, noGap)
	want := sFill(at(dd, mine) + total)
	for m := range e.tm.Size() {
		sm := e.slot(m)
		for x := range counts[sm] {
			want[at(dd, mine)+pre[sm]+x] = sVal(e.tm.RankOf(m), x)
		}
	}
	return func(opts []coll.Option) ([]int64, error) {
		src := sFill(at(sd, mine) + counts[mine])
		for x := range counts[mine] {
			src[at(sd, mine)+x] = sVal(me, x)
		}
		dst := sFill(len(want))
		return dst, coll.AllgatherV(e.ctx, e.tm, coll.Private(dst), coll.Private(src), counts, sd, dd, opts...)
	}, want
}

// sExchangeV is ExchangeV, or ExchangeVMerge with merge, with packed or
// random (displs) displacements.
func sExchangeV(e *sEnv, merge, displs bool) (sRun, []int64) {
	S, me := e.slots(), e.tm.Rank().ID()
	mine := e.slot(e.tm.ID())
	m := e.counts(S * S)
	gap := noGap
	if displs {
		gap = func(int) int { return e.rng.IntN(3) }
	}
	sd := make([]int, S*S) // by chunk k = sender slot * S + receiver slot
	for s := range S {
		at, _ := packed(m[s*S:(s+1)*S], gap)
		copy(sd[s*S:], at)
	}
	dd := make([]int, S*S)
	var start []int
	if merge && displs {
		start = make([]int, S)
		for u := range S {
			start[u] = e.rng.IntN(4)
		}
	}
	for u := range S {
		col := make([]int, S)
		for s := range S {
			col[s] = m[s*S+u]
		}
		g := gap
		if merge { // packed after dstStart
			g = noGap
		}
		at, _ := packed(col, g)
		for s := range S {
			dd[s*S+u] = at[s]
			if start != nil {
				dd[s*S+u] += start[u]
			}
		}
	}
	srcLen, dstLen := 0, 0
	for x := range S {
		srcLen = max(srcLen, sd[mine*S+x]+m[mine*S+x])
		dstLen = max(dstLen, dd[x*S+mine]+m[x*S+mine])
	}
	want := sFill(dstLen)
	for i := range e.tm.Size() {
		k := e.slot(i)*S + mine
		for x := range m[k] {
			want[dd[k]+x] = sWord(e.tm.RankOf(i), mine, x)
		}
	}
	var sdArg, ddArg []int
	if displs {
		sdArg, ddArg = sd, dd
	}
	return func(opts []coll.Option) ([]int64, error) {
		src := sFill(srcLen)
		for u := range S {
			for x := range m[mine*S+u] {
				src[sd[mine*S+u]+x] = sWord(me, u, x)
			}
		}
		dst := sFill(dstLen)
		if merge {
			return dst, coll.ExchangeVMerge(e.ctx, e.tm, coll.Private(dst), coll.Private(src), m, sdArg, start, opts...)
		}
		return dst, coll.ExchangeV(e.ctx, e.tm, coll.Private(dst), coll.Private(src), m, sdArg, ddArg, opts...)
	}, want
}

// sTraffic is what one rank counted, in the transport (wrap.Counting) and
// in the runtime (pgas.Stats).
type sTraffic struct {
	c wrap.Counts
	s pgas.Stats
}

func sSnap(ct *wrap.Counting, r *pgas.Rank) sTraffic {
	return sTraffic{ct.Counts(r.ID()), r.Stats()}
}

// sCounted is the part of a call's traffic that does not depend on timing:
// everything but the atomics of team barriers (a member spins on the
// leader's generation word, and which member arrives last differs from
// run to run), which the world team does not use.
type sCounted struct {
	Ops                    [wrap.NumOps]int64
	Sent, Received, Msgs   []int64 // by peer; Msgs only for the world team
	NativeSent, NativeRecv int64
	Local, Remote          [pgas.NumOpKinds]int64
	LocalBytes             int64
	Barriers, Fences       int64
	StatsMsgs              []int64
}

// sDelta returns the traffic between two snapshots.
func sDelta(a, b sTraffic, world bool) sCounted {
	var d sCounted
	for k := range d.Ops {
		d.Ops[k] = b.c.Ops[k] - a.c.Ops[k]
	}
	n := len(b.c.Peers)
	d.Sent, d.Received = make([]int64, n), make([]int64, n)
	for p := range n {
		d.Sent[p] = b.c.Peers[p].BytesSent - a.c.Peers[p].BytesSent
		d.Received[p] = b.c.Peers[p].BytesReceived - a.c.Peers[p].BytesReceived
	}
	d.NativeSent, d.NativeRecv = b.c.NativeSent-a.c.NativeSent, b.c.NativeReceived-a.c.NativeReceived
	for k := range d.Local {
		d.Local[k] = b.s.Local[k] - a.s.Local[k]
		d.Remote[k] = b.s.Remote[k] - a.s.Remote[k]
	}
	d.LocalBytes = b.s.LocalBytes - a.s.LocalBytes
	d.Barriers, d.Fences = b.s.Barriers-a.s.Barriers, b.s.Fences-a.s.Fences
	if world {
		d.Msgs, d.StatsMsgs = make([]int64, n), make([]int64, n)
		for p := range n {
			d.Msgs[p] = b.c.Peers[p].Messages - a.c.Peers[p].Messages
			d.StatsMsgs[p] = b.s.Peers[p].Messages - a.s.Peers[p].Messages
		}
	} else {
		d.Ops[wrap.OpFetchAdd], d.Ops[wrap.OpCAS], d.Ops[wrap.OpLoad] = 0, 0, 0
		d.Local[pgas.OpAtomic], d.Remote[pgas.OpAtomic] = 0, 0
	}
	return d
}

// sAdd returns the sum of two deltas.
func sAdd(a, b sCounted) sCounted {
	add := func(x, y []int64) []int64 {
		if x == nil {
			return nil
		}
		z := slices.Clone(x)
		for i := range z {
			z[i] += y[i]
		}
		return z
	}
	d := a
	for k := range d.Ops {
		d.Ops[k] += b.Ops[k]
	}
	d.Sent, d.Received, d.Msgs, d.StatsMsgs = add(a.Sent, b.Sent), add(a.Received, b.Received), add(a.Msgs, b.Msgs), add(a.StatsMsgs, b.StatsMsgs)
	d.NativeSent += b.NativeSent
	d.NativeRecv += b.NativeRecv
	for k := range d.Local {
		d.Local[k] += b.Local[k]
		d.Remote[k] += b.Remote[k]
	}
	d.LocalBytes += b.LocalBytes
	d.Barriers += b.Barriers
	d.Fences += b.Fences
	return d
}

// sTeam returns the team a job's case runs on: the world, or (split) the
// team of the ranks of this rank's parity, so that two teams run at once.
func sTeam(ctx context.Context, r *pgas.Rank, split bool) (*pgas.Team, error) {
	if !split {
		return r.World(), nil
	}
	return r.Split(ctx, r.ID()%2)
}

// sSeed is the seed of a team's random source: the same on every member.
func sSeed(tm *pgas.Team, allThr bool) *rand.Rand {
	s := uint64(tm.Rank().N())<<16 | uint64(tm.Leader())<<1
	if allThr {
		s |= 1
	}
	return rand.New(rand.NewPCG(s, 0x5eed))
}

type sShape struct {
	name                  string
	split, allThr, native bool
}

var sShapes = []sShape{
	{"world", false, false, false},
	{"world-allthr", false, true, false},
	{"split", true, false, false},
	{"split-allthr", true, true, false},
	{"world-native", false, false, true},
}

// TestStructured: for every one-round collective between private buffers,
// at 1 to 9 ranks, on the world and on two concurrent sub-teams, with and
// without AllThr, and over a transport with a native all-to-all-v, random
// counts with zeros among them: the structured plan leaves every member
// the destination the oracle computes, plans every chunk as the global
// plan does (CheckPlans), and moves exactly the traffic the global plan
// moves.
func TestStructured(t *testing.T) {
	for ranks := 1; ranks <= 9; ranks++ {
		for _, sh := range sShapes {
			t.Run(fmt.Sprintf("ranks=%d/%s", ranks, sh.name), func(t *testing.T) {
				cfg := pgas.Config{Ranks: ranks, RanksPerNode: 3, SyncTimeout: time.Minute, NoCheck: ranks%4 != 3}
				sJob(t, cfg, sh, false)
			})
		}
	}
}

// TestStructuredStreaming: counts far larger than the staging area of a
// small segment: the structured collectives fall back to the global plan,
// which streams, and still agree with the oracle.
func TestStructuredStreaming(t *testing.T) {
	for _, ranks := range []int{2, 3, 5} {
		for _, sh := range sShapes[:3] {
			t.Run(fmt.Sprintf("ranks=%d/%s", ranks, sh.name), func(t *testing.T) {
				cfg := pgas.Config{Ranks: ranks, SegmentBytes: streamSegment, FragmentBytes: 4096, SyncTimeout: time.Minute}
				sJob(t, cfg, sh, true)
			})
		}
	}
}

func sJob(t *testing.T, cfg pgas.Config, sh sShape, big bool) {
	t.Helper()
	var inner transport.Transport = inproc.New()
	if sh.native {
		inner = transporttest.NewNative(inner)
	}
	ct := wrap.NewCounting(inner)
	cfg.Transport = ct
	err := pgas.Run(t.Context(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		tm, err := sTeam(ctx, r, sh.split)
		if err != nil {
			return err
		}
		e := &sEnv{ctx: ctx, tm: tm, allThr: sh.allThr, rng: sSeed(tm, sh.allThr), big: big}
		var errs []error
		for _, c := range sCases {
			run, want := c.setup(e)
			// A first call grows the staging area, so that neither
			// measured call allocates.
			if _, err := run(e.opts(coll.ForceGlobalPlan())); err != nil {
				return fmt.Errorf("%s (global, warm-up): %w", c.name, err)
			}
			var planErrs []error
			a := sSnap(ct, r)
			got, err := run(e.opts(coll.CheckPlans(func(err error) { planErrs = append(planErrs, err) })))
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			b := sSnap(ct, r)
			gotG, err := run(e.opts(coll.ForceGlobalPlan()))
			if err != nil {
				return fmt.Errorf("%s (global): %w", c.name, err)
			}
			z := sSnap(ct, r)
			if len(planErrs) > 0 {
				errs = append(errs, fmt.Errorf("%s: plans differ: %w", c.name, errors.Join(planErrs...)))
			}
			if !slices.Equal(got, want) {
				errs = append(errs, fmt.Errorf("%s: rank %d got %v; want %v", c.name, r.ID(), got, want))
			}
			if !slices.Equal(gotG, want) {
				errs = append(errs, fmt.Errorf("%s (global): rank %d got %v; want %v", c.name, r.ID(), gotG, want))
			}
			if ds, dg := sDelta(a, b, tm.IsWorld()), sDelta(b, z, tm.IsWorld()); !reflect.DeepEqual(ds, dg) {
				errs = append(errs, fmt.Errorf("%s: rank %d traffic\nstructured %+v\nglobal     %+v", c.name, r.ID(), ds, dg))
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAlltoallV: every member passes only its own row (sendCounts) and
// column (recvCounts) of a random count matrix with zeros; it gets what
// the oracle says, and moves what ExchangeV's global plan moves for the
// whole matrix plus the first round (an Exchange of three int64 per
// pair), also when the counts stream through a small staging area and
// when Segment splits the puts.
func TestAlltoallV(t *testing.T) {
	type tc struct {
		name  string
		cfg   pgas.Config
		split bool
		big   bool
		opts  []coll.Option
	}
	var cases []tc
	for ranks := 1; ranks <= 9; ranks++ {
		for _, split := range []bool{false, true} {
			cases = append(cases, tc{fmt.Sprintf("ranks=%d/split=%v", ranks, split),
				pgas.Config{Ranks: ranks, NoCheck: ranks%3 != 2}, split, false, nil})
		}
	}
	for _, ranks := range []int{2, 3, 5, 8} {
		small := pgas.Config{Ranks: ranks, SegmentBytes: streamSegment, FragmentBytes: 4096}
		cases = append(cases,
			tc{fmt.Sprintf("ranks=%d/streaming", ranks), small, false, true, nil},
			tc{fmt.Sprintf("ranks=%d/streaming/split", ranks), small, true, true, nil},
			tc{fmt.Sprintf("ranks=%d/streaming/segment=1000", ranks), small, false, true, []coll.Option{coll.Segment(1000)}},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.SyncTimeout = time.Minute
			ct := wrap.NewCounting(inproc.New())
			c.cfg.Transport = ct
			err := pgas.Run(t.Context(), c.cfg, func(ctx context.Context, r *pgas.Rank) error {
				tm, err := sTeam(ctx, r, c.split)
				if err != nil {
					return err
				}
				e := &sEnv{ctx: ctx, tm: tm, rng: sSeed(tm, false), big: c.big}
				S, me, mine := tm.Size(), r.ID(), tm.ID()
				for round := range 3 {
					m := e.counts(S * S)
					send, recv := m[mine*S:(mine+1)*S], make([]int, S)
					for i := range S {
						recv[i] = m[i*S+mine]
					}
					spre, slen := packed(send, noGap)
					rpre, rlen := packed(recv, noGap)
					src := make([]int64, slen)
					for j := range S {
						for x := range send[j] {
							src[spre[j]+x] = sWord(me, j, x)
						}
					}
					want := sFill(rlen)
					for i := range S {
						for x := range recv[i] {
							want[rpre[i]+x] = sWord(tm.RankOf(i), mine, x)
						}
					}
					alltoallv := func() ([]int64, error) {
						dst := sFill(rlen)
						return dst, coll.AlltoallV(ctx, tm, coll.Private(dst), coll.Private(src), send, recv, c.opts...)
					}
					exchangev := func() ([]int64, error) {
						dst := sFill(rlen)
						return dst, coll.ExchangeV(ctx, tm, coll.Private(dst), coll.Private(src), m, nil, nil, append(c.opts, coll.ForceGlobalPlan())...)
					}
					first := func() error { // AlltoallV's first round on its own
						w := make([]int64, 3*S)
						return coll.Exchange(ctx, tm, coll.Private(w), coll.Private(make([]int64, 3*S)), 3, c.opts...)
					}
					for _, f := range []func() error{
						func() error { _, err := alltoallv(); return err },
						func() error { _, err := exchangev(); return err },
						first,
					} { // warm-up: the staging area grows
						if err := f(); err != nil {
							return err
						}
					}
					a := sSnap(ct, r)
					got, err := alltoallv()
					if err != nil {
						return err
					}
					b := sSnap(ct, r)
					gotX, err := exchangev()
					if err != nil {
						return err
					}
					z := sSnap(ct, r)
					if err := first(); err != nil {
						return err
					}
					zz := sSnap(ct, r)
					if !slices.Equal(got, want) {
						return fmt.Errorf("round %d: AlltoallV(%v, %v) on rank %d = %v; want %v", round, send, recv, me, got, want)
					}
					if !slices.Equal(gotX, want) {
						return fmt.Errorf("round %d: ExchangeV on rank %d = %v; want %v", round, me, gotX, want)
					}
					// Fences aside: the two calls end with one each, AlltoallV's
					// first round with none.
					da, dx := sDelta(a, b, tm.IsWorld()), sAdd(sDelta(b, z, tm.IsWorld()), sDelta(z, zz, tm.IsWorld()))
					da.Fences, dx.Fences = 0, 0
					da.Ops[wrap.OpFence], dx.Ops[wrap.OpFence] = 0, 0
					if c.cfg.NoCheck && !reflect.DeepEqual(da, dx) { // Check adds a CheckSame per call
						return fmt.Errorf("round %d: rank %d traffic\nAlltoallV             %+v\nExchangeV + Exchange  %+v", round, me, da, dx)
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

// TestAlltoallVNative: on the world team of a transport with a native
// all-to-all-v, AlltoallV is one native call per member and gives what the
// library's own algorithm gives.
func TestAlltoallVNative(t *testing.T) {
	const ranks = 4
	for _, noNative := range []bool{false, true} {
		nt := transporttest.NewNative(inproc.New())
		err := pgas.Run(t.Context(), pgas.Config{Ranks: ranks, Transport: nt}, func(ctx context.Context, r *pgas.Rank) error {
			me := r.ID()
			send, recv := make([]int, ranks), make([]int, ranks)
			for j := range ranks {
				send[j] = (me + 2*j) % 3 // j receives (i + 2j) % 3 from i
				recv[j] = (j + 2*me) % 3
			}
			spre, slen := packed(send, noGap)
			rpre, rlen := packed(recv, noGap)
			src := make([]int64, slen)
			for j := range ranks {
				for x := range send[j] {
					src[spre[j]+x] = sWord(me, j, x)
				}
			}
			dst := sFill(rlen)
			var opts []coll.Option
			if noNative {
				opts = append(opts, coll.NoNative())
			}
			if err := coll.AlltoallV(ctx, r.World(), coll.Private(dst), coll.Private(src), send, recv, opts...); err != nil {
				return err
			}
			for i := range ranks {
				for x := range recv[i] {
					if v, w := dst[rpre[i]+x], sWord(i, me, x); v != w {
						return fmt.Errorf("rank %d: element %d from %d = %#x; want %#x", me, x, i, v, w)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(ranks)
		if noNative {
			want = 0
		}
		if got := nt.Calls(); got != want {
			t.Errorf("NoNative=%v: %d native calls; want %d", noNative, got, want)
		}
	}
}

// TestAlltoallVMisuse: wrong arguments panic with a message naming what
// is wrong, on the member concerned.
func TestAlltoallVMisuse(t *testing.T) {
	const S = 3
	p := func(n int) coll.Buf[int64] { return coll.Private(make([]int64, n)) }
	ones := []int{1, 1, 1}
	for _, c := range []struct {
		name string
		call func(ctx context.Context, r *pgas.Rank) error
		want []string
	}{
		{"shared", func(ctx context.Context, r *pgas.Rank) error {
			a, err := pgas.AllAllocArray[int64](ctx, r, S, 1)
			if err != nil {
				return err
			}
			return coll.AlltoallV(ctx, r.World(), coll.Shared(a, 0), p(S), ones, ones)
		}, []string{"coll: AlltoallV", "must be private"}},
		{"allthr", func(ctx context.Context, r *pgas.Rank) error {
			return coll.AlltoallV(ctx, r.World(), p(S), p(S), ones, ones, coll.AllThr())
		}, []string{"coll: AlltoallV", "AllThr"}},
		{"short-counts", func(ctx context.Context, r *pgas.Rank) error {
			return coll.AlltoallV(ctx, r.World(), p(S), p(S), []int{1, 1}, ones)
		}, []string{"coll: AlltoallV", "sendCounts has 2 entries, want 3"}},
		{"negative-count", func(ctx context.Context, r *pgas.Rank) error {
			return coll.AlltoallV(ctx, r.World(), p(S), p(S), ones, []int{1, -1, 1})
		}, []string{"coll: AlltoallV", "recvCounts[1] = -1 is negative"}},
		{"short-src", func(ctx context.Context, r *pgas.Rank) error {
			return coll.AlltoallV(ctx, r.World(), p(S), p(S-1), ones, ones)
		}, []string{"coll: AlltoallV", "private source buffer has 2 elements, its counts add up to 3"}},
		{"short-dst", func(ctx context.Context, r *pgas.Rank) error {
			return coll.AlltoallV(ctx, r.World(), p(S-1), p(S), ones, ones)
		}, []string{"coll: AlltoallV", "private destination buffer has 2 elements, its counts add up to 3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := pgas.Run(t.Context(), pgas.Config{Ranks: S, SyncTimeout: 10 * time.Second}, func(ctx context.Context, r *pgas.Rank) error {
				msg, err := misuseCatch(func() error { return c.call(ctx, r) })
				if msg == "" {
					return fmt.Errorf("rank %d: no panic; the call returned %v", r.ID(), err)
				}
				for _, w := range c.want {
					if !strings.Contains(msg, w) {
						return fmt.Errorf("rank %d: panic %q does not say %q", r.ID(), msg, w)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	// Counts the sender and receiver disagree on: the sender panics before
	// anything moves, and the job fails promptly.
	t0 := time.Now()
	err := pgas.Run(t.Context(), pgas.Config{Ranks: S, SyncTimeout: 20 * time.Second}, func(ctx context.Context, r *pgas.Rank) error {
		send := []int{1, 1, 1}
		if r.ID() == 1 {
			send[2] = 2 // rank 2 expects 1
		}
		return coll.AlltoallV(ctx, r.World(), p(S), p(4), send, ones)
	})
	if err == nil || !strings.Contains(err.Error(), "rank 1 sends 2 elements to team id 2 (sendCounts[2]), which expects 1 (its recvCounts[1])") {
		t.Errorf("mismatched counts: %v", err)
	}
	if el := time.Since(t0); el > 10*time.Second {
		t.Errorf("the job took %v to fail", el)
	}
}

// TestStructuredManyRanks: 1,024 in-process ranks, where a global plan
// (a million chunks on every rank) did not finish: an Allgather of two
// int64 and an AlltoallV of small counts, each checked against the oracle.
func TestStructuredManyRanks(t *testing.T) {
	if testing.Short() {
		t.Skip("1,024 ranks: seconds")
	}
	const ranks = 1024
	t0 := time.Now()
	cfg := pgas.Config{Ranks: ranks, SegmentBytes: 1 << 20, SyncTimeout: 5 * time.Minute}
	err := pgas.Run(t.Context(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		me, w := r.ID(), r.World()
		all := make([]int64, 2*ranks)
		if err := coll.Allgather(ctx, w, coll.Private(all), coll.Private([]int64{sVal(me, 0), sVal(me, 1)}), 2); err != nil {
			return err
		}
		for q := range ranks {
			if all[2*q] != sVal(q, 0) || all[2*q+1] != sVal(q, 1) {
				return fmt.Errorf("Allgather: rank %d has %v from rank %d", me, all[2*q:2*q+2], q)
			}
		}
		// Rank i sends (i+j)%3 elements to rank j.
		send, recv := make([]int, ranks), make([]int, ranks)
		for q := range ranks {
			send[q], recv[q] = (me+q)%3, (q+me)%3
		}
		spre, slen := packed(send, noGap)
		rpre, rlen := packed(recv, noGap)
		src := make([]int64, slen)
		for j := range ranks {
			for x := range send[j] {
				src[spre[j]+x] = sWord(me, j, x)
			}
		}
		dst := sFill(rlen)
		if err := coll.AlltoallV(ctx, w, coll.Private(dst), coll.Private(src), send, recv); err != nil {
			return err
		}
		for i := range ranks {
			for x := range recv[i] {
				if v, w := dst[rpre[i]+x], sWord(i, me, x); v != w {
					return fmt.Errorf("AlltoallV: rank %d has %#x from rank %d; want %#x", me, v, i, w)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d ranks: %v", ranks, time.Since(t0).Round(time.Millisecond))
}

// ExampleAlltoallV: each rank sends words to the ranks they hash to. It
// knows how many bytes it sends to each (its row of the count matrix),
// learns how many it receives from each (its column) with an Exchange of
// one int per pair, and moves the bytes with AlltoallV. Nobody builds the
// whole matrix.
func ExampleAlltoallV() {
	words := [][]string{{"ant", "bee", "cat"}, {"dog", "eel"}, {"fox", "gnu", "hen", "ibis"}}
	const ranks = 3
	got := make([]string, ranks)
	err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
		w := r.World()
		// Group this rank's words by destination: the first letter mod 3.
		var send []byte
		row := make([]int, ranks)
		for d := range ranks {
			for _, s := range words[r.ID()] {
				if int(s[0])%ranks == d {
					send = append(send, s+" "...)
					row[d] += len(s) + 1
				}
			}
		}
		col := make([]int, ranks)
		if err := coll.Exchange(ctx, w, coll.Private(col), coll.Private(row), 1); err != nil {
			return err
		}
		total := 0
		for _, n := range col {
			total += n
		}
		recv := make([]byte, total)
		if err := coll.AlltoallV(ctx, w, coll.Private(recv), coll.Private(send), row, col); err != nil {
			return err
		}
		got[r.ID()] = string(recv)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	for q, s := range got {
		fmt.Printf("rank %d: %s\n", q, strings.TrimSpace(s))
	}
	// Output:
	// rank 0: cat fox ibis
	// rank 1: ant dog gnu
	// rank 2: bee eel hen
}
