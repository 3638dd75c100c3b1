package mr_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// joinKV is a pair a join's map emits.
type joinKV[K, V any] struct {
	K K
	V V
}

// joinIn is a join side's input: element i is the list of pairs its map
// emits, in order.
type joinIn[K comparable, V any] [][]joinKV[K, V]

func (in joinIn[K, V]) source(opts ...mr.MapOption) mr.Source[K, V] {
	return mr.From(mr.Slice(in), func(ctx context.Context, xs []joinKV[K, V], emit func(K, V)) error {
		for _, x := range xs {
			emit(x.K, x.V)
		}
		return nil
	}, opts...)
}

var joinKinds = []mr.JoinKind{mr.Inner, mr.LeftOuter, mr.RightOuter, mr.FullOuter}

// oracleCoGroup groups ls and rs by key with loops over the pairs, keys
// in cmpK's order.
func oracleCoGroup[K comparable, A, B any](ls joinIn[K, A], rs joinIn[K, B], cmpK func(a, b K) int) []mr.Group[K, A, B] {
	l, r := slices.Concat(ls...), slices.Concat(rs...)
	var out []mr.Group[K, A, B]
	for _, k := range oracleKeys(l, r, cmpK) {
		g := mr.Group[K, A, B]{Key: k}
		for _, p := range l {
			if p.K == k {
				g.Left = append(g.Left, p.V)
			}
		}
		for _, p := range r {
			if p.K == k {
				g.Right = append(g.Right, p.V)
			}
		}
		out = append(out, g)
	}
	return out
}

// oracleJoin joins ls and rs with nested loops, keys in cmpK's order.
func oracleJoin[K comparable, A, B any](kind mr.JoinKind, ls joinIn[K, A], rs joinIn[K, B], cmpK func(a, b K) int) []mr.Pair[K, A, B] {
	l, r := slices.Concat(ls...), slices.Concat(rs...)
	var out []mr.Pair[K, A, B]
	for _, k := range oracleKeys(l, r, cmpK) {
		hasL, hasR := false, false
		for _, a := range l {
			if a.K != k {
				continue
			}
			hasL = true
			for _, b := range r {
				if b.K == k {
					out = append(out, mr.Pair[K, A, B]{Key: k, Left: a.V, Right: b.V, HasLeft: true, HasRight: true})
				}
			}
		}
		for _, b := range r {
			hasR = hasR || b.K == k
		}
		if hasL && !hasR && (kind == mr.LeftOuter || kind == mr.FullOuter) {
			for _, a := range l {
				if a.K == k {
					out = append(out, mr.Pair[K, A, B]{Key: k, Left: a.V, HasLeft: true})
				}
			}
		}
		if hasR && !hasL && (kind == mr.RightOuter || kind == mr.FullOuter) {
			for _, b := range r {
				if b.K == k {
					out = append(out, mr.Pair[K, A, B]{Key: k, Right: b.V, HasRight: true})
				}
			}
		}
	}
	return out
}

func oracleKeys[K comparable, A, B any](l []joinKV[K, A], r []joinKV[K, B], cmpK func(a, b K) int) []K {
	var keys []K
	for _, p := range l {
		keys = append(keys, p.K)
	}
	for _, p := range r {
		keys = append(keys, p.K)
	}
	slices.SortFunc(keys, cmpK)
	return slices.CompactFunc(keys, func(a, b K) bool { return a == b })
}

// joinGather is a gather mode a join's caller passes.
type joinGather struct {
	g     reduce.Gather
	merge bool
}

func (g joinGather) String() string {
	if g.merge {
		return g.g.String() + "+merge"
	}
	return g.g.String()
}

func (g joinGather) options(root int, tr reduce.Transfer) []mr.ReduceOption {
	ro := []mr.ReduceOption{mr.Gather(g.g), mr.Root(root), mr.WithTransfer(tr)}
	if g.merge {
		ro = append(ro, mr.Merge())
	}
	return ro
}

var joinGathers = []joinGather{
	{reduce.GatherAll, false}, {reduce.GatherRoot, false}, {reduce.GatherNone, true},
	{reduce.GatherPartitioned, true}, {reduce.GatherPartitioned, false},
}

// joinRun is every rank's results of one CoGroup and one Join of each
// kind, in that order, on the same sources.
type joinRun[K comparable, A, B any] struct {
	co    []mr.Result[[]mr.Group[K, A, B]]
	joins [][]mr.Result[[]mr.Pair[K, A, B]] // [kind][rank]
}

func runJoins[K comparable, A, B any](t *testing.T, n int, mo []mr.MapOption, ro []mr.ReduceOption, ls joinIn[K, A], rs joinIn[K, B]) joinRun[K, A, B] {
	t.Helper()
	out := joinRun[K, A, B]{co: make([]mr.Result[[]mr.Group[K, A, B]], n)}
	for range joinKinds {
		out.joins = append(out.joins, make([]mr.Result[[]mr.Pair[K, A, B]], n))
	}
	var mu sync.Mutex
	err := pgas.Run(t.Context(), pgas.Config{Ranks: n, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
		left, right := ls.source(mo...), rs.source(mo...)
		co, err := mr.CoGroup(ctx, r, left, right, ro...)
		if err != nil {
			return err
		}
		mu.Lock()
		out.co[r.ID()] = co
		mu.Unlock()
		for i, kind := range joinKinds {
			j, err := mr.Join(ctx, r, kind, left, right, ro...)
			if err != nil {
				return err
			}
			mu.Lock()
			out.joins[i][r.ID()] = j
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// assembleJoin checks the ranks' results of one call under g with root and
// returns the whole result: any rank's under GatherAll, the root's under
// GatherRoot or Merge, the ranks' results ordered by key under
// GatherPartitioned, where each key must be on one rank.
func assembleJoin[T any, K comparable](t *testing.T, what string, g joinGather, root int, res []mr.Result[[]T], key func(T) K, cmpK func(a, b K) int) []T {
	t.Helper()
	for q, x := range res {
		if want := !g.merge && g.g == reduce.GatherPartitioned; x.Part != want {
			t.Fatalf("%s: rank %d's Result.Part = %v; want %v", what, q, x.Part, want)
		}
	}
	switch {
	case g.g == reduce.GatherAll:
		for q, x := range res {
			if !x.OK || !sameJoinRows(x.Value, res[0].Value) {
				t.Fatalf("%s: GatherAll: rank %d's result (OK %v) differs from rank 0's:\n%v\n%v", what, q, x.OK, x.Value, res[0].Value)
			}
		}
		return res[0].Value
	case g.g == reduce.GatherRoot || g.merge:
		for q, x := range res {
			if q != root && (x.OK || x.Value != nil) {
				t.Fatalf("%s: rank %d, not the root %d, got OK %v and %v", what, q, root, x.OK, x.Value)
			}
		}
		if !res[root].OK {
			t.Fatalf("%s: the root %d reduced nothing", what, root)
		}
		return res[root].Value
	}
	owner := map[K]int{}
	var all []T
	for q, x := range res {
		if !x.OK {
			t.Fatalf("%s: rank %d reduced nothing under %v", what, q, g)
		}
		for i, v := range x.Value {
			k := key(v)
			if o, ok := owner[k]; ok && o != q {
				t.Fatalf("%s: key %v on ranks %d and %d", what, k, o, q)
			}
			owner[k] = q
			if i > 0 && cmpK(key(x.Value[i-1]), k) > 0 {
				t.Fatalf("%s: rank %d: key %v after %v", what, q, k, key(x.Value[i-1]))
			}
		}
		all = append(all, x.Value...)
	}
	slices.SortStableFunc(all, func(a, b T) int { return cmpK(key(a), key(b)) })
	return all
}

// sameJoinRows is reflect.DeepEqual, with nil and empty results equal.
func sameJoinRows[T any](a, b []T) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// checkJoins compares a run's results with the oracles'.
func checkJoins[K comparable, A, B any](t *testing.T, got joinRun[K, A, B], g joinGather, root int, ls joinIn[K, A], rs joinIn[K, B], cmpK func(a, b K) int) {
	t.Helper()
	co := assembleJoin(t, "CoGroup", g, root, got.co, func(x mr.Group[K, A, B]) K { return x.Key }, cmpK)
	if want := oracleCoGroup(ls, rs, cmpK); !sameJoinRows(co, want) {
		t.Fatalf("CoGroup = %v; want %v", co, want)
	}
	for i, kind := range joinKinds {
		j := assembleJoin(t, "Join "+kind.String(), g, root, got.joins[i], func(x mr.Pair[K, A, B]) K { return x.Key }, cmpK)
		if want := oracleJoin(kind, ls, rs, cmpK); !sameJoinRows(j, want) {
			t.Fatalf("Join(%v) = %v; want %v", kind, j, want)
		}
	}
}

// randomJoinIn makes n elements of 0 to 2 pairs each, keys in [lo, hi).
func randomJoinIn[V any](rng *rand.Rand, n, lo, hi int, val func(i, j int) V) joinIn[int, V] {
	in := make(joinIn[int, V], n)
	for i := range in {
		for j := range rng.IntN(3) {
			in[i] = append(in[i], joinKV[int, V]{lo + rng.IntN(hi-lo), val(i, j)})
		}
	}
	return in
}

// TestJoinMatrix: CoGroup and every Join kind give the nested loops'
// result on random sides with duplicate keys on both, keys on one side
// only and elements emitting no pair or two, at 1 to 4 ranks, under every
// distribution and every gather mode.
func TestJoinMatrix(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 1))
	ls := randomJoinIn(rng, 40, 0, 25, func(i, j int) string { return fmt.Sprintf("l%d.%d", i, j) })
	rs := randomJoinIn(rng, 30, 12, 40, func(i, j int) int { return 100*i + j })
	for n := 1; n <= 4; n++ {
		for _, dist := range []distrib.Kind{distrib.Block, distrib.Cyclic, distrib.Balanced} {
			for _, g := range joinGathers {
				t.Run(fmt.Sprintf("ranks=%d/%v/%v", n, dist, g), func(t *testing.T) {
					root := n - 1
					got := runJoins(t, n, []mr.MapOption{mr.WithDistribution(dist)}, g.options(root, reduce.Collective), ls, rs)
					checkJoins(t, got, g, root, ls, rs, cmp.Compare[int])
				})
			}
		}
	}
}

// TestJoinEdgeCases: empty sides, disjoint keys, one key everywhere, and
// the element-by-element transfer.
func TestJoinEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 2))
	str := func(i, j int) string { return fmt.Sprintf("l%d.%d", i, j) }
	num := func(i, j int) int { return 100*i + j }
	some := randomJoinIn(rng, 20, 0, 8, str)
	cases := []struct {
		name string
		ls   joinIn[int, string]
		rs   joinIn[int, int]
	}{
		{"both-empty", nil, nil},
		{"left-empty", nil, randomJoinIn(rng, 20, 0, 8, num)},
		{"right-empty", some, nil},
		{"no-pairs", make(joinIn[int, string], 5), make(joinIn[int, int], 3)},
		{"disjoint", some, randomJoinIn(rng, 20, 10, 18, num)},
		{"one-key", randomJoinIn(rng, 9, 7, 8, str), randomJoinIn(rng, 7, 7, 8, num)},
	}
	for _, c := range cases {
		for _, n := range []int{1, 3} {
			for _, g := range []joinGather{{reduce.GatherAll, false}, {reduce.GatherPartitioned, false}, {reduce.GatherRoot, false}} {
				for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
					t.Run(fmt.Sprintf("%s/ranks=%d/%v/%v", c.name, n, g, tr), func(t *testing.T) {
						got := runJoins(t, n, []mr.MapOption{mr.WithDistribution(distrib.Cyclic)}, g.options(0, tr), c.ls, c.rs)
						checkJoins(t, got, g, 0, c.ls, c.rs, cmp.Compare[int])
					})
				}
			}
		}
	}
}

type joinCustID int

type joinItem struct {
	Name string
	Tags []string
}

// joinPoint has unexported fields but moves as raw memory.
type joinPoint struct{ x, y int32 }

type joinKey struct {
	Region string
	N      int
}

// joinTypes runs CoGroup and the joins of ls and rs at 1, 2 and 3 ranks,
// both transfers, against the oracles.
func joinTypes[K comparable, A, B any](t *testing.T, ls joinIn[K, A], rs joinIn[K, B], cmpK func(a, b K) int, resort bool) {
	for _, n := range []int{1, 2, 3} {
		for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
			t.Run(fmt.Sprintf("ranks=%d/%v", n, tr), func(t *testing.T) {
				g := joinGather{reduce.GatherPartitioned, true}
				got := runJoins(t, n, []mr.MapOption{mr.WithDistribution(distrib.Block)}, g.options(0, tr), ls, rs)
				if resort {
					// Keys come in their encodings' order: compare in cmpK's.
					slices.SortStableFunc(got.co[0].Value, func(a, b mr.Group[K, A, B]) int { return cmpK(a.Key, b.Key) })
					for _, j := range got.joins {
						slices.SortStableFunc(j[0].Value, func(a, b mr.Pair[K, A, B]) int { return cmpK(a.Key, b.Key) })
					}
				}
				checkJoins(t, got, g, 0, ls, rs, cmpK)
			})
		}
	}
}

// TestJoinTypes: keys and values of other types: a named integer key (in
// its natural order), string keys, struct keys (in their encodings'
// order), struct values moved by msgpack and as raw memory.
func TestJoinTypes(t *testing.T) {
	t.Run("named-int/struct/raw-struct", func(t *testing.T) {
		ls := joinIn[joinCustID, joinItem]{
			{{3, joinItem{"a", []string{"x"}}}, {-1, joinItem{"b", nil}}},
			{{300, joinItem{"c", []string{"y", "z"}}}},
			{{3, joinItem{"d", []string{}}}},
		}
		rs := joinIn[joinCustID, joinPoint]{
			{{3, joinPoint{1, 2}}}, {{-1, joinPoint{3, 4}}, {3, joinPoint{5, 6}}}, {{7, joinPoint{7, 8}}},
		}
		joinTypes(t, ls, rs, cmp.Compare[joinCustID], false)
	})
	t.Run("string/int/string", func(t *testing.T) {
		ls := joinIn[string, int]{{{"b", 1}, {"a", 2}}, {{"ä", 3}}, {{"", 4}, {"b", 5}}}
		rs := joinIn[string, string]{{{"b", "x"}}, {{"", "y"}, {"c", "z"}}, {{"b", "w"}}}
		joinTypes(t, ls, rs, strings.Compare, false)
	})
	t.Run("struct-key", func(t *testing.T) {
		ls := joinIn[joinKey, string]{{{joinKey{"eu", 10}, "a"}, {joinKey{"us", 2}, "b"}}, {{joinKey{"eu", 10}, "c"}}, {{joinKey{"asia", 1}, "d"}}}
		rs := joinIn[joinKey, float64]{{{joinKey{"eu", 10}, 1.5}}, {{joinKey{"us", 3}, 2.5}, {joinKey{"eu", 10}, 3.5}}}
		joinTypes(t, ls, rs, func(a, b joinKey) int {
			return cmp.Or(strings.Compare(a.Region, b.Region), cmp.Compare(a.N, b.N))
		}, true)
	})
}

// TestJoinErrors: what a join refuses, and a map's error, name the fault
// on every rank.
func TestJoinErrors(t *testing.T) {
	type secret struct {
		name string
		N    int
	}
	ok := joinIn[int, string]{{{1, "a"}}, {{2, "b"}}}
	cases := []struct {
		name string
		job  func(ctx context.Context, r *pgas.Rank) error
		want string
	}{
		{"gather-none", func(ctx context.Context, r *pgas.Rank) error {
			_, err := mr.CoGroup(ctx, r, ok.source(), ok.source(), mr.Gather(reduce.GatherNone))
			return err
		}, "GatherNone without Merge"},
		{"zero-source", func(ctx context.Context, r *pgas.Rank) error {
			_, err := mr.Join(ctx, r, mr.Inner, ok.source(), mr.Source[int, string]{}, mr.Gather(reduce.GatherAll))
			return err
		}, "zero Source"},
		{"kind", func(ctx context.Context, r *pgas.Rank) error {
			_, err := mr.Join(ctx, r, mr.JoinKind(7), ok.source(), ok.source(), mr.Gather(reduce.GatherAll))
			return err
		}, "JoinKind(7) is not a join kind"},
		{"codec", func(ctx context.Context, r *pgas.Rank) error {
			bad := joinIn[int, secret]{{{1, secret{"x", 1}}}}
			_, err := mr.Join(ctx, r, mr.Inner, ok.source(), bad.source(), mr.Gather(reduce.GatherAll))
			return err
		}, "right values"},
		{"map", func(ctx context.Context, r *pgas.Rank) error {
			failing := mr.From(mr.Slice([]int{1, 2, 3}), func(ctx context.Context, x int, emit func(int, string)) error {
				if x == 2 {
					return errors.New("bad row")
				}
				emit(x, "v")
				return nil
			})
			_, err := mr.Join(ctx, r, mr.LeftOuter, failing, ok.source(), mr.Gather(reduce.GatherAll))
			var me *mr.MapError
			if errors.As(err, &me) && me.Element != 1 {
				return fmt.Errorf("MapError of element %d, want 1: %w", me.Element, err)
			}
			return err
		}, "left source: mr: map of input element 1: bad row"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := pgas.Run(t.Context(), pgas.Config{Ranks: 2, SegmentBytes: 1 << 20}, c.job)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want one containing %q", err, c.want)
			}
		})
	}
	// The codec's error names the value's type and field.
	err := pgas.Run(t.Context(), pgas.Config{Ranks: 1, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
		bad := joinIn[int, secret]{{{1, secret{"x", 1}}}}
		_, err := mr.CoGroup(ctx, r, bad.source(), ok.source(), mr.Gather(reduce.GatherAll))
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "secret.name") {
		t.Fatalf("error %v; want one naming secret.name", err)
	}
}

// TestJoinFinish: a source's WithFinish, of its map's key and value
// types, emits into the join: once per rank.
func TestJoinFinish(t *testing.T) {
	for _, n := range []int{1, 3} {
		var got []mr.Pair[int, string, int]
		err := pgas.Run(t.Context(), pgas.Config{Ranks: n, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
			left := mr.From(mr.Slice([]int{1, 2}), func(ctx context.Context, x int, emit func(int, string)) error {
				emit(x, "row")
				return nil
			}, mr.WithFinish(func(ctx context.Context, emit func(int, string)) error {
				emit(0, "finish")
				return nil
			}))
			right := mr.From(mr.Slice([]int{0, 2}), func(ctx context.Context, x int, emit func(int, int)) error {
				emit(x, 10*x)
				return nil
			})
			res, err := mr.Join(ctx, r, mr.FullOuter, left, right, mr.Gather(reduce.GatherRoot))
			if res.OK {
				got = res.Value
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var want []mr.Pair[int, string, int]
		for range n {
			want = append(want, mr.Pair[int, string, int]{Key: 0, Left: "finish", Right: 0, HasLeft: true, HasRight: true})
		}
		want = append(want,
			mr.Pair[int, string, int]{Key: 1, Left: "row", HasLeft: true},
			mr.Pair[int, string, int]{Key: 2, Left: "row", Right: 20, HasLeft: true, HasRight: true})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ranks=%d: Join = %v; want %v", n, got, want)
		}
	}
}

// TestJoinLocal: sources over Local inputs, each rank passing its own
// part of each side, join as the parts concatenated in rank order would.
func TestJoinLocal(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 5))
	ls := randomJoinIn(rng, 30, 0, 15, func(i, j int) string { return fmt.Sprintf("l%d.%d", i, j) })
	rs := randomJoinIn(rng, 20, 5, 20, func(i, j int) int { return 100*i + j })
	local := func(in joinIn[int, string], n, q int) joinIn[int, string] {
		return in[q*len(in)/n : (q+1)*len(in)/n]
	}
	for _, n := range []int{1, 2, 3} {
		for _, g := range []joinGather{{reduce.GatherAll, false}, {reduce.GatherPartitioned, false}} {
			t.Run(fmt.Sprintf("ranks=%d/%v", n, g), func(t *testing.T) {
				res := make([]mr.Result[[]mr.Pair[int, string, int]], n)
				var mu sync.Mutex
				err := pgas.Run(t.Context(), pgas.Config{Ranks: n, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
					q := r.ID()
					left := mr.From(mr.Local(local(ls, n, q)), func(ctx context.Context, xs []joinKV[int, string], emit func(int, string)) error {
						for _, x := range xs {
							emit(x.K, x.V)
						}
						return nil
					})
					right := mr.From(mr.Local(rs[q*len(rs)/n:(q+1)*len(rs)/n]), func(ctx context.Context, xs []joinKV[int, int], emit func(int, int)) error {
						for _, x := range xs {
							emit(x.K, x.V)
						}
						return nil
					})
					j, err := mr.Join(ctx, r, mr.FullOuter, left, right, g.options(0, reduce.Collective)...)
					mu.Lock()
					res[q] = j
					mu.Unlock()
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				got := assembleJoin(t, "Join", g, 0, res, func(x mr.Pair[int, string, int]) int { return x.Key }, cmp.Compare[int])
				if want := oracleJoin(mr.FullOuter, ls, rs, cmp.Compare[int]); !sameJoinRows(got, want) {
					t.Fatalf("Join = %v; want %v", got, want)
				}
			})
		}
	}
}
