package shuffle

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
	"github.com/pgasmr/pgasmr/reduce/internal/pairtest"
)

// kv is one key of a reduce input with its values (one when combined).
type kv[K any] struct {
	k  K
	vs []int64
}

func fmtKVs[K any](xs []kv[K]) string {
	var b strings.Builder
	for _, x := range xs {
		fmt.Fprintf(&b, "%v=%v ", abbrev(x.k), x.vs)
	}
	return b.String()
}

func pairsKVs[K any](p *reduce.Pairs[K, int64]) []kv[K] {
	out := make([]kv[K], p.Len())
	for i := range out {
		out[i] = kv[K]{p.Keys[i], slices.Clone(p.Values(i))}
	}
	return out
}

// collectCase is one kind of store moved by Collect.
type collectCase[K cmp.Ordered] struct {
	name     string
	comb     reduce.Combiner[int64]
	mk       func() (*reduce.Store[K, int64], error)
	key      func(i int) K
	nkeys    int
	variable bool // a variable-size codec: buffers carry the index
	scale    int  // emit scale times as many elements (0: 1)
}

// rankEmissions is what rank r of n emits: a rank-dependent amount (none
// on rank 1), from elements idx = j*n + r, one to three pairs each.
func rankEmissions[K cmp.Ordered](c collectCase[K], r, n int) []pairtest.Emission[K, int64] {
	rng := rand.New(rand.NewPCG(uint64(r), uint64(n)))
	elems := []int{40, 0, 17, 29, 5}[r%5] * max(1, c.scale)
	var ems []pairtest.Emission[K, int64]
	for j := range elems {
		for p := range 1 + rng.IntN(3) {
			ems = append(ems, pairtest.Emission[K, int64]{SetTag: p == 0, Idx: int64(j*n + r), K: c.key(rng.IntN(c.nkeys)), V: rng.Int64N(1000) - 100})
		}
	}
	return ems
}

// oracleKVs computes the pairs a rank reduces from the emissions of the
// given ranks: values combined per rank in emit order, then across ranks
// in rank order; or, keeping all, every value in tag order.
func oracleKVs[K cmp.Ordered](c collectCase[K], perRank [][]pairtest.Emission[K, int64]) []kv[K] {
	if c.comb.KeepsAll() {
		var all []pairtest.Emission[K, int64]
		for _, ems := range perRank {
			all = append(all, ems...)
		}
		keys, vals := pairtest.All(all, cmp.Compare[K])
		out := make([]kv[K], len(keys))
		for i := range keys {
			out[i] = kv[K]{keys[i], vals[i]}
		}
		return out
	}
	acc := map[K]int64{}
	for _, ems := range perRank {
		keys, vals := pairtest.Combined(ems, c.comb.Combine, cmp.Compare[K])
		for i, k := range keys {
			if a, ok := acc[k]; ok {
				acc[k] = c.comb.Combine(a, vals[i])
			} else {
				acc[k] = vals[i]
			}
		}
	}
	out := make([]kv[K], 0, len(acc))
	for k, v := range acc {
		out = append(out, kv[K]{k, []int64{v}})
	}
	slices.SortFunc(out, func(a, b kv[K]) int { return cmp.Compare(a.k, b.k) })
	return out
}

func records[K any](xs []kv[K]) int64 {
	n := 0
	for _, x := range xs {
		n += len(x.vs)
	}
	return int64(n)
}

func equalKVs[K comparable](a, b []kv[K]) bool {
	return slices.EqualFunc(a, b, func(x, y kv[K]) bool { return x.k == y.k && slices.Equal(x.vs, y.vs) })
}

// rankResult is what one rank's Collect returned.
type rankResult[K any] struct {
	kvs   []kv[K]
	ok    bool
	st    reduce.Stats
	nilP  bool
	after int // store keys after Collect
}

type gatherCfg struct {
	g     reduce.Gather
	merge bool
}

func gatherCfgs() []gatherCfg {
	var out []gatherCfg
	for _, g := range []reduce.Gather{reduce.GatherAll, reduce.GatherRoot, reduce.GatherNone, reduce.GatherPartitioned} {
		for _, m := range []bool{false, true} {
			out = append(out, gatherCfg{g, m})
		}
	}
	return out
}

// runCollect runs Collect on n ranks for each store case, in one job, and
// returns every rank's results per case.
func runCollect[K cmp.Ordered](t *testing.T, cases []collectCase[K], n int, o reduce.Options) [][]rankResult[K] {
	t.Helper()
	return runCollectSeg(t, cases, n, o, 1<<20)
}

// runCollectSeg is runCollect with segments of seg bytes.
func runCollectSeg[K cmp.Ordered](t *testing.T, cases []collectCase[K], n int, o reduce.Options, seg int64) [][]rankResult[K] {
	t.Helper()
	return runCollectCfg(t, cases, pgas.Config{Ranks: n, RanksPerNode: 2, SegmentBytes: seg}, o)
}

// runCollectCfg is runCollect in a job configured by cfg.
func runCollectCfg[K cmp.Ordered](t *testing.T, cases []collectCase[K], cfg pgas.Config, o reduce.Options) [][]rankResult[K] {
	t.Helper()
	n := cfg.Ranks
	res := make([][]rankResult[K], len(cases))
	for i := range res {
		res[i] = make([]rankResult[K], n)
	}
	err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		for ci, c := range cases {
			s, err := c.mk()
			if err != nil {
				return err
			}
			pairtest.Play(s, rankEmissions(c, r.ID(), n))
			p, ok, st, err := Collect(ctx, r, s, o)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			rr := rankResult[K]{ok: ok, st: st, nilP: p == nil, after: s.Keys()}
			if p != nil {
				rr.kvs = pairsKVs(p)
			}
			res[ci][r.ID()] = rr // each rank writes its own element
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkCollect checks one case's results on n ranks against the oracle.
func checkCollect[K cmp.Ordered](t *testing.T, c collectCase[K], n int, o reduce.Options, res []rankResult[K]) {
	t.Helper()
	perRank := make([][]pairtest.Emission[K, int64], n)
	local := make([][]kv[K], n)
	for r := range n {
		perRank[r] = rankEmissions(c, r, n)
		local[r] = oracleKVs(c, perRank[r:r+1])
	}
	merged := oracleKVs(c, perRank)
	kc, err := reduce.CodecFor[K]()
	if err != nil {
		t.Fatal(err)
	}
	dest := func(k K) int { return int(xxhash.Sum64(kc.Append(nil, k)) % uint64(n)) }
	rootOnly := o.Gather == reduce.GatherRoot || o.Merge && (o.Gather == reduce.GatherNone || o.Gather == reduce.GatherPartitioned)

	var union []kv[K]
	for r, rr := range res {
		if rr.after != 0 {
			t.Errorf("rank %d: store holds %d keys after Collect", r, rr.after)
		}
		if rr.st.PairsEmitted != int64(len(perRank[r])) {
			t.Errorf("rank %d: PairsEmitted %d, want %d", r, rr.st.PairsEmitted, len(perRank[r]))
		}
		if rootOnly && r != o.Root {
			if rr.ok || !rr.nilP {
				t.Errorf("rank %d (not the root %d): ok=%v, pairs %v", r, o.Root, rr.ok, fmtKVs(rr.kvs))
			}
			continue
		}
		if !rr.ok || rr.nilP {
			t.Fatalf("rank %d: ok=%v nil pairs=%v", r, rr.ok, rr.nilP)
		}
		var want []kv[K]
		switch {
		case rootOnly || o.Gather == reduce.GatherAll:
			want = merged
		case o.Gather == reduce.GatherNone:
			want = local[r]
		case o.Gather == reduce.GatherPartitioned:
			if !slices.IsSortedFunc(rr.kvs, func(a, b kv[K]) int { return cmp.Compare(a.k, b.k) }) {
				t.Errorf("rank %d: keys not ascending", r)
			}
			for _, x := range rr.kvs {
				if d := dest(x.k); d != r {
					t.Errorf("rank %d got key %v, which hashes to rank %d", r, abbrev(x.k), d)
				}
			}
			union = append(union, rr.kvs...)
			continue
		}
		if !equalKVs(rr.kvs, want) {
			t.Errorf("rank %d:\n got  %s\n want %s", r, fmtKVs(rr.kvs), fmtKVs(want))
		}
	}
	if o.Gather == reduce.GatherPartitioned && !o.Merge {
		slices.SortStableFunc(union, func(a, b kv[K]) int { return cmp.Compare(a.k, b.k) })
		for i := 1; i < len(union); i++ {
			if union[i].k == union[i-1].k {
				t.Errorf("key %v on more than one rank", abbrev(union[i].k))
			}
		}
		if !equalKVs(union, merged) {
			t.Errorf("union of the partitions:\n got  %s\n want %s", fmtKVs(union), fmtKVs(merged))
		}
	}

	if o.Node != reduce.NodeOff {
		return // TestCollectNode checks the traffic
	}
	// Traffic: pairs each rank sends to others, and bytes sent = received.
	var sent, recv int64
	for r, rr := range res {
		var want int64
		mine := records(local[r])
		switch o.Gather {
		case reduce.GatherAll:
			want = int64(n-1) * mine
		case reduce.GatherRoot:
			if r != o.Root {
				want = mine
			}
		case reduce.GatherPartitioned:
			var reduced []kv[K]
			for _, x := range local[r] {
				if dest(x.k) != r {
					want += int64(len(x.vs))
				}
			}
			for _, x := range merged {
				if dest(x.k) == r {
					reduced = append(reduced, x)
				}
			}
			if o.Merge && r != o.Root {
				want += records(reduced)
			}
		case reduce.GatherNone:
			if o.Merge && r != o.Root {
				want = mine
			}
		}
		if rr.st.PairsMoved != want {
			t.Errorf("rank %d: PairsMoved %d, want %d", r, rr.st.PairsMoved, want)
		}
		// Fixed-size codecs send nothing for no pairs; variable-size ones
		// at least the record count.
		if want > 0 && rr.st.BytesSent == 0 || want == 0 && !c.variable && rr.st.BytesSent != 0 {
			t.Errorf("rank %d: moved %d pairs in %d bytes", r, want, rr.st.BytesSent)
		}
		if n == 1 || o.Gather == reduce.GatherNone && !o.Merge {
			if rr.st.BytesSent != 0 || rr.st.BytesReceived != 0 {
				t.Errorf("rank %d: %d bytes sent, %d received with nothing to move", r, rr.st.BytesSent, rr.st.BytesReceived)
			}
		}
		sent += rr.st.BytesSent
		recv += rr.st.BytesReceived
	}
	if sent != recv && !(o.Transfer == reduce.ElementByElement && c.variable) {
		// reduce.ElementByElement with variable codecs: TestCollectElementwiseBytes.
		t.Errorf("ranks sent %d bytes in all and received %d", sent, recv)
	}
}

func stringCases() []collectCase[string] {
	long := strings.Repeat("long-key-", 40) // str16
	key := func(i int) string {
		switch i {
		case 0:
			return ""
		case 1:
			return long
		case 2:
			return "λόγος"
		}
		return fmt.Sprintf("w%02d", i)
	}
	first := reduce.Func("first", func(a, _ int64) int64 { return a }, false)
	return []collectCase[string]{
		{name: "sum", comb: reduce.Sum[int64](), key: key, nkeys: 23, variable: true,
			mk: func() (*reduce.Store[string, int64], error) {
				return reduce.NewHashStore[string, int64](reduce.Sum[int64]())
			}},
		{name: "first", comb: first, key: key, nkeys: 23, variable: true,
			mk: func() (*reduce.Store[string, int64], error) { return reduce.NewHashStore[string, int64](first) }},
		{name: "all", comb: reduce.KeepAll[int64](), key: key, nkeys: 11, variable: true,
			mk: func() (*reduce.Store[string, int64], error) {
				return reduce.NewHashStore[string, int64](reduce.KeepAll[int64]())
			}},
	}
}

func arrayCases() []collectCase[uint16] {
	key := func(i int) uint16 { return uint16(i * 3) }
	return []collectCase[uint16]{
		{name: "array-sum", comb: reduce.Sum[int64](), key: key, nkeys: 30,
			mk: func() (*reduce.Store[uint16, int64], error) {
				return reduce.NewArrayStore[uint16, int64](90, reduce.Sum[int64]())
			}},
		{name: "array-all", comb: reduce.KeepAll[int64](), key: key, nkeys: 30,
			mk: func() (*reduce.Store[uint16, int64], error) {
				return reduce.NewArrayStore[uint16, int64](90, reduce.KeepAll[int64]())
			}},
	}
}

// TestCollect: every gather mode, transfer mode and Merge on 1, 2, 3 and 5
// ranks, for string and integer keys, combined and kept values, against an
// oracle.
func TestCollect(t *testing.T) {
	sc, ac := stringCases(), arrayCases()
	for _, n := range []int{1, 2, 3, 5} {
		for _, g := range gatherCfgs() {
			for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
				o := reduce.Options{Gather: g.g, Transfer: tr, Merge: g.merge, Root: n / 2, Node: reduce.NodeOff}
				t.Run(fmt.Sprintf("n=%d/%v/merge=%v/%v", n, g.g, g.merge, tr), func(t *testing.T) {
					rs := runCollect(t, sc, n, o)
					for i, c := range sc {
						t.Run(c.name, func(t *testing.T) { checkCollect(t, c, n, o, rs[i]) })
					}
					ra := runCollect(t, ac, n, o)
					for i, c := range ac {
						t.Run(c.name, func(t *testing.T) { checkCollect(t, c, n, o, ra[i]) })
					}
				})
			}
		}
	}
}

// TestCollectStreams: pairs far larger than the segments (128 KiB here;
// the staging area and receive window get an eighth of that per half)
// move in rounds, in every gather and transfer mode, and every rank gets
// what the oracle says.
func TestCollectStreams(t *testing.T) {
	key := func(i int) string { return fmt.Sprintf("key-%06d-%s", i, strings.Repeat("x", i%40)) }
	cases := []collectCase[string]{
		{name: "sum", comb: reduce.Sum[int64](), key: key, nkeys: 40000, variable: true, scale: 150,
			mk: func() (*reduce.Store[string, int64], error) {
				return reduce.NewHashStore[string, int64](reduce.Sum[int64]())
			}},
		{name: "all", comb: reduce.KeepAll[int64](), key: key, nkeys: 40000, variable: true, scale: 60,
			mk: func() (*reduce.Store[string, int64], error) {
				return reduce.NewHashStore[string, int64](reduce.KeepAll[int64]())
			}},
	}
	ikey := func(i int) uint16 { return uint16(i) }
	icases := []collectCase[uint16]{
		{name: "array-all", comb: reduce.KeepAll[int64](), key: ikey, nkeys: 60000, scale: 150,
			mk: func() (*reduce.Store[uint16, int64], error) {
				return reduce.NewArrayStore[uint16, int64](60000, reduce.KeepAll[int64]())
			}},
	}
	for _, n := range []int{1, 2, 3} {
		for _, g := range []reduce.Gather{reduce.GatherAll, reduce.GatherRoot, reduce.GatherNone, reduce.GatherPartitioned} {
			for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
				o := reduce.Options{Gather: g, Transfer: tr, Root: n / 2, Node: reduce.NodeOff}
				t.Run(fmt.Sprintf("n=%d/%v/%v", n, g, tr), func(t *testing.T) {
					rs := runCollectSeg(t, cases, n, o, 128<<10)
					for i, c := range cases {
						t.Run(c.name, func(t *testing.T) { checkCollect(t, c, n, o, rs[i]) })
					}
					ri := runCollectSeg(t, icases, n, o, 128<<10)
					for i, c := range icases {
						t.Run(c.name, func(t *testing.T) { checkCollect(t, c, n, o, ri[i]) })
					}
				})
			}
		}
	}
}

// TestCollectElementwiseBytes: with a variable-size codec, element-by-
// element transfers count the index the buffers carry in BytesSent
// (count() sees the indexed buffer) but the index is stripped before the
// puts and BytesReceived counts the bodies only, so the ranks' sent and
// received totals disagree.
func TestCollectElementwiseBytes(t *testing.T) {
	sc := stringCases()[:1]
	for _, g := range []reduce.Gather{reduce.GatherAll, reduce.GatherRoot, reduce.GatherPartitioned} {
		o := reduce.Options{Gather: g, Transfer: reduce.ElementByElement}
		rs := runCollect(t, sc, 3, o)
		var sent, recv int64
		for _, rr := range rs[0] {
			sent += rr.st.BytesSent
			recv += rr.st.BytesReceived
		}
		if sent != recv {
			t.Errorf("%v: ranks sent %d bytes in all and received %d", g, sent, recv)
		}
	}
}

func TestCollectBadRoot(t *testing.T) {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 2, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
		s, _ := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		defer func() {
			if recover() == nil {
				t.Errorf("rank %d: Collect with root 2 of 2 did not panic", r.ID())
			}
		}()
		Collect(ctx, r, s, reduce.Options{Gather: reduce.GatherRoot, Root: 2})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// encodeFor builds a store of the case, fills it as rank r of n and
// encodes its sorted run as a collective transfer would.
func encodeFor[K cmp.Ordered](t *testing.T, c collectCase[K], r, n int) (*xfer[K, int64], buf) {
	x, _, b := encodeRun(t, c, r, n)
	return x, b
}

// encodeRun is encodeFor that also returns the run it encoded.
func encodeRun[K cmp.Ordered](t *testing.T, c collectCase[K], r, n int) (*xfer[K, int64], reduce.Run[K, int64], buf) {
	t.Helper()
	s, err := c.mk()
	if err != nil {
		t.Fatal(err)
	}
	pairtest.Play(s, rankEmissions(c, r, n))
	x := newXfer(nil, s, &reduce.Stats{}, reduce.Collective)
	e := s.Drain()
	return x, e, x.encode(e)
}

// decodeSafely runs decode, turning a panic into a test failure.
func decodeSafely[K cmp.Ordered](t *testing.T, x *xfer[K, int64], b []byte, src int, indexed bool) (e reduce.Run[K, int64], err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("decode of a %d-byte buffer panicked: %v", len(b), p)
		}
	}()
	return x.decode(b, src, indexed)
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not say %q", err, p)
		}
	}
}

// TestDecodeRoundTrip: decode inverts encode for every case, indexed and
// (with the index stripped, as element transfers send) not.
func TestDecodeRoundTrip(t *testing.T) {
	for _, c := range stringCases() {
		t.Run(c.name, func(t *testing.T) { decodeRoundTrip(t, c) })
	}
	for _, c := range arrayCases() {
		t.Run(c.name, func(t *testing.T) { decodeRoundTrip(t, c) })
	}
}

func decodeRoundTrip[K cmp.Ordered](t *testing.T, c collectCase[K]) {
	x, want, b := encodeRun(t, c, 0, 3)
	if b.n != int(records(oracleKVs(c, [][]pairtest.Emission[K, int64]{rankEmissions(c, 0, 3)}))) {
		t.Fatalf("buffer counts %d records", b.n)
	}
	same := func(e reduce.Run[K, int64]) bool {
		return slices.Equal(e.Keys, want.Keys) && slices.Equal(e.Vals, want.Vals) && slices.Equal(e.Tags, want.Tags) && slices.Equal(e.Off, want.Off)
	}
	e, err := decodeSafely(t, x, b.b, 0, true)
	if err != nil || !same(e) {
		t.Fatalf("indexed round trip: %v", err)
	}
	body := b.b
	if x.variable() {
		body = body[:len(body)-8*(b.n+1)]
	}
	if e, err := decodeSafely(t, x, body, 0, false); err != nil || !same(e) {
		t.Fatalf("unindexed round trip: %v", err)
	}
	if bs := x.boundaries(body); len(bs) != b.n+1 || bs[len(bs)-1] != len(body) {
		t.Fatalf("boundaries %v of %d records in %d bytes", bs, b.n, len(body))
	}
	// An empty run.
	x.s.Reset()
	eb := x.encode(x.s.Drain())
	if e, err := decodeSafely(t, x, eb.b, 0, true); err != nil || len(e.Keys) != 0 {
		t.Fatalf("empty buffer: %v, %d keys", err, len(e.Keys))
	}
}

// TestDecodeCorrupt: truncated and corrupted buffers give errors naming the
// source rank, never panics.
func TestDecodeCorrupt(t *testing.T) {
	const src = 4
	srcName := fmt.Sprintf("from rank %d", src)
	sc := stringCases()
	xs, bs := encodeFor(t, sc[0], 0, 3) // string -> int64 sum: indexed
	xa, ba := encodeFor(t, sc[2], 0, 3) // string -> int64 all: indexed, tags
	ac := arrayCases()
	xr, br := encodeFor(t, ac[0], 0, 3) // uint16 -> int64: raw, no index
	xra, bra := encodeFor(t, ac[1], 0, 3)
	if bs.n < 3 || ba.n < 3 || br.n < 3 || bra.n < 3 {
		t.Fatalf("too few records: %d %d %d %d", bs.n, ba.n, br.n, bra.n)
	}
	clone := func(b []byte) []byte { return slices.Clone(b) }
	idxStart := func(b buf) int { return len(b.b) - 8*(b.n+1) }

	t.Run("no record count", func(t *testing.T) {
		_, err := decodeSafely(t, xs, []byte{1, 2, 3}, src, true)
		wantErr(t, err, "no record count", srcName)
	})
	t.Run("count too large", func(t *testing.T) {
		b := clone(bs.b)
		binary.LittleEndian.PutUint64(b[len(b)-8:], uint64(len(b)))
		_, err := decodeSafely(t, xs, b, src, true)
		wantErr(t, err, "claims", srcName)
	})
	t.Run("index mismatch", func(t *testing.T) {
		b := clone(bs.b)
		i := idxStart(bs) + 8*2 // record 2's offset
		binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])+1)
		_, err := decodeSafely(t, xs, b, src, true)
		wantErr(t, err, "record 2 "+srcName, "index says")
	})
	t.Run("truncated key", func(t *testing.T) {
		// Unindexed body cut inside record 1's key.
		body := bs.b[:idxStart(bs)]
		bounds := xs.boundaries(body) // record 1's key is not "" (the least key)
		_, err := decodeSafely(t, xs, body[:bounds[1]+1], src, false)
		wantErr(t, err, "key of record 1 "+srcName)
	})
	t.Run("truncated value", func(t *testing.T) {
		body := br.b
		_, err := decodeSafely(t, xr, body[:len(body)-3], src, false)
		wantErr(t, err, fmt.Sprintf("value of record %d %s", br.n-1, srcName), "raw record")
	})
	t.Run("truncated raw key", func(t *testing.T) {
		_, err := decodeSafely(t, xr, br.b[:10+1], src, false) // 10-byte records
		wantErr(t, err, "key of record 1 "+srcName)
	})
	t.Run("tags cut short", func(t *testing.T) {
		_, err := decodeSafely(t, xra, bra.b[:len(bra.b)-5], src, false)
		wantErr(t, err, fmt.Sprintf("record %d %s is cut short", bra.n-1, srcName))
		body := ba.b[:idxStart(ba)]
		_, err = decodeSafely(t, xa, body[:len(body)-1], src, false)
		wantErr(t, err, "cut short", srcName)
	})
	t.Run("indexed body cut", func(t *testing.T) {
		// Drop the last record's final byte but keep a consistent count:
		// the index still points past the body.
		b := clone(ba.b)
		start := idxStart(ba)
		b = append(b[:start-1], b[start:]...)
		_, err := decodeSafely(t, xa, b, src, true)
		if err == nil {
			t.Fatal("decode of a shortened indexed buffer succeeded")
		}
		if !strings.Contains(err.Error(), srcName) {
			t.Fatalf("error %q does not name rank %d", err, src)
		}
	})
	t.Run("bad msgpack key", func(t *testing.T) {
		body := clone(bs.b[:idxStart(bs)])
		bounds := xs.boundaries(body)
		body[bounds[1]] = 0xc1 // never-used code where record 1's key starts
		_, err := decodeSafely(t, xs, body, src, false)
		wantErr(t, err, "key of record 1 "+srcName, "msgpack-string")
	})
}

// TestDecodeCorruptCountPanics: a record count smaller than the records the
// body holds, or so large that 8*(n+1) overflows, makes decode index past
// the offsets and panic instead of returning an error.
func TestDecodeCorruptCountPanics(t *testing.T) {
	x, b := encodeFor(t, stringCases()[0], 0, 3)
	for _, n := range []uint64{0, uint64(b.n - 1), 1 << 61, 1<<63 - 1, 1<<62 + 1<<61} {
		c := slices.Clone(b.b)
		binary.LittleEndian.PutUint64(c[len(c)-8:], n)
		_, err := decodeSafely(t, x, c, 2, true)
		wantErr(t, err, "from rank 2")
	}
}

// TestDecodeIndexCountUnchecked: an index that lists more records than
// the body holds is accepted: decode stops at the end of the body without
// comparing the records it read with the count.
func TestDecodeIndexCountUnchecked(t *testing.T) {
	x, b := encodeFor(t, stringCases()[0], 0, 3)
	start := len(b.b) - 8*(b.n+1)
	var c []byte
	c = append(c, b.b[:start]...)
	c = append(c, b.b[start:len(b.b)-8]...)
	c = binary.LittleEndian.AppendUint64(c, uint64(start)) // a phantom record's offset
	c = binary.LittleEndian.AppendUint64(c, uint64(b.n+1))
	_, err := decodeSafely(t, x, c, 1, true)
	wantErr(t, err, "from rank 1")
}

func abbrev(v any) string {
	s := fmt.Sprintf("%v", v)
	if len(s) > 60 {
		return fmt.Sprintf("%.60s...(%d chars)", s, len(s))
	}
	return s
}

// TestCollectSpillError: a store whose spilled run cannot be read back
// fails Collect with the store's error instead of moving what is left.
func TestCollectSpillError(t *testing.T) {
	sp := &reduce.Spill{Dir: t.TempDir()}
	defer sp.Close()
	err := pgas.Run(t.Context(), pgas.Config{Ranks: 1}, func(ctx context.Context, r *pgas.Rank) error {
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		st.SetSpill(sp, 256)
		emit := st.Emitter()
		for i := range 2000 {
			emit(fmt.Sprint("k", i), 1)
		}
		if files, _ := st.Spilled(); files == 0 {
			return fmt.Errorf("nothing spilled")
		}
		names, _ := filepath.Glob(filepath.Join(sp.Path(), "*"))
		for _, n := range names {
			if err := os.Truncate(n, 10); err != nil {
				return err
			}
		}
		_, _, _, err = Collect(ctx, r, st, reduce.Options{Gather: reduce.GatherRoot})
		if !errors.Is(err, reduce.ErrCorruptSpill) {
			return fmt.Errorf("Collect after a truncated spill file: %v, want ErrCorruptSpill", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
