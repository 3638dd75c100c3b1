package reduce

import (
	"cmp"
	"encoding/binary"
	"reflect"
	"slices"
	"strings"
	"unsafe"
)

// Sorting many strings. A comparison sort of strings reads each string's
// bytes through its header, a cache miss a comparison once the strings
// outgrow the cache: sorting 4 million distinct words that way took 10 s
// of a 30 s wordcount. stringOrder sorts their 8-byte prefixes instead,
// packed big-endian beside each string's index in one contiguous slice,
// and compares whole strings only where prefixes are equal, which for
// words is almost never (BenchmarkStringOrder).

// prefixed is a string's first 8 bytes, big-endian and zero-padded, which
// order strings as their bytes do up to a tie, and its index.
type prefixed struct {
	p uint64
	i int32
}

// StringPrefix returns s's first 8 bytes as a big-endian number, zeros
// past its end: strings ordered by it, and by the strings themselves where
// it ties, are in bytewise order, and a sort of many strings compares
// numbers read from one slice instead of bytes behind headers.
func StringPrefix(s string) uint64 {
	if len(s) >= 8 {
		return binary.BigEndian.Uint64(unsafe.Slice(unsafe.StringData(s), 8))
	}
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}

// stringOrder returns the indices of keys in ascending bytewise order
// (strings.Compare's); equal keys in no particular order.
func stringOrder(keys []string) []int32 {
	items := sortPrefixed(keys)
	idx := make([]int32, len(items))
	for j, it := range items {
		idx[j] = it.i
	}
	return idx
}

// stringOrderPrefixes is stringOrder, with the keys' prefixes
// (StringPrefix) in that order: keys whose prefixes differ differ.
func stringOrderPrefixes(keys []string) ([]int32, []uint64) {
	items := sortPrefixed(keys)
	idx := make([]int32, len(items))
	pre := make([]uint64, len(items))
	for j, it := range items {
		idx[j], pre[j] = it.i, it.p
	}
	return idx, pre
}

// sortPrefixed returns keys' prefixes and indices in the keys' order.
func sortPrefixed(keys []string) []prefixed {
	items := make([]prefixed, len(keys))
	for i, k := range keys {
		items[i] = prefixed{StringPrefix(k), int32(i)}
	}
	slices.SortFunc(items, func(a, b prefixed) int {
		if a.p != b.p {
			return cmp.Compare(a.p, b.p)
		}
		// Equal prefixes: "ab" and "ab\x00" too, which only the whole
		// strings tell apart.
		return strings.Compare(keys[a.i], keys[b.i])
	})
	return items
}

// isString reports whether K is a string type, whose values sort as
// strings by cmp.Compare.
func isString[K any]() bool { return reflect.TypeFor[K]().Kind() == reflect.String }

// asStrings returns keys, of a string type (isString), as a []string: the
// same memory.
func asStrings[K any](keys []K) []string {
	return unsafe.Slice((*string)(unsafe.Pointer(unsafe.SliceData(keys))), len(keys))
}

// sortStrings sorts keys, strings, bytewise.
func sortStrings(keys []string) {
	if len(keys) < 2 {
		return
	}
	sorted := make([]string, len(keys))
	for j, i := range stringOrder(keys) {
		sorted[j] = keys[i]
	}
	copy(keys, sorted)
}
