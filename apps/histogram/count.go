package histogram

// counter counts the channel values of BGR pixels. It keeps two sets of
// 32-bit tables, one for even and one for odd pixels, so that runs of equal
// values (common in real images) do not serialise on one counter, and
// flushes them into 64-bit totals before they can overflow.
type counter struct {
	b0, g0, r0 [256]uint32
	b1, g1, r1 [256]uint32
	pending    int64 // pixels counted since the last flush
	tot        [768]int64
}

// flushAt keeps every 32-bit counter below 2^32.
const flushAt = 1 << 31

// add counts the pixels px (B, G, R bytes; len(px) a multiple of 3).
func (c *counter) add(px []byte) {
	if c.pending+int64(len(px)/3) >= flushAt {
		c.flush()
	}
	c.pending += int64(len(px) / 3)
	for len(px) >= 12 {
		c.b0[px[0]]++
		c.g0[px[1]]++
		c.r0[px[2]]++
		c.b1[px[3]]++
		c.g1[px[4]]++
		c.r1[px[5]]++
		c.b0[px[6]]++
		c.g0[px[7]]++
		c.r0[px[8]]++
		c.b1[px[9]]++
		c.g1[px[10]]++
		c.r1[px[11]]++
		px = px[12:]
	}
	for len(px) >= 3 {
		c.b0[px[0]]++
		c.g0[px[1]]++
		c.r0[px[2]]++
		px = px[3:]
	}
}

// flush moves the 32-bit counts into the totals.
func (c *counter) flush() {
	for v := range 256 {
		c.tot[v] += int64(c.r0[v]) + int64(c.r1[v])
		c.tot[256+v] += int64(c.g0[v]) + int64(c.g1[v])
		c.tot[512+v] += int64(c.b0[v]) + int64(c.b1[v])
	}
	c.b0, c.g0, c.r0 = [256]uint32{}, [256]uint32{}, [256]uint32{}
	c.b1, c.g1, c.r1 = [256]uint32{}, [256]uint32{}, [256]uint32{}
	c.pending = 0
}

// totals flushes and returns the counts: red at [0,256), green at
// [256,512), blue at [512,768) — the keys of the map's pairs.
func (c *counter) totals() *[768]int64 {
	c.flush()
	return &c.tot
}
