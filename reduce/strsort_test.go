package reduce

import (
	"fmt"
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
