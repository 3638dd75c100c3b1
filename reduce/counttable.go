package reduce

import (
	"hash/maphash"
	"iter"
	"math"
	"strings"
	"unsafe"
)

// CountTable is a combining table of string keys and int64 sums, fed byte
// slices: the table a map keeps over its rank's input before it emits one
// pair per distinct key (wordcount's words, a per-task table of the
// MapReduce-MPI baseline). It is an open-addressing hash table whose
// 24-byte slots hold the hash, the count and where the key lies in one
// byte arena: a lookup hashes the bytes once and compares bytes only on a
// full hash match, and a new key appends its bytes to the arena. Nothing
// is allocated per key and the table holds no pointers, so the garbage
// collector never scans it: with 64 ranks of one process, each with its
// own table, per-key strings and pointerful slots were a third of the
// map's time. It is faster than a map[string]int64 (BenchmarkCountTable).
// A CountTable belongs to one goroutine.
type CountTable struct {
	kh        KeyHash
	slots     []slot // a power of two, at most three quarters full
	keys      []byte // the arena: every key's bytes, in insertion order
	n         int
	long      map[string]int64 // keys of maxArenaKey bytes or more
	spare     []slot           // the slots TakeCold last moved out of
	spareKeys []byte           // and the arena
	limit     int              // OnFull's
	full      func()
	dlimit    int // Direct's
	direct    func(key []byte, h uint64, n int64) bool
	area      *CountArea // counted in place of the slots, while lent (AreaSink)
}

// OnFull makes the table call full whenever a new key brings it to limit
// distinct keys (a limit of 0 or less, or a nil full, turns it off). full
// is called from Add or AddN, after the key is counted, and normally
// hands keys over with TakeCold, which keeps the table within the limit
// however many keys a stretch of input adds.
func (c *CountTable) OnFull(limit int, full func()) {
	if full == nil {
		limit = 0
	}
	c.limit, c.full = limit, full
}

// Direct makes the table, once it holds limit distinct keys, give every
// occurrence of a key it does not hold to count instead of taking the key
// (a limit of 0 or less, or a nil count, turns it off). count reports
// whether it took the occurrence; if not, the table takes the key, over
// its limit. It is how a rank counts straight into its node's table
// (CountSink): the keys the rank met first, which over a skewed
// vocabulary are most of its occurrences, are counted in place, and the
// rest go to the shared table one occurrence at a time, with no table of
// colder keys to build and hand over (TakeCold). OnFull is not called for
// the keys count takes.
func (c *CountTable) Direct(limit int, count func(key []byte, n int64) bool) {
	if count == nil {
		c.dlimit, c.direct = 0, nil
		return
	}
	c.dlimit, c.direct = limit, func(key []byte, _ uint64, n int64) bool { return count(key, n) }
}

type slot struct {
	h     uint64 // 0: empty
	at    uint64 // the key's offset in keys << keyLenBits | its length
	count int64
}

// A slot packs a key's length in its low keyLenBits bits, its offset in
// the rest (arenas up to 1 TiB); a key of maxArenaKey bytes or more is
// kept in a map instead (no word is that long but a hostile input's).
const (
	keyLenBits  = 24
	maxArenaKey = 1<<keyLenBits - 1
)

// NewCountTable returns an empty table.
func NewCountTable() *CountTable {
	return &CountTable{kh: NewKeyHash(maphash.MakeSeed()), slots: make([]slot, 1<<10)}
}

// Len returns the number of distinct keys.
func (c *CountTable) Len() int { return c.n + len(c.long) }

// key returns the bytes of the key at a.
func (c *CountTable) key(a uint64) []byte {
	off := a >> keyLenBits
	return c.keys[off : off+a&maxArenaKey]
}

// Add counts one occurrence of w, which it does not retain. A w of at
// most 8 bytes is read as one word, up to 8 bytes into its capacity (a
// word of a text buffer): those bytes must not change while Add runs.
func (c *CountTable) Add(w []byte) { c.addN(w, 1) }

// AddN adds n occurrences of w.
func (c *CountTable) AddN(w string, n int64) { c.addN(unsafe.Slice(unsafe.StringData(w), len(w)), n) }

// AddAll counts one occurrence of each of words, as Add does, faster: it
// hashes a batch of words before it looks any up, so that the lookups,
// most of them cache misses over a large vocabulary, overlap.
func (c *CountTable) AddAll(words [][]byte) {
	var hs [256]uint64
	for len(words) > 0 {
		ws := words[:min(len(words), len(hs))]
		words = words[len(ws):]
		for k, w := range ws {
			hs[k] = c.kh.Bytes(w)
		}
		slots, mask := c.slots, uint64(len(c.slots)-1)
		for k, w := range ws {
			h := hs[k]
			// The common case: a short key, in the slot its hash points
			// at (the table holds nothing while it counts in an area).
			if s := &slots[h&mask]; s.h == h && s.at&maxArenaKey == uint64(len(w)) && hashIsKey(h, len(w)) {
				s.count++
				continue
			}
			if len(w) >= maxArenaKey {
				c.addLong(string(w), 1)
				continue
			}
			c.add(w, h, 1)
			slots, mask = c.slots, uint64(len(c.slots)-1)
		}
	}
}

func (c *CountTable) addN(w []byte, n int64) {
	if len(w) >= maxArenaKey {
		c.addLong(string(w), n)
		return
	}
	c.add(w, c.kh.Bytes(w), n)
}

// add adds n occurrences of w, whose hash is h.
func (c *CountTable) add(w []byte, h uint64, n int64) {
	if c.area != nil && c.addArea(w, h, n) {
		return
	}
	mask := uint64(len(c.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &c.slots[i]
		if s.h == h {
			if s.at&maxArenaKey == uint64(len(w)) && (hashIsKey(h, len(w)) || string(c.key(s.at)) == string(w)) {
				s.count += n
				return
			}
			continue
		}
		if s.h == 0 {
			if c.dlimit > 0 && c.n >= c.dlimit && c.direct(w, h, n) {
				return
			}
			off := len(c.keys)
			c.keys = append(c.keys, w...)
			c.insert(i, h, off, len(w), n)
			return
		}
	}
}

func (c *CountTable) addLong(w string, n int64) {
	if c.long == nil {
		c.long = map[string]int64{}
	}
	c.long[w] += n
}

// nonzero maps the hash 0, which marks an empty slot, to 1.
func nonzero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

// insert fills empty slot i with a key whose bytes the caller has just
// appended to the arena at off.
func (c *CountTable) insert(i uint64, h uint64, off, klen int, n int64) {
	c.slots[i] = slot{h, uint64(off)<<keyLenBits | uint64(klen), n}
	c.n++
	if c.limit > 0 && c.n >= c.limit {
		defer c.full()
	}
	if 4*c.n <= 3*len(c.slots) {
		return
	}
	old := c.slots
	c.slots = make([]slot, 2*len(old))
	for _, s := range old {
		if s.h != 0 {
			c.place(s)
		}
	}
}

// place puts s in the first empty slot from its hash on (growing and
// TakeCold, which move slots without comparing keys).
func (c *CountTable) place(s slot) {
	mask := uint64(len(c.slots) - 1)
	j := s.h & mask
	for c.slots[j].h != 0 {
		j = (j + 1) & mask
	}
	c.slots[j] = s
}

// All yields every key and its count, in no particular order. Each key
// is a new string.
func (c *CountTable) All() iter.Seq2[string, int64] {
	return func(yield func(string, int64) bool) {
		for _, s := range c.slots {
			if s.h != 0 && !yield(string(c.key(s.at)), s.count) {
				return
			}
		}
		for w, n := range c.long {
			if !yield(w, n) {
				return
			}
		}
	}
}

// Reset empties the table, keeping its memory.
func (c *CountTable) Reset() {
	clear(c.slots)
	c.keys = c.keys[:0]
	c.n = 0
	c.long = nil
}

// Pairs returns the table's keys and counts in no particular order: what
// Store.AddPairs takes whole. The keys share one string, a copy of the
// arena, so they cost one allocation however many there are. The table
// is unchanged.
func (c *CountTable) Pairs() (keys []string, counts []int64) {
	keys, counts = make([]string, 0, c.Len()), make([]int64, 0, c.Len())
	arena := string(c.keys)
	for _, s := range c.slots {
		if s.h != 0 {
			off := s.at >> keyLenBits
			keys = append(keys, arena[off:off+s.at&maxArenaKey])
			counts = append(counts, s.count)
		}
	}
	for w, n := range c.long {
		keys = append(keys, w)
		counts = append(counts, n)
	}
	return keys, counts
}

// TakeCold removes the table's colder keys and returns them with their
// counts, as Pairs would: the keys counted at most k times, for the least
// k up to 15 that takes at least half of them, or every key if no such k
// takes half. A map whose table must stay within a budget of keys hands
// these over (Store.AddPairs) and goes on counting its frequent keys in
// place, which over a skewed vocabulary hands over far fewer pairs than
// emptying the table each time. Keys of Add's map (16 MiB or longer) are
// always taken.
func (c *CountTable) TakeCold() (keys []string, counts []int64) {
	// One pass: how many keys, and how many bytes of keys, were counted
	// 0, 1, ..., 15 times and 16 times or more.
	var hist, bytes [17]int
	for _, s := range c.slots {
		if s.h != 0 {
			b := min(max(s.count, 0), 16)
			hist[b]++
			bytes[b] += int(s.at & maxArenaKey)
		}
	}
	k, n, takeBytes := int64(16), 0, 0
	for i := range 17 {
		n += hist[i]
		takeBytes += bytes[i]
		if 2*n >= c.n && i < 16 {
			k = int64(i)
			break
		}
	}
	if k == 16 { // no small count takes half: take every key
		k = math.MaxInt64
	}
	keepBytes := len(c.keys) - takeBytes
	keys, counts = make([]string, 0, n+len(c.long)), make([]int64, 0, n+len(c.long))
	var taken strings.Builder
	taken.Grow(takeBytes)
	kept := c.spareKeys[:0]
	if cap(kept) < keepBytes {
		kept = make([]byte, 0, max(keepBytes, cap(c.keys)/2))
	}
	old := c.slots
	if cap(c.spare) >= len(old) {
		c.slots = c.spare[:len(old)]
		clear(c.slots)
	} else {
		c.slots = make([]slot, len(old))
	}
	c.spare = old
	c.n = 0
	ends := make([]int, 0, n)
	for _, s := range old {
		if s.h == 0 {
			continue
		}
		w := c.key(s.at)
		if s.count <= k {
			taken.Write(w)
			ends = append(ends, taken.Len())
			counts = append(counts, s.count)
			continue
		}
		c.place(slot{s.h, uint64(len(kept))<<keyLenBits | uint64(len(w)), s.count})
		kept = append(kept, w...)
		c.n++
	}
	c.keys, c.spareKeys = kept, c.keys
	arena := taken.String()
	start := 0
	for _, e := range ends {
		keys = append(keys, arena[start:e])
		start = e
	}
	for w, n := range c.long {
		keys = append(keys, w)
		counts = append(counts, n)
	}
	c.long = nil
	return keys, counts
}

// A CountSink is a Sink that also takes counts one key at a time, as a
// CountTable meets them: the node table of a job that sums int64 values,
// where the node's ranks share memory (package reduce/shuffle). Count
// adds n to key's count (key is a string key's bytes, not retained) and
// reports false, changing nothing, if it has no room for a new key.
type CountSink interface {
	Count(key []byte, n int64) bool
}

// A HashedCountSink is a CountSink that also takes a count with the key's
// hash under its Seed (NewKeyHash(Seed()), as a CountTable hashes), so that a
// key a CountTable looked up is not hashed again: the node table of
// in-process ranks that take turns (package reduce/shuffle's stripes).
// HandOver gives an empty table the sink's seed. CountHashed reports
// false, changing nothing, if the sink has no room for a new key.
type HashedCountSink interface {
	CountSink
	Seed() maphash.Seed
	CountHashed(key []byte, h uint64, n int64) bool
}

// HandOver makes c keep s's SinkBudget of keys for as long as s's sink
// takes them: a map's table then stays within the budget. If the sink is
// a CountSink, the keys c does not hold go to it one occurrence at a time
// (Direct), and if it is an AreaSink with an area to lend, c counts
// every key in the area, holding none itself, until the area is full or
// the map ends (Store.EndMap closes it); otherwise c hands its colder
// keys to s (TakeCold, Store.AddPairs) whenever it holds the budget.
// Once the sink is full, the table keeps every key. Call it once the map
// has started (mr.ApplyMap sets the sink up); before that, or without a
// sink, it does nothing. A hand-over happens inside Add, which cannot
// fail: the returned function reports its first error, for the map to
// check between pieces of input.
func (c *CountTable) HandOver(s *Store[string, int64]) (err func() error) {
	var first error
	var hand func()
	hand = func() {
		if err := s.AddPairs(c.TakeCold()); err != nil && first == nil {
			first = err
		}
		c.OnFull(s.SinkBudget(), hand) // 0 once the sink is full or failed
	}
	if cs, ok := s.Sink().(CountSink); ok && s.SinkBudget() > 0 {
		full := func() {
			// The node's table is full: hand over as any sink's table
			// does, and the store learns it is full from what Take leaves.
			c.Direct(0, nil)
			c.OnFull(s.SinkBudget(), hand)
		}
		hs, hashed := cs.(HashedCountSink)
		if hashed && c.Len() == 0 {
			c.kh = NewKeyHash(hs.Seed())
			if as, ok := hs.(AreaSink); ok {
				c.area = as.Area() // nil: none to lend
			}
			c.dlimit, c.direct = s.SinkBudget(), func(key []byte, h uint64, n int64) bool {
				if hs.CountHashed(key, h, n) {
					return true
				}
				full()
				return false
			}
			return func() error { return first }
		}
		c.Direct(s.SinkBudget(), func(key []byte, n int64) bool {
			if cs.Count(key, n) {
				return true
			}
			full()
			return false
		})
		return func() error { return first }
	}
	c.OnFull(s.SinkBudget(), hand)
	return func() error { return first }
}

// Run returns the table's keys in ascending order with their counts: the
// combined, sorted run a Store takes whole (Store.AddRun), without a
// second hash table. The table is unchanged.
func (c *CountTable) Run() Run[string, int64] {
	// By prefix (stringOrder): a comparison of two words then reads two
	// numbers next to each other instead of two strings' bytes.
	keys, counts := c.Pairs()
	e := Run[string, int64]{Keys: make([]string, len(keys)), Vals: make([]int64, len(keys))}
	for j, i := range stringOrder(keys) {
		e.Keys[j], e.Vals[j] = keys[i], counts[i]
	}
	return e
}
