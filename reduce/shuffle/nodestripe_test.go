package shuffle

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

// stripeContents reads a held stripe's keys and counts.
func stripeContents(t *testing.T, s *stripe) map[string]int64 {
	m := map[string]int64{}
	err := s.area.Slots(0, 1<<s.area.LogCap, func(key []byte, n int64) bool {
		m[string(key)] += n
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestStripe: a stripe counts keys as a map does, across releases and
// growths, with the empty key and keys that share a hash; once its region
// is full it takes no new key (add reports false and changes nothing) and
// still counts the keys it holds.
func TestStripe(t *testing.T) {
	for _, size := range []int{4 << 20, 64 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			s := &stripe{mem: make([]byte, size)}
			want := map[string]int64{}
			rng := rand.New(rand.NewPCG(1, 2))
			refused := 0
			for round := range 20 {
				if !s.acquire() {
					t.Fatalf("round %d: a free stripe was not taken", round)
				}
				if s.acquire() {
					t.Fatalf("round %d: a held stripe was taken again", round)
				}
				for range 2000 {
					k := fmt.Sprintf("k%d", int(20000*rng.Float64()*rng.Float64()))
					if rng.IntN(50) == 0 {
						k = ""
					}
					n := int64(1 + rng.IntN(3))
					h := stripeHash.String(k)
					if h%40 == 0 {
						h = 1 // the hash short keys may share (reduce.KeyHash): they must be compared
					}
					_, had := want[k]
					if s.area.Add([]byte(k), h, n) {
						want[k] += n
						continue
					}
					if had {
						t.Fatalf("a held key %q was refused", k)
					}
					if refused++; refused < 20 && !maps.Equal(want, stripeContents(t, s)) {
						t.Fatalf("a refused key %q changed the stripe", k)
					}
				}
				s.release()
			}
			s.acquire()
			if got := stripeContents(t, s); !maps.Equal(got, want) {
				t.Errorf("%d keys, want %d (or counts differ)", len(got), len(want))
			}
			if int(s.area.Keys) != len(stripeContents(t, s)) {
				t.Errorf("header says %d keys, %d in the slots", s.area.Keys, len(stripeContents(t, s)))
			}
			if size == 4<<20 && (refused > 0 || s.area.LogCap <= stripeLogCap) {
				t.Errorf("4 MiB stripe: %d keys refused, 2^%d slots (want room and growth)", refused, s.area.LogCap)
			}
			if size == 64<<10 && refused == 0 {
				t.Errorf("a 64 KiB stripe took every key")
			}
		})
	}
}
