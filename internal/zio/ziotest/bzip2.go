package ziotest

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
)

// Bzip2 returns data compressed as one bzip2 stream of block size level
// (1-9: level×100 kB blocks). It is slow and compresses little: for tests.
// It panics if level is out of range.
func Bzip2(data []byte, level int) []byte {
	if level < 1 || level > 9 {
		panic(fmt.Sprintf("ziotest: bzip2 level %d, want 1-9", level))
	}
	var w bitWriter
	w.bytes('B', 'Z', 'h', byte('0'+level))
	// The block limit is on the bytes after the first run-length coding,
	// which makes 5 bytes of 4 at worst.
	raw := level*100000*4/5 - 16
	var combined uint32
	for len(data) > 0 {
		n := min(len(data), raw)
		crc := blockCRC(data[:n])
		combined = (combined<<1 | combined>>31) ^ crc
		w.bits(0x314159265359, 48)
		w.bits(uint64(crc), 32)
		writeBlock(&w, rle1(data[:n]))
		data = data[n:]
	}
	w.bits(0x177245385090, 48)
	w.bits(uint64(combined), 32)
	return w.flush()
}

// rle1 is bzip2's first run-length coding: a run of 4 to 255 equal bytes
// is 4 bytes and the count of the rest.
func rle1(data []byte) []byte {
	var out []byte
	for i := 0; i < len(data); {
		b := data[i]
		j := i
		for j < len(data) && data[j] == b && j-i < 255 {
			j++
		}
		if run := j - i; run >= 4 {
			out = append(out, b, b, b, b, byte(run-4))
		} else {
			out = append(out, data[i:j]...)
		}
		i = j
	}
	return out
}

// writeBlock writes the block after its magic and CRC: the Burrows–Wheeler
// transform of d, move-to-front and zero-run coded, with one Huffman
// table (two, equal: a reader wants at least two).
func writeBlock(w *bitWriter, d []byte) {
	sa := rotations(d)
	n := len(d)
	origPtr := slices.Index(sa, 0)
	var used [256]bool
	for _, b := range d {
		used[b] = true
	}
	var unseq []byte // index in the symbol map -> byte
	for b := range 256 {
		if used[b] {
			unseq = append(unseq, byte(b))
		}
	}
	w.bits(0, 1) // not randomised
	w.bits(uint64(origPtr), 24)
	var groups uint64
	for g := range 16 {
		if slices.Contains(used[g*16:g*16+16], true) {
			groups |= 1 << (15 - g)
		}
	}
	w.bits(groups, 16)
	for g := range 16 {
		if groups&(1<<(15-g)) == 0 {
			continue
		}
		for j := range 16 {
			w.bool(used[g*16+j])
		}
	}

	// Move-to-front over the symbol map, zero runs in RUNA/RUNB.
	nInUse := len(unseq)
	eob := uint16(nInUse + 1)
	mtf := make([]byte, nInUse)
	for i := range mtf {
		mtf[i] = byte(i)
	}
	var idx [256]byte
	for i, b := range unseq {
		idx[b] = byte(i)
	}
	var syms []uint16
	zeros := 0
	flushZeros := func() {
		for ; zeros > 0; zeros = (zeros - 1) / 2 {
			if zeros&1 == 1 {
				syms = append(syms, 0) // RUNA
			} else {
				syms = append(syms, 1) // RUNB
				zeros--
			}
		}
	}
	for i := range n {
		s := idx[d[(sa[i]+n-1)%n]]
		p := slices.Index(mtf, s)
		copy(mtf[1:p+1], mtf[:p])
		mtf[0] = s
		if p == 0 {
			zeros++
			continue
		}
		flushZeros()
		syms = append(syms, uint16(p+1))
	}
	flushZeros()
	syms = append(syms, eob)

	// One complete canonical code: the first s symbols one bit shorter.
	alpha := nInUse + 2
	l := bits.Len(uint(alpha - 1))
	short := 1<<l - alpha
	lens := make([]int, alpha)
	for i := range lens {
		lens[i] = l
		if i < short {
			lens[i] = l - 1
		}
	}
	codes := make([]uint32, alpha)
	var code uint32
	for n := 1; n <= l; n++ {
		for i, ln := range lens {
			if ln == n {
				codes[i] = code
				code++
			}
		}
		code <<= 1
	}

	const trees = 2
	selectors := (len(syms) + 49) / 50
	w.bits(trees, 3)
	w.bits(uint64(selectors), 15)
	for range selectors {
		w.bits(0, 1) // tree 0, move-to-front index 0
	}
	for range trees {
		cur := lens[0]
		w.bits(uint64(cur), 5)
		for _, ln := range lens {
			for ; cur < ln; cur++ {
				w.bits(0b10, 2)
			}
			for ; cur > ln; cur-- {
				w.bits(0b11, 2)
			}
			w.bits(0, 1)
		}
	}
	for _, s := range syms {
		w.bits(uint64(codes[s]), lens[s])
	}
}

// rotations returns the start of d's rotations in sorted order (prefix
// doubling over cyclic ranks).
func rotations(d []byte) []int {
	n := len(d)
	sa := make([]int, n)
	rank := make([]int, n)
	tmp := make([]int, n)
	for i := range n {
		sa[i] = i
		rank[i] = int(d[i])
	}
	for k := 1; ; k *= 2 {
		key := func(i int) (int, int) { return rank[i], rank[(i+k)%n] }
		slices.SortFunc(sa, func(a, b int) int {
			a0, a1 := key(a)
			b0, b1 := key(b)
			return cmp.Or(cmp.Compare(a0, b0), cmp.Compare(a1, b1))
		})
		tmp[sa[0]] = 0
		for i := 1; i < n; i++ {
			p0, p1 := key(sa[i-1])
			c0, c1 := key(sa[i])
			tmp[sa[i]] = tmp[sa[i-1]]
			if p0 != c0 || p1 != c1 {
				tmp[sa[i]]++
			}
		}
		copy(rank, tmp)
		if rank[sa[n-1]] == n-1 || k >= n {
			return sa
		}
	}
}

// blockCRC is bzip2's CRC-32: polynomial 0x04c11db7, most significant bit
// first.
func blockCRC(data []byte) uint32 {
	crc := ^uint32(0)
	for _, b := range data {
		crc ^= uint32(b) << 24
		for range 8 {
			if crc&(1<<31) != 0 {
				crc = crc<<1 ^ 0x04c11db7
			} else {
				crc <<= 1
			}
		}
	}
	return ^crc
}

// bitWriter writes bits most significant first.
type bitWriter struct {
	out  []byte
	acc  uint64
	nacc int
}

func (w *bitWriter) bits(v uint64, n int) {
	for n > 0 {
		n--
		w.acc = w.acc<<1 | (v>>n)&1
		w.nacc++
		if w.nacc == 8 {
			w.out = append(w.out, byte(w.acc))
			w.acc, w.nacc = 0, 0
		}
	}
}

func (w *bitWriter) bool(b bool) {
	if b {
		w.bits(1, 1)
	} else {
		w.bits(0, 1)
	}
}

func (w *bitWriter) bytes(bs ...byte) {
	for _, b := range bs {
		w.bits(uint64(b), 8)
	}
}

// flush returns the bits written, the last byte padded with zeros.
func (w *bitWriter) flush() []byte {
	if w.nacc > 0 {
		w.out = append(w.out, byte(w.acc<<(8-w.nacc)))
		w.acc, w.nacc = 0, 0
	}
	return w.out
}
