package reduce

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/reduce/internal/pairtest"
)

type emission[K, V any] = pairtest.Emission[K, V]

// isDense reports whether s is an array store on the int64 Sum fast path.
func isDense[K Integer, V any](s *Store[K, V]) bool {
	_, ok := s.c.(*arraySum[K, V])
	return ok
}

// checkCombined compares a combined store's sorted run with the oracle.
func checkCombined[K comparable, V any](t *testing.T, s *Store[K, V], ems []emission[K, V], eq func(a, b V) bool) {
	t.Helper()
	wk, wv := pairtest.Combined(ems, s.comb.f, s.cmp)
	if got := s.Keys(); got != len(wk) {
		t.Errorf("Keys() = %d, want %d", got, len(wk))
	}
	e := s.c.sorted()
	if e.Off != nil || e.Tags != nil {
		t.Fatalf("combined run has offsets or tags")
	}
	if len(e.Keys) != len(wk) || len(e.Vals) != len(wk) {
		t.Fatalf("sorted run has %d keys, %d values; want %d", len(e.Keys), len(e.Vals), len(wk))
	}
	for i := range wk {
		if e.Keys[i] != wk[i] || !eq(e.Vals[i], wv[i]) {
			t.Fatalf("pair %d: got (%v, %v), want (%v, %v)", i, e.Keys[i], e.Vals[i], wk[i], wv[i])
		}
	}
	p := e.Pairs()
	if p.Len() != len(wk) || p.Off != nil {
		t.Fatalf("pairs: len %d off %v", p.Len(), p.Off)
	}
	for i := range wk {
		if !eq(p.Value(i), wv[i]) || len(p.Values(i)) != 1 || !eq(p.Values(i)[0], wv[i]) {
			t.Fatalf("pairs value %d: %v / %v, want %v", i, p.Value(i), p.Values(i), wv[i])
		}
	}
}

// checkAll compares a KeepAll store's sorted run with the oracle.
func checkAll[K comparable, V comparable](t *testing.T, s *Store[K, V], ems []emission[K, V]) {
	t.Helper()
	wk, wv := pairtest.All(ems, s.cmp)
	if got := s.Keys(); got != len(wk) {
		t.Errorf("Keys() = %d, want %d", got, len(wk))
	}
	e := s.c.sorted()
	if len(e.Keys) != len(wk) || len(e.Off) != len(wk)+1 || e.Off[0] != 0 || len(e.Tags) != len(e.Vals) {
		t.Fatalf("sorted run: %d keys, %d offsets, %d values, %d tags; want %d keys", len(e.Keys), len(e.Off), len(e.Vals), len(e.Tags), len(wk))
	}
	p := e.Pairs()
	for i := range wk {
		if e.Keys[i] != wk[i] {
			t.Fatalf("key %d: %v, want %v", i, e.Keys[i], wk[i])
		}
		if got := p.Values(i); !slices.Equal(got, wv[i]) {
			t.Fatalf("key %v: values %v, want %v", wk[i], got, wv[i])
		}
		for j := e.Off[i] + 1; j < e.Off[i+1]; j++ {
			if CompareTags(e.Tags[j-1], e.Tags[j]) > 0 {
				t.Fatalf("key %v: tags out of order: %v", wk[i], e.Tags[e.Off[i]:e.Off[i+1]])
			}
		}
	}
	func() {
		defer func() {
			if recover() == nil && len(wk) > 0 {
				t.Error("Pairs.Value did not panic on all-values pairs")
			}
		}()
		if len(wk) > 0 {
			p.Value(0)
		}
	}()
}

func eqExact[V comparable](a, b V) bool { return a == b }

// randomEmissions makes n emissions over nkeys keys with tags changing
// every few emissions, in a non-monotonic order of distinct indices.
func randomEmissions[K comparable, V any](rng *rand.Rand, n, nkeys int, key func(int) K, val func(*rand.Rand) V) []emission[K, V] {
	var ems []emission[K, V]
	idx := rng.Perm(n + 1)
	next := 0
	for i := range n {
		e := emission[K, V]{K: key(rng.IntN(nkeys)), V: val(rng)}
		if i == 0 || rng.IntN(4) == 0 {
			e.SetTag, e.Idx = true, int64(idx[next])
			next++
		}
		ems = append(ems, e)
	}
	return ems
}

func strKey(i int) string { return fmt.Sprintf("k%03d-%s", i, strings.Repeat("é", i%4)) }

func TestHashStoreCombiners(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ems := randomEmissions(rng, 3000, 150, strKey, func(r *rand.Rand) int64 { return r.Int64N(2000) - 1000 })
	for _, tc := range []struct {
		comb Combiner[int64]
		name string
		comm bool
	}{
		{Sum[int64](), "sum", true},
		{Min[int64](), "min", true},
		{Max[int64](), "max", true},
		{Func("first", func(a, _ int64) int64 { return a }, false), "first", false},
		{Func("last", func(_, b int64) int64 { return b }, false), "last", false},
		{Func("weird", func(a, b int64) int64 { return 3*a - b }, false), "weird", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewHashStore[string, int64](tc.comb)
			if err != nil {
				t.Fatal(err)
			}
			if s.Combiner().Name() != tc.name || s.Combiner().Commutative() != tc.comm || s.Combiner().KeepsAll() {
				t.Fatalf("combiner %q comm=%v all=%v", s.Combiner().Name(), s.Combiner().Commutative(), s.Combiner().KeepsAll())
			}
			pairtest.Play(s, ems)
			if s.Emitted() != int64(len(ems)) {
				t.Fatalf("Emitted() = %d, want %d", s.Emitted(), len(ems))
			}
			if s.Err() != nil {
				t.Fatal(s.Err())
			}
			checkCombined(t, s, ems, eqExact[int64])
		})
	}
}

func TestCombinerProperties(t *testing.T) {
	if !Sum[int32]().Commutative() || !Sum[uint8]().Commutative() {
		t.Error("integer Sum not commutative")
	}
	if Sum[float64]().Commutative() || Sum[float32]().Commutative() {
		t.Error("float Sum reported commutative")
	}
	if KeepAll[int]().Name() != "all" || !KeepAll[int]().KeepsAll() {
		t.Error("KeepAll name or KeepsAll")
	}
	if got := Max[string]().Combine("b", "a"); got != "b" {
		t.Errorf("Max combine %q", got)
	}
	if got := Min[float64]().Combine(2, -1); got != -1 {
		t.Errorf("Min combine %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("Func with a nil function did not panic")
		}
	}()
	Func[int]("nil", nil, true)
}

func TestHashStoreOtherTypes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	t.Run("float64 sum", func(t *testing.T) {
		ems := randomEmissions(rng, 500, 40, func(i int) int32 { return int32(i*7919 - 100000) }, func(r *rand.Rand) float64 { return r.Float64()*10 - 5 })
		s, err := NewHashStore[int32, float64](Sum[float64]())
		if err != nil {
			t.Fatal(err)
		}
		pairtest.Play(s, ems)
		// The same emit order gives the same float sums bit for bit.
		checkCombined(t, s, ems, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
	})
	t.Run("string max", func(t *testing.T) {
		ems := randomEmissions(rng, 500, 40, func(i int) uint64 { return uint64(i) << 40 }, func(r *rand.Rand) string { return fmt.Sprint(r.IntN(1000)) })
		s, err := NewHashStore[uint64, string](Max[string]())
		if err != nil {
			t.Fatal(err)
		}
		pairtest.Play(s, ems)
		checkCombined(t, s, ems, eqExact[string])
	})
	t.Run("concat func", func(t *testing.T) {
		ems := randomEmissions(rng, 300, 10, strKey, func(r *rand.Rand) string { return string(rune('a' + r.IntN(26))) })
		s, err := NewHashStore[string, string](Func("concat", func(a, b string) string { return a + b }, false))
		if err != nil {
			t.Fatal(err)
		}
		pairtest.Play(s, ems)
		checkCombined(t, s, ems, eqExact[string])
	})
	t.Run("custom order", func(t *testing.T) {
		type pt struct{ X, Y int16 }
		desc := func(a, b pt) int { return cmp.Or(cmp.Compare(b.X, a.X), cmp.Compare(b.Y, a.Y)) }
		ems := randomEmissions(rng, 400, 30, func(i int) pt { return pt{int16(i % 5), int16(i / 5)} }, func(r *rand.Rand) int64 { return r.Int64N(10) })
		s, err := NewHashStoreFunc[pt, int64](desc, Sum[int64]())
		if err != nil {
			t.Fatal(err)
		}
		pairtest.Play(s, ems)
		e := s.c.sorted()
		if !slices.IsSortedFunc(e.Keys, desc) || len(e.Keys) < 2 || e.Keys[0].X != 4 {
			t.Fatalf("keys not in the custom order: %v", e.Keys)
		}
		checkCombined(t, s, ems, eqExact[int64])
		s2, _ := NewHashStoreFunc[pt, int64](desc, KeepAll[int64]())
		pairtest.Play(s2, ems)
		checkAll(t, s2, ems)
	})
}

func TestHashStoreKeepAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ems := randomEmissions(rng, 2000, 60, strKey, func(r *rand.Rand) int64 { return r.Int64() })
	s, err := NewHashStore[string, int64](KeepAll[int64]())
	if err != nil {
		t.Fatal(err)
	}
	pairtest.Play(s, ems)
	if s.Emitted() != int64(len(ems)) {
		t.Fatalf("Emitted() = %d", s.Emitted())
	}
	checkAll(t, s, ems)
}

// TestSetTagOrder: kept values come in (tag index, emit order), whatever
// the order the tags were set in.
func TestSetTagOrder(t *testing.T) {
	for _, array := range []bool{false, true} {
		var s *Store[uint8, string]
		var err error
		if array {
			s, err = NewArrayStore[uint8, string](4, KeepAll[string]())
		} else {
			s, err = NewHashStore[uint8, string](KeepAll[string]())
		}
		if err != nil {
			t.Fatal(err)
		}
		s.SetTag(7)
		s.Emit(1, "7.0")
		s.Emit(2, "7.1")
		s.Emit(1, "7.2")
		s.SetTag(-3)
		s.Emit(1, "-3.0")
		s.SetTag(2)
		s.Emit(2, "2.0")
		s.Emit(1, "2.1")
		s.Emit(1, "2.2")
		s.SetTag(1 << 40)
		s.Emit(1, "big.0")
		s.SetTag(0)
		s.Emit(3, "0.0")
		e := s.c.sorted()
		p := e.Pairs()
		got := fmt.Sprint(p.Keys, p.Values(0), p.Values(1), p.Values(2))
		want := "[1 2 3] [-3.0 2.1 2.2 7.0 7.2 big.0] [2.0 7.1] [0.0]"
		if got != want {
			t.Errorf("array=%v: got %s, want %s", array, got, want)
		}
		wantTags := []Tag{{0, -3, 3}, {0, 2, 5}, {0, 2, 6}, {0, 7, 0}, {0, 7, 2}, {0, 1 << 40, 7}, {0, 2, 4}, {0, 7, 1}, {0, 0, 8}}
		if !slices.Equal(e.Tags, wantTags) {
			t.Errorf("array=%v: tags %v, want %v", array, e.Tags, wantTags)
		}
	}
}

// arrayCase tests array stores of keys K in [0, size) with every kind of
// value and combiner; bad are out-of-range keys of K.
func arrayCase[K Integer](t *testing.T, size int, bad []K) {
	rng := rand.New(rand.NewPCG(uint64(size), 7))
	key := func(i int) K { return K(i) }
	n := 4 * size

	t.Run("int64 sum (fast path)", func(t *testing.T) {
		s, err := NewArrayStore[K, int64](size, Sum[int64]())
		if err != nil {
			t.Fatal(err)
		}
		if !isDense(s) {
			t.Fatal("int64 Sum array store is not on the fast path")
		}
		ems := randomEmissions(rng, n, size, key, func(r *rand.Rand) int64 { return r.Int64N(1<<40) - 1<<39 })
		pairtest.Play(s, ems)
		checkCombined(t, s, ems, eqExact[int64])
		checkBad(t, s, bad, size, func() { checkCombined(t, s, ems, eqExact[int64]) })
	})
	t.Run("float64 sum", func(t *testing.T) {
		s, err := NewArrayStore[K, float64](size, Sum[float64]())
		if err != nil {
			t.Fatal(err)
		}
		if isDense(s) {
			t.Fatal("float64 store on the int64 fast path")
		}
		ems := randomEmissions(rng, n, size, key, func(r *rand.Rand) float64 { return r.NormFloat64() })
		pairtest.Play(s, ems)
		checkCombined(t, s, ems, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
		checkBad(t, s, bad, size, nil)
	})
	t.Run("int32 sum", func(t *testing.T) {
		s, err := NewArrayStore[K, int32](size, Sum[int32]())
		if err != nil {
			t.Fatal(err)
		}
		ems := randomEmissions(rng, n, size, key, func(r *rand.Rand) int32 { return r.Int32() }) // wraps: same as the oracle
		pairtest.Play(s, ems)
		checkCombined(t, s, ems, eqExact[int32])
		checkBad(t, s, bad, size, func() { checkCombined(t, s, ems, eqExact[int32]) })
	})
	t.Run("int64 min", func(t *testing.T) {
		s, err := NewArrayStore[K, int64](size, Min[int64]())
		if err != nil {
			t.Fatal(err)
		}
		if isDense(s) {
			t.Fatal("Min store on the Sum fast path")
		}
		ems := randomEmissions(rng, n/2, size, key, func(r *rand.Rand) int64 { return r.Int64() })
		pairtest.Play(s, ems)
		checkCombined(t, s, ems, eqExact[int64])
		checkBad(t, s, bad, size, nil)
	})
	t.Run("keep all", func(t *testing.T) {
		s, err := NewArrayStore[K, int64](size, KeepAll[int64]())
		if err != nil {
			t.Fatal(err)
		}
		ems := randomEmissions(rng, n, size, key, func(r *rand.Rand) int64 { return r.Int64() })
		pairtest.Play(s, ems)
		checkAll(t, s, ems)
		checkBad(t, s, bad, size, func() { checkAll(t, s, ems) })
	})
	t.Run("reset", func(t *testing.T) {
		s, err := NewArrayStore[K, int64](size, Sum[int64]())
		if err != nil {
			t.Fatal(err)
		}
		pairtest.Play(s, randomEmissions(rng, n, size, key, func(r *rand.Rand) int64 { return 5 }))
		if len(bad) > 0 {
			s.Emit(bad[0], 1)
		}
		s.Reset()
		if s.Keys() != 0 || s.Emitted() != 0 || s.Err() != nil || len(s.c.sorted().Keys) != 0 {
			t.Fatalf("after Reset: keys %d emitted %d err %v", s.Keys(), s.Emitted(), s.Err())
		}
		ems := randomEmissions(rng, n, size, key, func(r *rand.Rand) int64 { return r.Int64N(9) })
		pairtest.Play(s, ems)
		checkCombined(t, s, ems, eqExact[int64])
	})
}

// checkBad emits every out-of-range key into s (between in-range ones) and
// checks that the first is reported with the key and the range, that none
// is held, and (through again, if not nil) that the held pairs are
// unchanged.
func checkBad[K comparable, V any](t *testing.T, s *Store[K, V], bad []K, size int, again func()) {
	t.Helper()
	if len(bad) == 0 {
		return
	}
	keys, emitted := s.Keys(), s.Emitted()
	var zero V
	for _, k := range bad {
		s.Emit(k, zero)
	}
	err := s.Err()
	if err == nil {
		t.Fatalf("no error after emitting out-of-range key %v", bad[0])
	}
	if want := fmt.Sprintf("key %v outside the array container's keys [0,%d)", bad[0], size); !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
	if s.Keys() != keys {
		t.Fatalf("out-of-range keys were held: Keys() %d -> %d", keys, s.Keys())
	}
	// Emitted counts every Emit call, the rejected ones included.
	if s.Emitted() != emitted+int64(len(bad)) {
		t.Fatalf("Emitted() %d -> %d after %d rejected emits", emitted, s.Emitted(), len(bad))
	}
	for _, k := range s.c.sorted().Keys {
		if slices.Contains(bad, k) {
			t.Fatalf("out-of-range key %v in the sorted run", k)
		}
	}
	if again != nil {
		// sorted does not drain; the combined values must be as before
		// (zero values of rejected keys were not folded in anywhere).
		again()
	}
}

func TestArrayStoreKeyTypes(t *testing.T) {
	t.Run("int8", func(t *testing.T) { arrayCase[int8](t, 100, []int8{-1, 100, 127, math.MinInt8}) })
	t.Run("int8 full", func(t *testing.T) { arrayCase[int8](t, 128, []int8{-1, -128}) })
	t.Run("uint8", func(t *testing.T) { arrayCase[uint8](t, 200, []uint8{200, 255}) })
	t.Run("uint8 full", func(t *testing.T) { arrayCase[uint8](t, 256, nil) })
	t.Run("int16", func(t *testing.T) { arrayCase[int16](t, 1000, []int16{-1, 1000, math.MaxInt16, math.MinInt16}) })
	t.Run("uint16", func(t *testing.T) { arrayCase[uint16](t, 768, []uint16{768, math.MaxUint16}) })
	t.Run("int32", func(t *testing.T) { arrayCase[int32](t, 300, []int32{-1, 300, math.MaxInt32, math.MinInt32}) })
	t.Run("uint32", func(t *testing.T) { arrayCase[uint32](t, 300, []uint32{300, math.MaxUint32}) })
	t.Run("int", func(t *testing.T) { arrayCase[int](t, 50, []int{-1, 50, 1 << 40, math.MinInt}) })
	t.Run("uint64", func(t *testing.T) {
		arrayCase[uint64](t, 64, []uint64{64, 1 << 32, 1<<32 + 1, 1 << 63, math.MaxUint64})
	})
	type color uint16
	t.Run("named", func(t *testing.T) { arrayCase[color](t, 3, []color{3, 256}) })
	t.Run("empty", func(t *testing.T) {
		s, err := NewArrayStore[int16, int64](0, Sum[int64]())
		if err != nil {
			t.Fatal(err)
		}
		s.Emit(0, 1)
		if s.Err() == nil || !strings.Contains(s.Err().Error(), "key 0 outside") || s.Keys() != 0 {
			t.Fatalf("size-0 store: err %v keys %d", s.Err(), s.Keys())
		}
		sa, _ := NewArrayStore[int16, int64](0, KeepAll[int64]())
		sa.Emit(-1, 1)
		if sa.Err() == nil || sa.Keys() != 0 || len(sa.c.sorted().Keys) != 0 {
			t.Fatalf("size-0 KeepAll store: err %v keys %d", sa.Err(), sa.Keys())
		}
	})
	t.Run("negative size", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("NewArrayStore(-1) did not panic")
			}
		}()
		NewArrayStore[int, int64](-1, Sum[int64]())
	})
}

// TestArrayStoreFirstErrorKept: Err keeps the first out-of-range key.
func TestArrayStoreFirstErrorKept(t *testing.T) {
	s, _ := NewArrayStore[int32, int64](10, Sum[int64]())
	s.Emit(3, 1)
	s.Emit(-5, 1)
	s.Emit(10, 1)
	s.Emit(3, 1)
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "key -5 ") {
		t.Fatalf("Err() = %v, want the first bad key -5", err)
	}
	if e := s.c.sorted(); fmt.Sprint(e.Keys, e.Vals) != "[3] [2]" {
		t.Fatalf("held %v %v", e.Keys, e.Vals)
	}
}

// TestHashStoreReset: Reset empties a hash store of either kind, keeping
// its combiner, and restarts the tags.
func TestHashStoreReset(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, comb := range []Combiner[int64]{Sum[int64](), KeepAll[int64]()} {
		s, err := NewHashStore[string, int64](comb)
		if err != nil {
			t.Fatal(err)
		}
		pairtest.Play(s, randomEmissions(rng, 300, 30, strKey, func(r *rand.Rand) int64 { return r.Int64N(100) }))
		s.Reset()
		if s.Keys() != 0 || s.Emitted() != 0 || s.Err() != nil || len(s.c.sorted().Keys) != 0 {
			t.Fatalf("%s after Reset: keys %d emitted %d", comb.Name(), s.Keys(), s.Emitted())
		}
		if s.Combiner().Name() != comb.Name() {
			t.Fatalf("Reset changed the combiner to %q", s.Combiner().Name())
		}
		// No SetTag after Reset: values are tagged (0, seq).
		ems := randomEmissions(rng, 300, 30, strKey, func(r *rand.Rand) int64 { return r.Int64N(100) })
		ems[0].SetTag = false
		pairtest.Play(s, ems)
		if comb.KeepsAll() {
			ems[0].SetTag, ems[0].Idx = true, 0
			checkAll(t, s, ems)
		} else {
			checkCombined(t, s, ems, eqExact[int64])
		}
	}
}

// TestArrayFastPathIgnoresFuncNamedSum: the int64 array fast path is
// chosen by the combiner's name, so a Func the user happens to call "sum"
// is replaced by addition.
func TestArrayFastPathIgnoresFuncNamedSum(t *testing.T) {
	s, err := NewArrayStore[uint8, int64](4, Func("sum", func(a, b int64) int64 { return max(a, b) }, true))
	if err != nil {
		t.Fatal(err)
	}
	s.Emit(1, 5)
	s.Emit(1, 7)
	if e := s.c.sorted(); e.Vals[0] != 7 {
		t.Fatalf("Func(\"sum\", max) of 5 and 7 gave %d", e.Vals[0])
	}
}

// TestMergeOracle: Merge of k drained stores equals the oracle over all
// their emissions in run order, for a combiner that is associative but
// not commutative (string concatenation: any reordering across or within
// runs shows) and for KeepAll, at every k from 0 to 64.
func TestMergeOracle(t *testing.T) {
	for _, key := range []func(int) string{strKey, tieKey} {
		mergeOracle(t, key)
	}
}

// tieKey makes keys whose 8-byte prefixes tie (the merge of string keys
// compares prefixes first): long keys sharing 8 bytes, and short ones
// that differ only by trailing zero bytes.
func tieKey(i int) string {
	switch i % 3 {
	case 0:
		return "sameprefix" + strconv.Itoa(i)
	case 1:
		return "ab" + strings.Repeat("\x00", i/3%4) + strconv.Itoa(i)
	}
	return "s" + strconv.Itoa(i)
}

func mergeOracle(t *testing.T, key func(int) string) {
	concat := Func("concat", func(a, b string) string { return a + b }, false)
	for _, k := range []int{0, 1, 2, 3, 5, 8, 64} {
		rng := rand.New(rand.NewPCG(uint64(k), 11))
		var runs, allRuns []Run[string, string]
		var ems, allEms []emission[string, string]
		var s, sa *Store[string, string]
		for r := range k {
			var err error
			if s, err = NewHashStore[string, string](concat); err != nil {
				t.Fatal(err)
			}
			if sa, err = NewHashStore[string, string](KeepAll[string]()); err != nil {
				t.Fatal(err)
			}
			n := rng.IntN(300)
			if r == 1 {
				n = 0 // an empty run among the others
			}
			mine := randomEmissions(rng, n, 1+rng.IntN(90), key, func(r *rand.Rand) string { return fmt.Sprint(r.IntN(10)) })
			tagged := slices.Clone(mine)
			for i := range tagged { // disjoint, increasing input indices per run
				tagged[i].Idx += int64(r) << 20
			}
			pairtest.Play(s, mine)
			pairtest.Play(sa, tagged)
			ems = append(ems, mine...)
			allEms = append(allEms, tagged...)
			runs = append(runs, s.Drain())
			allRuns = append(allRuns, sa.Drain())
		}
		if s == nil {
			s, _ = NewHashStore[string, string](concat)
			sa, _ = NewHashStore[string, string](KeepAll[string]())
		}
		got := s.Merge(runs)
		wk, wv := pairtest.Combined(ems, func(a, b string) string { return a + b }, strings.Compare)
		if !slices.Equal(got.Keys, wk) || !slices.Equal(got.Vals, wv) || got.Off != nil {
			t.Fatalf("k=%d: combined merge differs from the oracle:\n got %v %v\nwant %v %v", k, got.Keys, got.Vals, wk, wv)
		}
		gotAll := sa.Merge(allRuns)
		ak, av := pairtest.All(allEms, strings.Compare)
		if !slices.Equal(gotAll.Keys, ak) || len(gotAll.Off) != len(ak)+1 || len(gotAll.Tags) != len(gotAll.Vals) {
			t.Fatalf("k=%d: keep-all merge has keys %v (offsets %d, tags %d), want %v", k, gotAll.Keys, len(gotAll.Off), len(gotAll.Tags), ak)
		}
		p := gotAll.Pairs()
		for i := range ak {
			if !slices.Equal(p.Values(i), av[i]) {
				t.Fatalf("k=%d: key %q: values %v, want %v", k, ak[i], p.Values(i), av[i])
			}
		}
	}
}

// BenchmarkMerge merges the runs of k ranks that each emitted 50,000
// words of a 50,000-word vocabulary (about 31,600 distinct each:
// wordcount's shape at -np k, where every rank sees most of the words).
func BenchmarkMerge(b *testing.B) {
	for _, k := range []int{2, 64} {
		b.Run(fmt.Sprintf("runs=%d", k), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			var s *Store[string, int64]
			runs := make([]Run[string, int64], k)
			pairs := 0
			for r := range runs {
				s, _ = NewHashStore[string, int64](Sum[int64]())
				for range 50000 {
					s.Emit(fmt.Sprintf("w%05d", rng.IntN(50000)), 1)
				}
				runs[r] = s.Drain()
				pairs += len(runs[r].Keys)
			}
			b.ReportMetric(float64(pairs), "pairs")
			for b.Loop() {
				s.Merge(runs)
			}
		})
	}
}

// TestAddRun: pairs added as combined runs drain as if emitted one by one
// after the pairs emitted individually, run after run: the oracle folds
// every emission in that order, with a non-commutative combiner so that a
// change of order shows.
func TestAddRun(t *testing.T) {
	concat := Func("concat", func(a, b string) string { return a + b }, false)
	rng := rand.New(rand.NewPCG(5, 5))
	val := func(r *rand.Rand) string { return fmt.Sprint(r.IntN(10)) }
	for _, nruns := range []int{0, 1, 2, 5} {
		for _, direct := range []int{0, 150} {
			s, err := NewHashStore[string, string](concat)
			if err != nil {
				t.Fatal(err)
			}
			all := randomEmissions(rng, direct, 40, strKey, val)
			pairtest.Play(s, all)
			var added int64
			for range nruns {
				ems := randomEmissions(rng, rng.IntN(120), 60, strKey, val)
				r, _ := NewHashStore[string, string](concat)
				pairtest.Play(r, ems)
				run := r.Drain()
				added += int64(len(run.Keys))
				if err := s.AddRun(run); err != nil {
					t.Fatal(err)
				}
				all = append(all, ems...)
			}
			if got, want := s.Emitted(), int64(direct)+added; got != want {
				t.Errorf("runs=%d direct=%d: Emitted() = %d, want %d", nruns, direct, got, want)
			}
			got := s.Drain()
			wk, wv := pairtest.Combined(all, func(a, b string) string { return a + b }, strings.Compare)
			if !slices.Equal(got.Keys, wk) || !slices.Equal(got.Vals, wv) {
				t.Fatalf("runs=%d direct=%d: drained\n%v %v\nwant\n%v %v", nruns, direct, got.Keys, got.Vals, wk, wv)
			}
			if s.Keys() != 0 || s.Emitted() != 0 {
				t.Errorf("after Drain: %d keys, %d emitted", s.Keys(), s.Emitted())
			}
		}
	}
	s, _ := NewHashStore[string, int64](Sum[int64]())
	for _, bad := range []Run[string, int64]{
		{Keys: []string{"b", "a"}, Vals: []int64{1, 2}},
		{Keys: []string{"a", "a"}, Vals: []int64{1, 2}},
		{Keys: []string{"a"}, Vals: []int64{1, 2}},
		{Keys: []string{"a"}, Vals: []int64{1}, Off: []int{0, 1}},
	} {
		if err := s.AddRun(bad); err == nil {
			t.Errorf("AddRun(%v) = nil, want an error", bad)
		}
	}
	ka, _ := NewHashStore[string, int64](KeepAll[int64]())
	if err := ka.AddRun(Run[string, int64]{Keys: []string{"a"}, Vals: []int64{1}}); err == nil {
		t.Error("AddRun on a KeepAll store = nil, want an error")
	}
}

// TestEncodedHashStoreOrder: an encoded-key store sorts by the keys'
// encodings (each encoded once), combining equal keys, in Drain and in
// SortCombined of a run with repeated keys, for combining and KeepAll
// stores alike.
func TestEncodedHashStoreOrder(t *testing.T) {
	type pair struct {
		A string
		B int
	}
	rng := rand.New(rand.NewPCG(9, 10))
	keys := make([]pair, 3000)
	for i := range keys {
		keys[i] = pair{fmt.Sprint("k", rng.IntN(40)), rng.IntN(50) - 25}
	}
	kc, err := CodecFor[pair]()
	if err != nil {
		t.Fatal(err)
	}
	enc := func(k pair) string { return string(kc.Append(nil, k)) }
	want := map[pair]int64{}
	for _, k := range keys {
		want[k]++
	}
	order := slices.Collect(maps.Keys(want))
	slices.SortFunc(order, func(a, b pair) int { return strings.Compare(enc(a), enc(b)) })

	st, err := NewEncodedHashStore[pair, int64](Sum[int64]())
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]int64, len(keys))
	for i := range vals {
		vals[i] = 1
	}
	sorted := st.SortCombined(Run[pair, int64]{Keys: keys, Vals: vals})
	for _, k := range keys[:1000] {
		st.Emit(k, 1)
	}
	if err := st.AddPairs(slices.Clone(keys[1000:]), slices.Clone(vals[1000:])); err != nil {
		t.Fatal(err)
	}
	drained := st.Drain()
	for name, e := range map[string]Run[pair, int64]{"SortCombined": sorted, "Drain": drained} {
		if !slices.Equal(e.Keys, order) {
			t.Errorf("%s: %d keys not in encoded order (want %d)", name, len(e.Keys), len(order))
			continue
		}
		for i, k := range e.Keys {
			if e.Vals[i] != want[k] {
				t.Errorf("%s: key %v counted %d, want %d", name, k, e.Vals[i], want[k])
			}
		}
	}
	all, err := NewEncodedHashStore[pair, int64](KeepAll[int64]())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		all.Emit(k, 1)
	}
	if e := all.Drain(); !slices.Equal(e.Keys, order) {
		t.Errorf("KeepAll Drain: keys not in encoded order")
	}
}
