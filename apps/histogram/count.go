package histogram

// counter counts the channel values of BGR pixels. It keeps two sets of
// 32-bit tables, one for even and one for odd pixels, so that runs of equal
// values (common in real images) do not serialise on one counter, and
// flushes them into 64-bit totals before they can overflow.
type counter struct {
	// t holds the 32-bit tables: blue, green and red of even pixels at
	// t[0], t[1], t[2], of odd pixels at t[3], t[4], t[5] (the order of
	// the bytes of a pixel pair, which count48 relies on).
	t       [6][256]uint32
	pending int64 // pixels counted since the last flush
	tot     [768]int64
}

// flushAt keeps every 32-bit counter below 2^32.
const flushAt = 1 << 31

// add counts the pixels px (B, G, R bytes; len(px) a multiple of 3).
func (c *counter) add(px []byte) {
	if c.pending+int64(len(px)/3) >= flushAt {
		c.flush()
	}
	c.pending += int64(len(px) / 3)
	if haveCount48 && len(px) >= 48 {
		n := len(px) / 48 * 48
		count48(&c.t, px[:n])
		px = px[n:]
	}
	countGo(&c.t, px)
}

// countGo counts px (len(px) a multiple of 3) into t as count48 does, in
// Go: the kernel where there is no assembly one, and the tail of 0 to 47
// bytes count48 leaves.
func countGo(t *[6][256]uint32, px []byte) {
	for len(px) >= 12 {
		t[0][px[0]]++
		t[1][px[1]]++
		t[2][px[2]]++
		t[3][px[3]]++
		t[4][px[4]]++
		t[5][px[5]]++
		t[0][px[6]]++
		t[1][px[7]]++
		t[2][px[8]]++
		t[3][px[9]]++
		t[4][px[10]]++
		t[5][px[11]]++
		px = px[12:]
	}
	for len(px) >= 3 {
		t[0][px[0]]++
		t[1][px[1]]++
		t[2][px[2]]++
		px = px[3:]
	}
}

// flush moves the 32-bit counts into the totals.
func (c *counter) flush() {
	for v := range 256 {
		c.tot[v] += int64(c.t[2][v]) + int64(c.t[5][v])
		c.tot[256+v] += int64(c.t[1][v]) + int64(c.t[4][v])
		c.tot[512+v] += int64(c.t[0][v]) + int64(c.t[3][v])
	}
	c.t = [6][256]uint32{}
	c.pending = 0
}

// totals flushes and returns the counts: red at [0,256), green at
// [256,512), blue at [512,768) — the keys of the map's pairs.
func (c *counter) totals() *[768]int64 {
	c.flush()
	return &c.tot
}
