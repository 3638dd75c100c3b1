package reduce

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestStringOrder checks stringOrder against a sort of the strings
// themselves: prefixes that tie ("ab", "ab\x00", words of 8 bytes and
// more sharing 8), empty strings, repeats, non-ASCII bytes.
func TestStringOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alpha := []string{"a", "b", "\x00", "\xff", "é", "ab", "abcdefgh"}
	for trial := range 200 {
		n := rng.IntN(300)
		keys := make([]string, n)
		for i := range keys {
			var b strings.Builder
			for range rng.IntN(6) {
				b.WriteString(alpha[rng.IntN(len(alpha))])
			}
			keys[i] = b.String()
		}
		want := slices.Clone(keys)
		slices.Sort(want)
		idx := stringOrder(keys)
		got := make([]string, len(idx))
		for j, i := range idx {
			got[j] = keys[i]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: stringOrder gives\n%q\nwant\n%q", trial, got, want)
		}
		// Every index once.
		seen := make([]bool, n)
		for _, i := range idx {
			if seen[i] {
				t.Fatalf("trial %d: index %d twice", trial, i)
			}
			seen[i] = true
		}
		sortStrings(keys)
		if !slices.Equal(keys, want) {
			t.Fatalf("trial %d: sortStrings gives %q", trial, keys)
		}
	}
}

// BenchmarkStringOrder: a million random words sorted by prefix
// (stringOrder) against a sort of the strings.
func BenchmarkStringOrder(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	keys := make([]string, 1<<20)
	for i := range keys {
		w := make([]byte, 6+rng.IntN(7))
		for j := range w {
			w[j] = byte('a' + rng.IntN(26))
		}
		keys[i] = string(w)
	}
	for _, how := range []string{"prefix", "strings"} {
		b.Run(fmt.Sprintf("%s/%d", how, len(keys)), func(b *testing.B) {
			for b.Loop() {
				if how == "prefix" {
					stringOrder(keys)
				} else {
					slices.Sort(slices.Clone(keys))
				}
			}
		})
	}
}

// TestSortCombinedStrings: SortCombined of string keys in any order, each
// possibly several times, sums each key's values, keys ascending, also
// where prefixes tie (tieKey) and equal prefixes hide different keys.
func TestSortCombinedStrings(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, key := range []func(int) string{strKey, tieKey} {
		s, err := NewHashStore[string, int64](Sum[int64]())
		if err != nil {
			t.Fatal(err)
		}
		var e Run[string, int64]
		want := map[string]int64{}
		for range 5000 {
			k := key(rng.IntN(700))
			v := rng.Int64N(100)
			e.Keys = append(e.Keys, k)
			e.Vals = append(e.Vals, v)
			want[k] += v
		}
		got := s.SortCombined(e)
		keys := slices.Sorted(maps.Keys(want))
		if !slices.Equal(got.Keys, keys) {
			t.Fatalf("keys %q, want %q", got.Keys, keys)
		}
		for i, k := range keys {
			if got.Vals[i] != want[k] {
				t.Fatalf("key %q: %d, want %d", k, got.Vals[i], want[k])
			}
		}
	}
}
