package shuffle

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/wrap"
	"github.com/pgasmr/pgasmr/reduce"
	"github.com/pgasmr/pgasmr/reduce/internal/pairtest"
)

// TestCollectNode: with node-level combining forced on, every gather mode
// and transfer gives what the oracle says at 2, 3, 5 and 8 ranks over
// nodes of 2, 3 and all ranks; the pairs of commutative combining stores
// all go through the node table, and what then moves is what the node
// tables hold, not what the ranks emitted (checkNodeTraffic).
func TestCollectNode(t *testing.T) {
	sc, ac := stringCases(), arrayCases()
	for _, n := range []int{2, 3, 5, 8} {
		for _, rpn := range []int{2, 3, n} {
			if rpn > n || rpn == 3 && n == 3 {
				continue
			}
			for _, g := range gatherCfgs() {
				for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
					if tr == reduce.ElementByElement && n > 3 {
						continue
					}
					o := reduce.Options{Gather: g.g, Transfer: tr, Merge: g.merge, Root: n / 2, Node: reduce.NodeOn}
					cfg := pgas.Config{Ranks: n, RanksPerNode: rpn, SegmentBytes: 1 << 20}
					t.Run(fmt.Sprintf("n=%d/per-node=%d/%v/merge=%v/%v", n, rpn, g.g, g.merge, tr), func(t *testing.T) {
						rs := runCollectCfg(t, sc, cfg, o)
						for i, c := range sc {
							t.Run(c.name, func(t *testing.T) {
								checkCollect(t, c, n, o, rs[i])
								checkNodeTraffic(t, c, n, rpn, o, rs[i], false)
							})
						}
						ra := runCollectCfg(t, ac, cfg, o)
						for i, c := range ac {
							t.Run(c.name, func(t *testing.T) {
								checkCollect(t, c, n, o, ra[i])
								checkNodeTraffic(t, c, n, rpn, o, ra[i], false)
							})
						}
					})
				}
			}
		}
	}
}

// TestCollectNodeOverflow: node tables too small for the keys (a 20 KiB
// region: the first slot array and a few hundred entries) lose nothing:
// the pairs that do not fit move as ordinary pairs and the results are
// the oracle's.
func TestCollectNodeOverflow(t *testing.T) {
	defer func(v int64) { testNodeRegion = v }(testNodeRegion)
	testNodeRegion = 20 << 10
	key := func(i int) string { return fmt.Sprintf("key-%05d-%s", i, strings.Repeat("y", i%13)) }
	cases := []collectCase[string]{
		{name: "sum", comb: reduce.Sum[int64](), key: key, nkeys: 3000, variable: true, scale: 20,
			mk: func() (*reduce.Store[string, int64], error) {
				return reduce.NewHashStore[string, int64](reduce.Sum[int64]())
			}},
		{name: "max-bytes", comb: reduce.Max[int64](), key: key, nkeys: 3000, variable: true, scale: 20,
			mk: func() (*reduce.Store[string, int64], error) {
				// variable-size values: lengths change as values combine, so
				// entries are rewritten, not updated in place.
				return reduce.NewHashStore(reduce.Max[int64](), reduce.WithValueCodec[string](varInt64()))
			}},
	}
	// In-process ranks fold through Cast; under a wrapper, which sees
	// every access, with one-sided gets and puts.
	for _, access := range []string{"cast", "one-sided"} {
		for _, n := range []int{2, 3, 5} {
			for _, g := range []reduce.Gather{reduce.GatherPartitioned, reduce.GatherAll, reduce.GatherRoot} {
				o := reduce.Options{Gather: g, Root: n - 1, Node: reduce.NodeOn}
				cfg := pgas.Config{Ranks: n, SegmentBytes: 1 << 20}
				if access == "one-sided" {
					cfg.Transport = wrap.NewCounting(inproc.New())
				}
				t.Run(fmt.Sprintf("%s/n=%d/%v", access, n, g), func(t *testing.T) {
					rs := runCollectCfg(t, cases, cfg, o)
					for i, c := range cases {
						t.Run(c.name, func(t *testing.T) {
							checkCollect(t, c, n, o, rs[i])
							checkNodeTraffic(t, c, n, n, o, rs[i], true)
						})
					}
				})
			}
		}
	}
}

// varInt64 is a variable-size int64 codec.
func varInt64() reduce.Codec[int64] {
	c, err := reduce.CodecFor[int64]()
	if err != nil {
		panic(err)
	}
	return reduce.NewCodec("var-int64", 0, func(b []byte, v int64) []byte {
		// 1 to 9 bytes: a length byte and the significant bytes.
		raw := c.Append(nil, v)
		i := 0
		for i < 7 && raw[7-i] == 0 && v >= 0 {
			i++
		}
		return append(append(b, byte(8-i)), raw[:8-i]...)
	}, func(b []byte) (int64, int, error) {
		if len(b) == 0 || int(b[0]) > 8 || len(b) < 1+int(b[0]) {
			return 0, 0, fmt.Errorf("bad length")
		}
		var raw [8]byte
		copy(raw[:], b[1:1+int(b[0])])
		v, _, err := c.Decode(raw[:])
		return v, 1 + int(b[0]), err
	})
}

// checkNodeTraffic checks the node-level combining of one case: a
// commutative combining store folds every distinct key of every rank
// into its node's table (or, with overflow allowed, leaves some out);
// other stores never use the table. Without overflow, the pairs moved are
// those the node tables hold for other ranks.
func checkNodeTraffic[K cmp.Ordered](t *testing.T, c collectCase[K], n, rpn int, o reduce.Options, res []rankResult[K], overflow bool) {
	t.Helper()
	combines := !c.comb.KeepsAll() && c.comb.Commutative() && o.Gather != reduce.GatherNone && rpn > 1
	local := make([][]kv[K], n)
	for r := range n {
		local[r] = oracleKVs(c, [][]pairtest.Emission[K, int64]{rankEmissions(c, r, n)})
	}
	var over int64
	for r, rr := range res {
		got := rr.st.NodePairs + rr.st.NodeOverflow
		switch {
		case !combines && got != 0:
			t.Errorf("rank %d: %d pairs through the node table, want none (%s, %v)", r, got, c.comb.Name(), o.Gather)
		case combines && got != int64(len(local[r])):
			t.Errorf("rank %d: %d pairs folded and %d over, want %d in all", r, rr.st.NodePairs, rr.st.NodeOverflow, len(local[r]))
		}
		over += rr.st.NodeOverflow
	}
	if overflow {
		if combines && over == 0 {
			t.Errorf("no pair overflowed the small node tables")
		}
		return
	}
	if over != 0 {
		t.Errorf("%d pairs overflowed", over)
	}
	if !combines || o.Merge {
		return
	}
	kc, err := reduce.CodecFor[K]()
	if err != nil {
		t.Fatal(err)
	}
	// holder is the rank whose partition of the node table gets k.
	holder := func(k K, node int) (holder, owner int) {
		first := node * rpn
		size := min(rpn, n-first)
		owner = int(xxhash.Sum64(kc.Append(nil, k)) % uint64(n))
		if owner >= first && owner < first+size {
			return owner, owner
		}
		return first + owner%size, owner
	}
	held := make([]int64, n)    // keys each rank's partition holds
	foreign := make([]int64, n) // of them, owned by another rank
	for node := 0; node*rpn < n; node++ {
		keys := map[K]bool{}
		for r := node * rpn; r < min(n, (node+1)*rpn); r++ {
			for _, x := range local[r] {
				keys[x.k] = true
			}
		}
		for k := range keys {
			h, ow := holder(k, node)
			held[h]++
			if ow != h {
				foreign[h]++
			}
		}
	}
	for r, rr := range res {
		var want int64
		switch o.Gather {
		case reduce.GatherPartitioned:
			want = foreign[r]
		case reduce.GatherAll:
			want = int64(n-1) * held[r]
		case reduce.GatherRoot:
			if r != o.Root {
				want = held[r]
			}
		}
		if rr.st.PairsMoved != want {
			t.Errorf("rank %d: PairsMoved %d, want %d (its partition holds %d keys, %d of them owned elsewhere)", r, rr.st.PairsMoved, want, held[r], foreign[r])
		}
	}
}

// TestNodeCombineFewerPairs: every rank counts the same 300 words. Two
// ranks on two nodes move each word once (to the other rank, if it owns
// it); 16 ranks on two nodes of 8, combining per node, move at most twice
// as many pairs, where the ranks' own tables would move 15 times as many;
// on one node nothing moves.
func TestNodeCombineFewerPairs(t *testing.T) {
	moved := func(n, rpn int, node reduce.NodeCombine) int64 {
		var total atomic.Int64
		err := pgas.Run(context.Background(), pgas.Config{Ranks: n, RanksPerNode: rpn, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
			s, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
			if err != nil {
				return err
			}
			for i := range 3000 {
				s.Emit(fmt.Sprintf("w%04d", (i*7+r.ID())%300), 1)
			}
			p, _, st, err := Collect(ctx, r, s, reduce.Options{Gather: reduce.GatherPartitioned, Node: node})
			if err != nil {
				return err
			}
			for i, k := range p.Keys {
				if v := p.Value(i); v != int64(10*n) {
					return fmt.Errorf("rank %d: %s counted %d times, want %d", r.ID(), k, v, 10*n)
				}
			}
			total.Add(st.PairsMoved)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return total.Load()
	}
	two := moved(2, 1, reduce.NodeOn)
	node := moved(16, 8, reduce.NodeOn)
	off := moved(16, 8, reduce.NodeOff)
	one := moved(16, 16, reduce.NodeOn)
	t.Logf("pairs moved: 2 ranks %d; 16 ranks on 2 nodes %d combined per node, %d not; on one node %d", two, node, off, one)
	if two < 100 {
		t.Fatalf("2 ranks moved %d pairs: the test shows nothing", two)
	}
	if node > 2*two {
		t.Errorf("16 ranks moved %d pairs combined per node, more than twice the %d of 2 ranks", node, two)
	}
	if off < 10*two {
		t.Errorf("without node combining 16 ranks moved %d pairs, not 10 times the %d of 2 ranks: the test shows nothing", off, two)
	}
	if one != 0 {
		t.Errorf("16 ranks on one node moved %d pairs, want 0 (every key's partition is its owner's)", one)
	}
}

func TestParseNodeCombine(t *testing.T) {
	for _, n := range []reduce.NodeCombine{reduce.NodeAuto, reduce.NodeOn, reduce.NodeOff} {
		got, err := reduce.ParseNodeCombine(n.String())
		if err != nil || got != n {
			t.Errorf("ParseNodeCombine(%q) = %v, %v", n.String(), got, err)
		}
	}
	if _, err := reduce.ParseNodeCombine("yes"); err == nil || !strings.Contains(err.Error(), `"yes"`) {
		t.Errorf("ParseNodeCombine(yes): %v", err)
	}
}

// TestNodeCombineContext: a cancelled job ends every rank with an error
// while the node tables are in use, and nothing hangs.
func TestNodeCombineContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := pgas.Run(ctx, pgas.Config{Ranks: 4, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
		s, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		for i := range 5000 {
			s.Emit(fmt.Sprintf("k%d", i), 1)
		}
		if r.ID() == 3 {
			cancel()
		}
		_, _, _, err = Collect(ctx, r, s, reduce.Options{Node: reduce.NodeOn})
		return err
	})
	if err == nil {
		t.Fatal("a cancelled job succeeded")
	}
}

// TestNodeCombineFaults: an operation of rank 1 failing anywhere in a
// job that folds pairs into node tables (the allocation, a lock, a probe,
// a put, the barrier) ends every rank with an error, and nothing hangs;
// a fault past the job's last operation changes nothing.
func TestNodeCombineFaults(t *testing.T) {
	job := func(f *wrap.Faulty) error {
		return pgas.Run(context.Background(), pgas.Config{Ranks: 3, SegmentBytes: 1 << 20, Transport: f, SyncTimeout: 20 * time.Second}, func(ctx context.Context, r *pgas.Rank) error {
			s, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
			if err != nil {
				return err
			}
			for i := range 400 {
				s.Emit(fmt.Sprintf("k%03d", (i*7+r.ID())%300), 1)
			}
			_, _, st, err := Collect(ctx, r, s, reduce.Options{Node: reduce.NodeOn})
			if err == nil && st.NodePairs == 0 {
				return fmt.Errorf("rank %d folded nothing", r.ID())
			}
			return err
		})
	}
	count := wrap.NewFaulty(inproc.New(), -1, -1)
	if err := job(count); err != nil {
		t.Fatal(err)
	}
	total := count.Ops(1)
	if total < 300 {
		t.Fatalf("rank 1 did %d operations: too few to sweep", total)
	}
	for op := int64(0); op < total+5; op += 1 + total/60 {
		f := wrap.NewFaulty(inproc.New(), 1, op)
		err := job(f)
		switch {
		case f.Injected() && !errors.Is(err, wrap.ErrInjected):
			t.Errorf("op %d of %d: injected, job returned %v", op, total, err)
		case !f.Injected() && err != nil:
			t.Errorf("op %d of %d: not injected, job returned %v", op, total, err)
		}
	}
}
