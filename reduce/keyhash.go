package reduce

import (
	"encoding/binary"
	"hash/maphash"
	"unsafe"
)

// A KeyHash hashes keys as a CountTable and a CountArea do: what a
// HashedCountSink's users compute to count a key that no table looked up
// (NewKeyHash of the sink's Seed). Its hashes are never 0, which marks an
// empty slot.
//
// A key of at most 8 bytes (most words) is read as one little-endian
// word, zero-padded, and mixed with a bijective function of the seed, so
// that two such keys of the same length have the same hash only if they
// are equal or their hash is 1 (0 is mapped to 1): a table that finds a
// slot of the same hash and length, other than 1, has found the key
// without comparing its bytes. Longer keys are hashed with hash/maphash.
type KeyHash struct {
	seed maphash.Seed
	k    uint64 // the short keys' seed, drawn from seed
}

// NewKeyHash returns the KeyHash of seed: equal seeds hash alike.
func NewKeyHash(seed maphash.Seed) KeyHash {
	return KeyHash{seed: seed, k: maphash.String(seed, "pgasmr/reduce.KeyHash")}
}

// Seed returns the KeyHash's seed.
func (k KeyHash) Seed() maphash.Seed { return k.seed }

// Bytes returns key's hash.
func (k KeyHash) Bytes(key []byte) uint64 {
	if len(key) <= 8 {
		return k.short(key)
	}
	return nonzero(maphash.Bytes(k.seed, key))
}

// String returns key's hash, the hash of its bytes.
func (k KeyHash) String(key string) uint64 {
	return k.Bytes(unsafe.Slice(unsafe.StringData(key), len(key)))
}

// short hashes a key of at most 8 bytes. It reads the key as one word:
// from its own bytes where its capacity allows (a word of a text buffer),
// or from a copy.
func (k KeyHash) short(key []byte) uint64 {
	var v uint64
	if cap(key) >= 8 {
		v = binary.LittleEndian.Uint64(key[:8]) & (^uint64(0) >> (64 - 8*uint(len(key))))
	} else {
		var b [8]byte
		copy(b[:], key)
		v = binary.LittleEndian.Uint64(b[:])
	}
	return nonzero(mix(v ^ k.k))
}

// mix is a bijection of the 64-bit words whose low bits (a table's index)
// depend on every bit of its argument.
func mix(x uint64) uint64 {
	x *= 0x9e3779b97f4a7c15
	x ^= x >> 32
	x *= 0xd6e8feb86659fd93
	x ^= x >> 29
	return x
}

// hashIsKey reports whether a key of length l with hash h is told apart
// from every other key of its length by h alone (KeyHash): a slot of the
// same hash and length then holds it, with no byte comparison.
func hashIsKey(h uint64, l int) bool { return l <= 8 && h > 1 }
