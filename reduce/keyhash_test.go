package reduce

import (
	"encoding/binary"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"testing"
)

// unmix inverts mix.
func unmix(x uint64) uint64 {
	x ^= x>>29 ^ x>>58
	x *= inverse(0xd6e8feb86659fd93)
	x ^= x >> 32
	x *= inverse(0x9e3779b97f4a7c15)
	return x
}

// inverse returns the multiplicative inverse of odd a modulo 2^64
// (Newton's iteration).
func inverse(a uint64) uint64 {
	x := a
	for range 6 {
		x *= 2 - a*x
	}
	return x
}

// TestKeyHash: a short key hashes the same read from its own bytes, from
// a longer buffer or as a string; mix is a bijection; different short
// keys of one length never share a hash other than 1.
func TestKeyHash(t *testing.T) {
	k := NewKeyHash(maphash.MakeSeed())
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[[2]uint64]string{} // by hash and length
	for range 100_000 {
		buf := make([]byte, 24)
		for i := range buf {
			buf[i] = byte(rng.IntN(4)) // few values: keys repeat
		}
		l := rng.IntN(12)
		key := buf[:l]                     // capacity past the key: read as a word
		own := append([]byte(nil), key...) // capacity = length: copied
		h := k.Bytes(key)
		if h == 0 || h != k.Bytes(own) || h != k.String(string(key)) || h != k.Bytes(append(own[:l:l], 9)[:l]) {
			t.Fatalf("key %q: hashes differ (%x %x %x)", key, h, k.Bytes(own), k.String(string(key)))
		}
		if l <= 8 && h > 1 {
			hl := [2]uint64{h, uint64(l)}
			if other, ok := seen[hl]; ok && other != string(key) {
				t.Fatalf("short keys %q and %q share hash %x", other, key, h)
			}
			seen[hl] = string(key)
		}
	}
	for range 1000 {
		x := rng.Uint64()
		if unmix(mix(x)) != x {
			t.Fatalf("mix is not a bijection at %x", x)
		}
	}
}

// TestCountTableHashOne counts two short keys of one length that both
// hash to 1 (one mixes to 0, one to 1), which only a byte comparison
// tells apart, in Add, AddN and AddAll, and in a CountArea.
func TestCountTableHashOne(t *testing.T) {
	a := []byte("abcdefgh")
	seedWord := binary.LittleEndian.Uint64(a) // a ^ seedWord = 0: mixes to 0
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seedWord^unmix(1)) // mixes to 1
	kh := NewKeyHash(maphash.MakeSeed())
	kh.k = seedWord
	if kh.Bytes(a) != 1 || kh.Bytes(b[:]) != 1 {
		t.Fatalf("set-up: hashes %x %x, want 1 and 1", kh.Bytes(a), kh.Bytes(b[:]))
	}
	c := NewCountTable()
	c.kh = kh
	c.Add(a)
	c.Add(b[:])
	c.AddN(string(a), 2)
	c.AddAll([][]byte{b[:], a, []byte("x"), b[:]})
	want := map[string]int64{string(a): 4, string(b[:]): 3, "x": 1}
	if got := maps.Collect(c.All()); !maps.Equal(got, want) {
		t.Errorf("table: %v, want %v", got, want)
	}

	var area CountArea
	area.Reset(make([]byte, 1<<16), 0, 4)
	if err := area.Open(); err != nil {
		t.Fatal(err)
	}
	for _, w := range [][]byte{a, b[:], a} {
		if !area.Add(w, kh.Bytes(w), 1) {
			t.Fatalf("area refused %q", w)
		}
	}
	got := map[string]int64{}
	if err := area.Slots(0, 1<<area.LogCap, func(key []byte, n int64) bool {
		got[string(key)] += n
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{string(a): 2, string(b[:]): 1}; !maps.Equal(got, want) {
		t.Errorf("area: %v, want %v", got, want)
	}
}
