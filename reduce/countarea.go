package reduce

import (
	"fmt"
	"unsafe"
)

// A CountArea is a counting table laid out in memory that no CountTable
// owns: a region of a rank's shared segment that the ranks of a node take
// turns to count in (package reduce/shuffle's stripes). Its slots are a
// CountTable's (24 bytes: the key's hash, where its bytes lie, its count)
// and a key's position is its offset in Mem, so a CountTable can count in
// it in place of its own slots (CountTable.HandOver, with an AreaSink):
// a rank that holds the area while it maps counts into it exactly as it
// would into a table of its own, and the ranks that hold it after it find
// the vocabulary there already.
//
// Past Base, keys and slot arrays are allocated one after the other and
// never freed: a new key appends its bytes, and once three quarters of
// the slots are taken they move to an array twice the size. An area with
// no room left for a key or a larger array is full: it takes no new key
// and goes on counting those it holds.
//
// The exported fields are the area's header, which the owner keeps in
// the region while nobody holds it: read it back, then Open; Close before
// writing it out. The access counts are what a PGAS runtime counts for
// the loads and stores the area's methods make (every slot probed, every
// key compared or written), for the owner to hand to it.
type CountArea struct {
	Mem     []byte // the region
	Base    int64  // where allocation starts
	Used    int64  // bytes allocated past Base
	SlotsAt int64  // the slot array's offset in Mem
	LogCap  uint   // log2 of its slots
	Keys    int64  // distinct keys
	Full    bool   // takes no new key

	// Added is the counts Add took.
	Added                          int64
	Gets, GetBytes, Puts, PutBytes int64

	slots []slot // while open
}

// CountSlotBytes is the size of a CountArea's slot.
const CountSlotBytes = int64(unsafe.Sizeof(slot{}))

// Reset makes a an empty area over mem, allocating from base, whose first
// slot array is 2^logCap slots.
func (a *CountArea) Reset(mem []byte, base int64, logCap uint) {
	*a = CountArea{Mem: mem, Base: base, SlotsAt: (base + 7) &^ 7, LogCap: logCap}
	a.Used = a.SlotsAt - base + CountSlotBytes<<logCap
}

// Open checks the header against the region and makes the area ready for
// Add; it reports a header that points outside the region.
func (a *CountArea) Open() error {
	end := a.Base + a.Used
	if a.Base < 0 || a.Used < 0 || end > int64(len(a.Mem)) || a.LogCap > 40 || a.SlotsAt < a.Base || a.SlotsAt%8 != 0 ||
		a.SlotsAt+CountSlotBytes<<a.LogCap > end || a.Keys < 0 || a.Keys > 1<<a.LogCap {
		return fmt.Errorf("reduce: count area header corrupt (%d of %d bytes used past %d, 2^%d slots at %d, %d keys)",
			a.Used, len(a.Mem), a.Base, a.LogCap, a.SlotsAt, a.Keys)
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(a.Mem)))%8 != 0 {
		return fmt.Errorf("reduce: count area not 8-byte aligned")
	}
	a.slots = a.slotsAt(a.SlotsAt, a.LogCap)
	return nil
}

// Close ends Add's use of the area: the header fields are current.
func (a *CountArea) Close() { a.slots = nil }

func (a *CountArea) slotsAt(off int64, l uint) []slot {
	return unsafe.Slice((*slot)(unsafe.Pointer(&a.Mem[off])), 1<<l)
}

// alloc returns the offset of n more bytes, aligned to align, or false.
func (a *CountArea) alloc(n, align int64) (int64, bool) {
	at := (a.Base + a.Used + align - 1) &^ (align - 1)
	if at+n > int64(len(a.Mem)) || at+n > 1<<(64-keyLenBits) {
		return 0, false
	}
	a.Used = at + n - a.Base
	return at, true
}

// Add adds n to the count of key, whose hash is h (nonzero, under the
// seed every user of the area hashes with), and reports false, changing
// nothing, if the key is new and the area has no room for it. The area
// must be open.
func (a *CountArea) Add(key []byte, h uint64, n int64) bool {
	mask := uint64(len(a.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &a.slots[i]
		a.Gets++
		a.GetBytes += CountSlotBytes
		if s.h == h {
			off, l := s.at>>keyLenBits, s.at&maxArenaKey
			if l != uint64(len(key)) {
				continue
			}
			same := hashIsKey(h, len(key))
			if !same { // compare the key's bytes, which cost a get
				a.Gets++
				a.GetBytes += int64(l)
				same = string(a.Mem[off:off+l]) == string(key)
			}
			if same {
				s.count += n
				a.Added++
				a.Puts++
				a.PutBytes += 8
				return true
			}
			continue
		}
		if s.h != 0 {
			continue
		}
		return a.insert(s, key, h, n)
	}
}

// insert puts a new key in empty slot s.
func (a *CountArea) insert(s *slot, key []byte, h uint64, n int64) bool {
	if a.Full || len(key) >= maxArenaKey {
		return false
	}
	if 4*(a.Keys+1) > 3<<a.LogCap {
		if !a.grow() {
			a.Full = true
			return false
		}
		return a.Add(key, h, n) // the slots moved
	}
	at, ok := a.alloc(int64(len(key)), 1)
	if !ok {
		a.Full = true
		return false
	}
	copy(a.Mem[at:], key)
	*s = slot{h: h, at: uint64(at)<<keyLenBits | uint64(len(key)), count: n}
	a.Keys++
	a.Added++
	a.Puts += 2
	a.PutBytes += int64(len(key)) + CountSlotBytes
	return true
}

// grow moves the slots to an array twice the size, or reports false if
// the region has no room for it.
func (a *CountArea) grow() bool {
	l := a.LogCap + 1
	at, ok := a.alloc(CountSlotBytes<<l, 8)
	if !ok {
		return false
	}
	slots := a.slotsAt(at, l)
	mask := uint64(len(slots) - 1)
	for _, s := range a.slots {
		if s.h == 0 {
			continue
		}
		i := s.h & mask
		for slots[i].h != 0 {
			i = (i + 1) & mask
		}
		slots[i] = s
	}
	a.Gets++
	a.GetBytes += CountSlotBytes << a.LogCap
	a.Puts++
	a.PutBytes += CountSlotBytes << l
	a.slots, a.SlotsAt, a.LogCap = slots, at, l
	return true
}

// Slots calls f with the key and count of each key in slots [lo, hi) of
// an open area (a slice of it, for ranks that read it together), until f
// returns false; it reports a slot that points outside the keys.
func (a *CountArea) Slots(lo, hi int, f func(key []byte, n int64) bool) error {
	end := uint64(a.Base + a.Used)
	a.Gets++
	a.GetBytes += CountSlotBytes * int64(hi-lo)
	for _, s := range a.slots[lo:hi] {
		if s.h == 0 {
			continue
		}
		off, l := s.at>>keyLenBits, s.at&maxArenaKey
		if off < uint64(a.Base) || off+l > end {
			return fmt.Errorf("reduce: count area: a key at %d (%d bytes) outside [%d,%d)", off, l, a.Base, end)
		}
		a.Gets++
		a.GetBytes += int64(l)
		if !f(a.Mem[off:off+l], s.count) {
			return nil
		}
	}
	return nil
}

// An AreaSink is a HashedCountSink that can also lend a CountTable a
// CountArea to count in (CountTable.HandOver): the node table of
// in-process ranks that take turns. Area returns the area, open and held
// by the caller until its map ends, or nil if it has none to lend; the
// lender closes it when the map ends (Store.EndMap), and the table, which
// holds no key of its own then, goes back to its own slots.
type AreaSink interface {
	HashedCountSink
	Area() *CountArea
}

// addArea counts n occurrences of w, whose hash under c's seed is h, in
// the area c counts in, and reports false if the area is closed or has no
// room for w: c then counts in its own slots from then on.
func (c *CountTable) addArea(w []byte, h uint64, n int64) bool {
	if c.area.slots != nil && c.area.Add(w, h, n) {
		return true
	}
	c.area = nil
	return false
}
