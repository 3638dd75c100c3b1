package pgas

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// CacheConfig sets up a rank's remote-reference cache, the software cache
// of MuPC (seeds/001 §4.4.9 and ch. 5). It caches the element accesses of
// Array (Get, Put, GetAsync, PutAsync) to other ranks' segments:
//
//   - One cache per rank, split into one segment per remote rank, each
//     Lines direct-mapped lines of LineBytes bytes; a segment's memory is
//     allocated when the rank first touches that remote rank.
//   - A read miss loads the whole line with one get. A write miss
//     allocates the line without loading it; the bytes written are marked
//     in the line's byte-dirty mask, and a later read of bytes it does not
//     hold loads the line and keeps the written bytes.
//   - Write-back: dirty bytes go home as one put per run of dirty bytes
//     (so that two ranks writing different bytes of one line never
//     overwrite each other: the seed's false-sharing merge), when the line
//     leaves the cache and at every synchronisation point.
//   - A small fully associative victim cache of VictimLines lines, shared
//     by the segments, holds lines evicted from their slot; a hit there
//     swaps the line back.
//   - Every dirty byte is written back, and every line invalidated, at
//     Fence, Barrier and Notify (and so at a team's barrier and in the
//     collectives that synchronise), at every atomic (FetchAdd,
//     CompareAndSwap, AtomicLoad: the strict accesses, on which locks are
//     built), and lines are dropped again at Wait. So the memory model of
//     the package stays as documented: what another rank put before a
//     barrier is what this rank reads after it, never a cached copy.
//   - Bulk transfers (GetBytes, PutBytes, GetRange, PutRange, Copy and
//     their async forms, GetAsync and PutAsync among them) bypass the cache, as upc_memget and upc_memput do
//     in MuPC; they first write back the dirty bytes of the lines they
//     overlap, and a put drops those lines, so that a rank always reads
//     its own writes.
//
// Cast's direct loads and stores do not go through the cache: a rank's
// cached writes reach the owner's memory at its next synchronisation
// point.
//
// Memory: Lines*LineBytes (and a dirty mask of an eighth of that) for
// every remote rank the rank has touched, plus the victim lines; MuPC's
// default geometry is 256 KiB a remote rank, so a rank of a 64-rank job
// that touches every other rank holds 16 MiB of cache.
//
// A line fetch counts as one remote get of the line's bytes in Stats and
// a write-back as one remote put per dirty run; Stats.Cache counts hits,
// misses and the rest. The zero CacheConfig (Lines 0) is no cache.
type CacheConfig struct {
	// Lines is the number of direct-mapped lines per remote rank. Zero
	// turns the cache off.
	Lines int
	// LineBytes is the size of a line, a power of two from 8 to
	// MaxCacheLineBytes. Zero means DefaultCacheLineBytes.
	LineBytes int
	// VictimLines is the size of the victim cache. Zero means
	// DefaultVictimLines; a negative value means none.
	VictimLines int
}

// Cache defaults and limits. DefaultCacheLines and DefaultCacheLineBytes
// are MuPC's defaults (seeds/001 §4.6.3: 256 lines of 1 KiB per remote
// thread).
const (
	DefaultCacheLines     = 256
	DefaultCacheLineBytes = 1024
	DefaultVictimLines    = 16
	MaxCacheLineBytes     = 1 << 20
	// MaxCacheLines bounds Lines, so that a typo cannot ask for a cache
	// larger than memory.
	MaxCacheLines = 1 << 20
)

// On reports whether the cache is on.
func (c CacheConfig) On() bool { return c.Lines > 0 }

// WithDefaults returns c with zero fields replaced by their defaults; an
// off cache stays the zero value.
func (c CacheConfig) WithDefaults() CacheConfig {
	if !c.On() {
		return CacheConfig{}
	}
	if c.LineBytes == 0 {
		c.LineBytes = DefaultCacheLineBytes
	}
	if c.VictimLines == 0 {
		c.VictimLines = DefaultVictimLines
	}
	return c
}

// Validate reports what is wrong with c (after defaults), or nil.
func (c CacheConfig) Validate() error {
	if c.Lines < 0 {
		return fmt.Errorf("pgas: cache lines = %d is negative", c.Lines)
	}
	c = c.WithDefaults()
	if !c.On() {
		return nil
	}
	var errs []error
	if c.Lines > MaxCacheLines {
		errs = append(errs, fmt.Errorf("pgas: cache lines = %d, want at most %d", c.Lines, MaxCacheLines))
	}
	if c.LineBytes < 8 || c.LineBytes > MaxCacheLineBytes || c.LineBytes&(c.LineBytes-1) != 0 {
		errs = append(errs, fmt.Errorf("pgas: cache line = %d bytes, want a power of two from 8 to %d", c.LineBytes, MaxCacheLineBytes))
	}
	if c.VictimLines > MaxCacheLines {
		errs = append(errs, fmt.Errorf("pgas: cache victim lines = %d, want at most %d", c.VictimLines, MaxCacheLines))
	}
	return errors.Join(errs...)
}

// String is c in the form ParseCacheConfig reads: "off", or
// "lines=N,line=BYTES,victim=N" (victim=0 for none) after defaults.
func (c CacheConfig) String() string {
	c = c.WithDefaults()
	if !c.On() {
		return "off"
	}
	return fmt.Sprintf("lines=%d,line=%d,victim=%d", c.Lines, c.LineBytes, max(c.VictimLines, 0))
}

// ParseCacheConfig reads a cache setting: "off" (or ""), "on" (the
// defaults), or comma-separated keys lines=N, line=BYTES and victim=N (0
// for no victim cache); keys left out take their defaults, and lines= is
// required unless "on" is one of the items. The result is validated.
func ParseCacheConfig(s string) (CacheConfig, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "off" {
		return CacheConfig{}, nil
	}
	var c CacheConfig
	victimSet := false
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "on" {
			if c.Lines == 0 {
				c.Lines = DefaultCacheLines
			}
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			return CacheConfig{}, fmt.Errorf("pgas: cache setting %q: item %q is not on, off or key=value", s, item)
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return CacheConfig{}, fmt.Errorf("pgas: cache setting %q: %s=%q is not an integer", s, k, v)
		}
		switch strings.TrimSpace(k) {
		case "lines":
			c.Lines = n
		case "line":
			c.LineBytes = n
		case "victim":
			c.VictimLines, victimSet = n, true
		default:
			return CacheConfig{}, fmt.Errorf("pgas: cache setting %q: unknown key %q (want lines, line or victim)", s, k)
		}
	}
	if c.Lines == 0 {
		return CacheConfig{}, fmt.Errorf("pgas: cache setting %q: lines= missing or 0 (use \"off\" for no cache)", s)
	}
	if victimSet {
		if c.VictimLines < 0 {
			return CacheConfig{}, fmt.Errorf("pgas: cache setting %q: victim=%d is negative", s, c.VictimLines)
		}
		if c.VictimLines == 0 {
			c.VictimLines = -1
		}
	}
	if err := c.Validate(); err != nil {
		return CacheConfig{}, err
	}
	return c.WithDefaults(), nil
}

// CacheStats counts a rank's remote-reference cache (Stats.Cache). An
// access is one element Get or Put, or its part in one line when it
// spans two.
type CacheStats struct {
	Hits       int64 // accesses served by a line held in its slot or the victim cache
	VictimHits int64 // lines found in the victim cache and swapped back
	Misses     int64 // accesses whose line was not held (or held without the bytes read)
	Fetches    int64 // lines loaded (one remote get each)
	WriteBacks int64 // dirty runs written home (one remote put each)
	Evictions  int64 // lines that left a slot for another line
	Flushes    int64 // synchronisation points that wrote back or dropped lines
	Bypasses   int64 // bulk transfers that had to write back or drop cached lines
}

// MissRate is Misses over all accesses, or 0 when there were none.
func (s CacheStats) MissRate() float64 {
	if n := s.Hits + s.Misses; n > 0 {
		return float64(s.Misses) / float64(n)
	}
	return 0
}

func (s *CacheStats) add(o CacheStats) {
	s.Hits += o.Hits
	s.VictimHits += o.VictimHits
	s.Misses += o.Misses
	s.Fetches += o.Fetches
	s.WriteBacks += o.WriteBacks
	s.Evictions += o.Evictions
	s.Flushes += o.Flushes
	s.Bypasses += o.Bypasses
}

func (s CacheStats) words() []int64 {
	return []int64{s.Hits, s.VictimHits, s.Misses, s.Fetches, s.WriteBacks, s.Evictions, s.Flushes, s.Bypasses}
}

const cacheStatsWords = 8

func cacheStatsFrom(w []int64) CacheStats {
	return CacheStats{w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]}
}

// cacheLine is one line: a slot of a segment or of the victim cache. It is
// live when its epoch is the cache's; dirty marks the bytes written and
// not yet home; full says data holds the whole line as last loaded (plus
// this rank's writes), else only the dirty bytes are meaningful.
type cacheLine struct {
	data   []byte
	dirty  []uint64 // one bit per byte of data
	num    int64    // line number: offset / LineBytes
	rank   int
	epoch  uint32
	full   bool
	isDirt bool // some bit of dirty is set
	listed bool // the slot is on the cache's dirty list (a property of the slot, not of its line)
}

// rcache is a rank's remote-reference cache.
type rcache struct {
	r      *Rank
	cfg    CacheConfig
	shift  uint
	mask   int64 // LineBytes-1
	segs   [][]cacheLine
	lmask  int64 // Lines-1 if Lines is a power of two, else -1 (then a slot is num%Lines)
	victim []cacheLine
	vnext  int
	epoch  uint32
	live   int          // lines filled since the last invalidation (an upper bound of the live ones)
	dirty  []*cacheLine // slots that have held dirty bytes since the last flush
	fetch  []byte       // a line's worth of staging for loads that merge
	st     *CacheStats
}

func newCache(r *Rank, cfg CacheConfig) *rcache {
	cfg = cfg.WithDefaults()
	c := &rcache{r: r, cfg: cfg, shift: uint(bits.TrailingZeros(uint(cfg.LineBytes))), mask: int64(cfg.LineBytes - 1),
		segs: make([][]cacheLine, r.n), epoch: 1, st: &r.stats.Cache, lmask: -1}
	if cfg.Lines&(cfg.Lines-1) == 0 {
		c.lmask = int64(cfg.Lines - 1)
	}
	if cfg.VictimLines > 0 {
		c.victim = c.newLines(cfg.VictimLines)
	}
	return c
}

// newLines makes n empty lines whose buffers share two allocations.
func (c *rcache) newLines(n int) []cacheLine {
	lb := c.cfg.LineBytes
	dw := (lb + 63) / 64
	data := make([]byte, n*lb)
	dirty := make([]uint64, n*dw)
	ls := make([]cacheLine, n)
	for i := range ls {
		ls[i].data = data[i*lb : (i+1)*lb : (i+1)*lb]
		ls[i].dirty = dirty[i*dw : (i+1)*dw : (i+1)*dw]
	}
	return ls
}

func (c *rcache) lineLen(num int64) int {
	return int(min(int64(c.cfg.LineBytes), int64(len(c.r.seg))-num<<c.shift))
}

// slot returns the direct-mapped slot of line num of rank.
func (c *rcache) slot(rank int, num int64) *cacheLine {
	s := c.segs[rank]
	if s == nil {
		s = c.newLines(c.cfg.Lines)
		c.segs[rank] = s
	}
	if c.lmask >= 0 {
		return &s[num&c.lmask]
	}
	return &s[num%int64(len(s))]
}

func (l *cacheLine) holds(epoch uint32, rank int, num int64) bool {
	return l.epoch == epoch && l.num == num && l.rank == rank
}

// swap exchanges the lines held by two slots; each slot keeps its listed
// mark, and a slot that now holds dirty bytes is listed.
func (c *rcache) swap(a, b *cacheLine) {
	la, lb := a.listed, b.listed
	*a, *b = *b, *a
	a.listed, b.listed = la, lb
	c.list(a)
	c.list(b)
}

func (c *rcache) list(l *cacheLine) {
	if l.isDirt && !l.listed {
		l.listed = true
		c.dirty = append(c.dirty, l)
	}
}

// line returns the slot holding line num of rank and whether it was held
// (in its slot or, swapped back, from the victim cache), making room for
// it when it was not (the line is then empty: not full, nothing dirty).
// It counts the victim hit and the eviction, not the access.
func (c *rcache) line(ctx context.Context, rank int, num int64) (*cacheLine, bool, error) {
	s := c.slot(rank, num)
	if s.holds(c.epoch, rank, num) {
		return s, true, nil
	}
	for i := range c.victim {
		if v := &c.victim[i]; v.holds(c.epoch, rank, num) {
			c.st.VictimHits++
			c.swap(s, v)
			return s, true, nil
		}
	}
	if s.epoch == c.epoch {
		c.st.Evictions++
		if err := c.evict(ctx, s); err != nil {
			return nil, false, err
		}
	}
	if s.isDirt { // a dropped line's bytes went home when it was dropped
		clear(s.dirty)
		s.isDirt = false
	}
	s.num, s.rank, s.epoch, s.full = num, rank, c.epoch, false
	c.live++
	return s, false, nil
}

// evict moves the live line of slot s out: into the victim cache, whose
// oldest line goes home first, or home if there is no victim cache.
func (c *rcache) evict(ctx context.Context, s *cacheLine) error {
	if len(c.victim) == 0 {
		err := c.writeBack(ctx, s)
		s.epoch = 0
		return err
	}
	v := &c.victim[c.vnext]
	c.vnext = (c.vnext + 1) % len(c.victim)
	if v.epoch == c.epoch {
		if err := c.writeBack(ctx, v); err != nil {
			return err
		}
	}
	c.swap(s, v)
	s.epoch = 0
	return nil
}

// writeBack puts l's dirty runs home, one put per run, and clears its
// dirty mask.
func (c *rcache) writeBack(ctx context.Context, l *cacheLine) error {
	if !l.isDirt {
		return nil
	}
	base := l.num << c.shift
	n := len(l.data)
	for i := 0; i < n; {
		w := l.dirty[i>>6] >> (i & 63)
		if w == 0 {
			i = (i | 63) + 1
			continue
		}
		i += bits.TrailingZeros64(w)
		j := i
		for j < n { // to the run's end, across mask words
			sh := j & 63
			t := bits.TrailingZeros64(^(l.dirty[j>>6] >> sh))
			if t >= 64-sh { // dirty to the word's end
				j = (j | 63) + 1
				continue
			}
			j += t
			break
		}
		j = min(j, n)
		c.st.WriteBacks++
		c.r.countRemote(OpPut, l.rank, j-i, 0)
		if err := c.r.ep.Put(ctx, l.rank, base+int64(i), l.data[i:j]); err != nil {
			return fmt.Errorf("pgas: cache write-back of %d bytes to rank %d at %d: %w", j-i, l.rank, base+int64(i), err)
		}
		i = j
	}
	clear(l.dirty)
	l.isDirt = false
	return nil
}

// load fills l's bytes that are not dirty from the owner, with one get
// of the line, and marks it full.
func (c *rcache) load(ctx context.Context, l *cacheLine) error {
	n := c.lineLen(l.num)
	off := l.num << c.shift
	c.st.Fetches++
	c.r.countRemote(OpGet, l.rank, 0, n)
	dst := l.data[:n]
	if l.isDirt {
		if c.fetch == nil {
			c.fetch = make([]byte, c.cfg.LineBytes)
		}
		dst = c.fetch[:n]
	}
	if err := c.r.ep.Get(ctx, l.rank, off, dst); err != nil {
		// The line is dropped; its writes are not lost with it.
		if e := c.writeBack(ctx, l); e != nil {
			err = errors.Join(err, e)
		}
		l.epoch = 0
		return fmt.Errorf("pgas: cache load of %d bytes of rank %d at %d: %w", n, l.rank, off, err)
	}
	if l.isDirt {
		for i := range n {
			if l.dirty[i>>6]>>(i&63)&1 == 0 {
				l.data[i] = dst[i]
			}
		}
	}
	l.full = true
	return nil
}

// allDirty reports whether bytes [lo, hi) of l are all dirty.
func (l *cacheLine) allDirty(lo, hi int) bool {
	if !l.isDirt {
		return false
	}
	for i := lo; i < hi; i++ {
		if l.dirty[i>>6]>>(i&63)&1 == 0 {
			return false
		}
	}
	return true
}

func (l *cacheLine) markDirty(lo, hi int) {
	for i := lo; i < hi; {
		if i&63 == 0 && hi-i >= 64 {
			l.dirty[i>>6] = ^uint64(0)
			i += 64
			continue
		}
		l.dirty[i>>6] |= 1 << (i & 63)
		i++
	}
	l.isDirt = true
}

// get fills dst from (rank, off) through the cache; dst fits in two lines.
// An access hits when its line is held with the bytes it reads.
func (c *rcache) get(ctx context.Context, rank int, off int64, dst []byte) error {
	// The hit in a slot, inside one line.
	if num, lo := off>>c.shift, int(off&c.mask); lo+len(dst) <= c.cfg.LineBytes && c.segs[rank] != nil {
		if s := c.slot(rank, num); s.full && s.holds(c.epoch, rank, num) {
			c.st.Hits++
			copy(dst, s.data[lo:])
			return nil
		}
	}
	for len(dst) > 0 {
		num, lo := off>>c.shift, int(off&c.mask)
		k := min(len(dst), c.cfg.LineBytes-lo)
		l, held, err := c.line(ctx, rank, num)
		if err != nil {
			return err
		}
		if held && (l.full || l.allDirty(lo, lo+k)) {
			c.st.Hits++
		} else {
			c.st.Misses++
			if err := c.load(ctx, l); err != nil {
				return err
			}
		}
		copy(dst[:k], l.data[lo:])
		dst, off = dst[k:], off+int64(k)
	}
	return nil
}

// put writes src to (rank, off) through the cache; src fits in two lines.
func (c *rcache) put(ctx context.Context, rank int, off int64, src []byte) error {
	for len(src) > 0 {
		num, lo := off>>c.shift, int(off&c.mask)
		k := min(len(src), c.cfg.LineBytes-lo)
		l, held, err := c.line(ctx, rank, num)
		if err != nil {
			return err
		}
		if held {
			c.st.Hits++
		} else {
			c.st.Misses++
		}
		copy(l.data[lo:], src[:k])
		l.markDirty(lo, lo+k)
		c.list(l)
		src, off = src[k:], off+int64(k)
	}
	return nil
}

// flush writes every dirty byte home and drops every line: the cache's
// part of a synchronisation point.
func (c *rcache) flush(ctx context.Context) error {
	if c.live == 0 {
		return nil
	}
	c.st.Flushes++
	var err error
	for _, l := range c.dirty {
		l.listed = false
		if l.epoch == c.epoch && err == nil {
			err = c.writeBack(ctx, l)
		}
		clear(l.dirty)
		l.isDirt = false
	}
	c.dirty = c.dirty[:0]
	c.invalidate()
	return err
}

// invalidate drops every line; dirty bytes must have gone home first.
func (c *rcache) invalidate() {
	c.live = 0
	c.epoch++
	if c.epoch == 0 { // wrapped: no slot may look live
		for _, s := range c.segs {
			for i := range s {
				s[i].epoch = 0
			}
		}
		for i := range c.victim {
			c.victim[i].epoch = 0
		}
		c.epoch = 1
	}
}

// bypass prepares [off, off+n) of rank for a transfer that does not go
// through the cache: the dirty bytes of the lines it overlaps go home
// first (the transport keeps a pair's operations in order), and for a put
// (drop) those lines are dropped.
func (c *rcache) bypass(ctx context.Context, rank int, off int64, n int, drop bool) error {
	if c.live == 0 || n == 0 || c.segs[rank] == nil {
		return nil
	}
	first, last := off>>c.shift, (off+int64(n)-1)>>c.shift
	touched := false
	visit := func(l *cacheLine) error {
		if l.epoch != c.epoch || l.rank != rank || l.num < first || l.num > last {
			return nil
		}
		if !l.isDirt && !drop {
			return nil
		}
		touched = true
		if err := c.writeBack(ctx, l); err != nil {
			return err
		}
		if drop {
			l.epoch = 0
		}
		return nil
	}
	seg := c.segs[rank]
	if last-first+1 >= int64(len(seg)) {
		for i := range seg {
			if err := visit(&seg[i]); err != nil {
				return err
			}
		}
	} else {
		for num := first; num <= last; num++ {
			if err := visit(&seg[num%int64(len(seg))]); err != nil {
				return err
			}
		}
	}
	for i := range c.victim {
		if err := visit(&c.victim[i]); err != nil {
			return err
		}
	}
	if touched {
		c.st.Bypasses++
	}
	return nil
}
