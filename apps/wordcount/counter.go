package wordcount

import "hash/maphash"

// counter counts words in an open-addressing hash table whose slots hold
// the hash, the count and the word: a lookup hashes the bytes once, and
// compares bytes only on a full hash match, without allocating; only a
// new word allocates its string. It is faster here than a
// map[string]int64 (BenchmarkCounter).
type counter struct {
	seed  maphash.Seed
	slots []slot // a power of two, at most half full
	n     int
}

type slot struct {
	h     uint64 // 0: empty
	count int64
	word  string
}

func newCounter() *counter {
	return &counter{seed: maphash.MakeSeed(), slots: make([]slot, 1<<10)}
}

func (c *counter) len() int { return c.n }

// add counts one occurrence of w, which it does not retain.
func (c *counter) add(w []byte) {
	h := nonzero(maphash.Bytes(c.seed, w))
	mask := uint64(len(c.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &c.slots[i]
		if s.h == h && s.word == string(w) {
			s.count++
			return
		}
		if s.h == 0 {
			c.insert(i, h, string(w), 1)
			return
		}
	}
}

// addN adds n occurrences of w.
func (c *counter) addN(w string, n int64) {
	h := nonzero(maphash.String(c.seed, w))
	mask := uint64(len(c.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &c.slots[i]
		if s.h == h && s.word == w {
			s.count += n
			return
		}
		if s.h == 0 {
			c.insert(i, h, w, n)
			return
		}
	}
}

// nonzero maps the hash 0, which marks an empty slot, to 1.
func nonzero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

func (c *counter) insert(i uint64, h uint64, w string, n int64) {
	c.slots[i] = slot{h, n, w}
	c.n++
	if 2*c.n <= len(c.slots) {
		return
	}
	old := c.slots
	c.slots = make([]slot, 2*len(old))
	mask := uint64(len(c.slots) - 1)
	for _, s := range old {
		if s.h == 0 {
			continue
		}
		j := s.h & mask
		for c.slots[j].h != 0 {
			j = (j + 1) & mask
		}
		c.slots[j] = s
	}
}

// all yields every word and its count, in no particular order.
func (c *counter) all(yield func(string, int64) bool) {
	for _, s := range c.slots {
		if s.h != 0 && !yield(s.word, s.count) {
			return
		}
	}
}

// reset empties the counter, keeping its table.
func (c *counter) reset() {
	clear(c.slots)
	c.n = 0
}
