package wordcount

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// Byte classes: a separator, a word byte that is already lower-case
// (a-z, 0-9), an upper-case ASCII letter, and a byte of a multi-byte rune
// or an invalid byte (>= 0x80).
const (
	sep = iota
	low
	up
	multi
)

var class = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] = low
		case 'A' <= c && c <= 'Z':
			t[c] = up
		case c >= utf8.RuneSelf:
			t[c] = multi
		}
	}
	return t
}()

// isWordRune reports whether r belongs to a word. utf8.RuneError, which
// stands for an invalid byte, does not.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return class[r] != sep
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// Words calls fn for every word of text, in order: a word is a maximal run
// of runes for which unicode.IsLetter or unicode.IsNumber holds, lower-cased
// rune by rune with unicode.ToLower. Invalid UTF-8 bytes separate words.
// fn must not retain word: it aliases text or a buffer Words reuses.
func Words(text []byte, fn func(word []byte)) {
	b := newBatch(func(words [][]byte) {
		for _, w := range words {
			fn(w)
		}
	})
	b.words(text)
	b.flush()
}

// A batch collects words for a function that takes many at a time
// (reduce.CountTable.AddAll, which overlaps their lookups): slices of the
// text, and of an arena where ASCII words of up to 16 bytes and the
// words that had to be lower-cased are copied (but see own).
type batch struct {
	ws    [][]byte
	arena []byte
	fn    func(words [][]byte)
	// own says that words may change the text it is given (the reader's
	// buffer): a word of more than 16 bytes whose upper-case letters are
	// ASCII is lower-cased in place rather than copied to the arena, which
	// a huge word would grow to its size (allocating about twice that).
	own bool
}

// batchWords is the words a batch holds before it calls fn.
const batchWords = 256

// arenaBytes is the capacity of a batch's arena: room for 16 bytes a word
// at half of it.
const arenaBytes = 2 * 16 * batchWords

func newBatch(fn func(words [][]byte)) *batch {
	return &batch{ws: make([][]byte, 0, batchWords), arena: make([]byte, 0, arenaBytes), fn: fn}
}

// release drops what the batch holds of the last words, once flushed: the
// words' slices, which may point into a buffer about to be dropped (a
// long word's), and an arena that a long word grew.
func (b *batch) release() {
	clear(b.ws[:cap(b.ws)])
	if cap(b.arena) > arenaBytes {
		b.arena = make([]byte, 0, arenaBytes)
	}
}

// add adds a word, which stays unchanged until the batch is flushed.
func (b *batch) add(w []byte) {
	b.ws = append(b.ws, w)
	if len(b.ws) == batchWords || 2*len(b.arena) > cap(b.arena) {
		b.flush()
	}
}

// flush calls fn with the words added since the last flush, if any.
func (b *batch) flush() {
	if len(b.ws) > 0 {
		b.fn(b.ws)
	}
	b.ws, b.arena = b.ws[:0], b.arena[:0]
}

// words adds every word of text (see Words) to the batch. It does not
// flush: the words added (slices of text or of the batch's arena) stay
// valid until the batch is flushed and text is reused. A word of up to
// 16 ASCII bytes has a capacity of at least 8 (reduce.CountTable reads a
// short word as one machine word).
//
// Text is read 64 bytes at a time: two bit masks say which bytes are
// ASCII letters or digits and which are 0x80 or more, and each run of
// such bytes ended by an ASCII separator within the block is a word (of
// ASCII bytes only: the most words of most texts, lower-cased in one or
// two registers) or bytes to read rune by rune (step). A word's end no longer
// depends on the one before it, so the words of a block are found in
// parallel rather than one after the other.
func (b *batch) words(text []byte) {
	n := len(text)
	p := 0
	for p+blockText+16 <= n { // room to read 16 bytes at the block's end
		var alnum, high, anyHigh uint64
		for k := 0; k < blockText; k += 8 {
			x := binary.LittleEndian.Uint64(text[p+k:])
			alnum |= pack(alnumBytes(x)) << k
			anyHigh |= x & highs
		}
		if anyHigh != 0 {
			for k := 0; k < blockText; k += 8 {
				high |= pack(binary.LittleEndian.Uint64(text[p+k:])&highs) << k
			}
		}
		runs := alnum | high
		// A run starts where its byte is in and the byte before is not,
		// and ends at the first byte after it that is not: the i-th end is
		// the i-th start's, found without the run before it.
		starts := runs &^ (runs << 1)
		ends := ^runs & (runs << 1)
		ws, arena := b.ws, b.arena // in registers: calls are for rare words
		for ends != 0 {
			s := bits.TrailingZeros64(starts)
			starts &= starts - 1
			e := bits.TrailingZeros64(ends)
			ends &= ends - 1
			l := e - s
			// (Shift counts masked to 63, which they are below, spare the
			// compiler's checks for larger ones.)
			if l <= 16 && high>>(s&63)&(1<<(l&63)-1) == 0 {
				// An ASCII word of up to 16 bytes: lower-cased in one or
				// two registers (bytes past it masked off) and copied to
				// the arena, without a branch on its case.
				t := text[p+s : p+s+16]
				x0 := binary.LittleEndian.Uint64(t)
				a := len(arena)
				if l <= 8 { // flushed at half its capacity: room for 16 bytes
					x0 = (x0 + upperBytes(x0)>>2) & (^uint64(0) >> ((64 - 8*l) & 63))
					arena = arena[:a+8]
					binary.LittleEndian.PutUint64(arena[a:], x0)
				} else {
					x1 := binary.LittleEndian.Uint64(t[8:])
					x0 += upperBytes(x0) >> 2
					x1 = (x1 + upperBytes(x1)>>2) & (^uint64(0) >> ((128 - 8*l) & 63))
					arena = arena[:a+16]
					binary.LittleEndian.PutUint64(arena[a:], x0)
					binary.LittleEndian.PutUint64(arena[a+8:], x1)
				}
				ws = append(ws, arena[a:a+l])
			} else {
				b.ws, b.arena = ws, arena
				if high>>s&(1<<l-1) != 0 {
					for i := p + s; i < p+e; {
						i = b.step(text, i)
					}
				} else {
					b.ascii(text, p+s, p+e)
				}
				ws, arena = b.ws, b.arena
			}
			if len(ws) == batchWords || 2*len(arena) > cap(arena) {
				b.ws, b.arena = ws, arena
				b.flush()
				ws, arena = b.ws, b.arena
			}
		}
		b.ws, b.arena = ws, arena
		switch {
		case starts == 0:
			p += blockText
		case starts&1 == 0:
			p += bits.TrailingZeros64(starts) // a run that may go on: the block after starts with it
		default: // a run of the whole block
			i := p
			for i < p+blockText {
				i = b.step(text, i)
			}
			p = i
		}
	}
	for p < n {
		p = b.step(text, p)
	}
}

// blockText is the bytes words reads at a time: one bit each in a mask.
const blockText = 64

// ascii adds the word text[s:e] of more than 16 ASCII letters and digits,
// lower-cased (in place if the batch owns text). text has 8 bytes from e
// on.
func (b *batch) ascii(text []byte, s, e int) {
	var up uint64
	for q := s; q < e; q += 8 {
		u := upperBytes(binary.LittleEndian.Uint64(text[q:]))
		if e-q < 8 {
			u &= ^uint64(0) >> (64 - 8*(e-q))
		}
		up |= u
	}
	if up == 0 || b.own {
		for k := s; up != 0 && k < e; k++ {
			if c := text[k]; 'A' <= c && c <= 'Z' {
				text[k] = c + ('a' - 'A')
			}
		}
		b.add(text[s:e])
		return
	}
	a := len(b.arena)
	b.arena = append(b.arena, text[s:e]...)
	w := b.arena[a:]
	for k, c := range w {
		if 'A' <= c && c <= 'Z' {
			w[k] = c + ('a' - 'A')
		}
	}
	b.add(w)
}

// pack gathers the high bits of x's bytes into the low 8 bits, byte k's
// into bit k.
func pack(x uint64) uint64 {
	return (x >> 7) * 0x0102040810204080 >> 56
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080 // the high bit of every byte
)

// alnumBytes returns the high bit of each byte of x (8 bytes of text,
// little-endian) that is an ASCII letter or digit; bytes of 0x80 or more
// give 0.
func alnumBytes(x uint64) uint64 {
	x7 := x &^ highs
	l := x7 | 0x20*ones                           // letters folded to lower case
	letter := (l + 0x1f*ones) &^ (l + 0x05*ones)  // 'a' <= l < '{'
	digit := (x7 + 0x50*ones) &^ (x7 + 0x46*ones) // '0' <= x7 < ':'
	return (letter | digit) &^ x & highs
}

// upperBytes returns the high bit of each byte of x that is an ASCII
// upper-case letter: x + upperBytes(x)>>2 lower-cases them.
func upperBytes(x uint64) uint64 {
	x7 := x &^ highs
	return (x7 + 0x3f*ones) &^ (x7 + 0x25*ones) &^ x & highs // 'A' <= x7 < '['
}

// step reads text from i, a word's first byte or a separator, rune by
// rune: it adds the word that starts at i, if one does, and returns the
// position after it (after the separator at i, if not).
func (b *batch) step(text []byte, i int) int {
	n := len(text)
	switch class[text[i]] {
	case sep:
		return i + 1
	case multi:
		r, w := utf8.DecodeRune(text[i:])
		if !isWordRune(r) {
			return i + w
		}
	}
	// A word starts at i. While copied is false, text[start:i] is the
	// lower-cased word; once true, the word is the arena's bytes from a
	// followed by the verbatim bytes text[from:i].
	start, from := i, i
	copied := false
	a := len(b.arena)
word:
	for i < n {
		switch class[text[i]] {
		case low:
			i++
			// In a long word (a huge one), runs of lower-case ASCII
			// letters and digits 8 bytes at a time.
			for i-start >= 32 && i+8 <= n {
				if x := binary.LittleEndian.Uint64(text[i:]); alnumBytes(x) != highs || upperBytes(x) != 0 {
					break
				}
				i += 8
			}
		case sep:
			break word
		case up:
			if b.own {
				// Lower-cased in place: text[from:i] stays verbatim
				// for the arena, if the word goes there.
				text[i] += 'a' - 'A'
				i++
				continue
			}
			if !copied {
				b.arena = append(b.arena, text[start:i]...)
				copied = true
			} else {
				b.arena = append(b.arena, text[from:i]...)
			}
			b.arena = append(b.arena, text[i]+('a'-'A'))
			i++
			from = i
		default:
			r, w := utf8.DecodeRune(text[i:])
			if !isWordRune(r) {
				break word
			}
			if lr := unicode.ToLower(r); lr != r {
				if !copied {
					b.arena = append(b.arena, text[start:i]...)
					copied = true
				} else {
					b.arena = append(b.arena, text[from:i]...)
				}
				b.arena = utf8.AppendRune(b.arena, lr)
				i += w
				from = i
				continue
			}
			i += w
		}
	}
	if copied {
		b.arena = append(b.arena, text[from:i]...)
		b.add(b.arena[a:])
	} else {
		b.add(text[start:i])
	}
	return i
}

// safeEnd returns the end of the longest prefix of text (which starts at a
// rune boundary) that ends just after a separator, so that text can be cut
// there without splitting a word or a rune; 0 if there is none.
func safeEnd(text []byte) int {
	for i := len(text) - 1; i >= 0; i-- {
		if class[text[i]] == sep {
			return i + 1
		}
	}
	// No ASCII separator: decode forward for the last non-word rune.
	end := 0
	for i := 0; i < len(text); {
		if !utf8.FullRune(text[i:]) {
			break // may be completed by the next bytes
		}
		r, w := utf8.DecodeRune(text[i:])
		i += w
		if !isWordRune(r) {
			end = i
		}
	}
	return end
}

// cutIn finds the cut for the nominal offset o in b, a window of the file
// that starts at least 3 bytes before o (or at the file start) and ends at
// the file end if eof: the position just after the first non-word rune at
// or after the rune boundary at or after o. Both chunks that share o
// compute the same cut, so each word is counted by exactly one of them.
// It returns false if the window ends first.
func cutIn(b []byte, o int, eof bool) (int, bool) {
	p := o
	// If o is inside a valid multi-byte rune that starts before it, the
	// boundary is that rune's end. A byte that is not a continuation byte
	// always starts a rune.
	for k := 1; k <= utf8.UTFMax-1 && o-k >= 0; k++ {
		c := b[o-k]
		if c&0xC0 == 0x80 {
			continue
		}
		if c >= utf8.RuneSelf {
			if r, w := utf8.DecodeRune(b[o-k:]); (r != utf8.RuneError || w > 1) && o-k+w > o {
				p = o - k + w
			}
		}
		break
	}
	for p < len(b) {
		// ASCII letters and digits, 8 at a time: the bytes of a huge word
		// (a cut far away) are read at memory speed.
		for p+8 <= len(b) && alnumBytes(binary.LittleEndian.Uint64(b[p:])) == highs {
			p += 8
		}
		if p == len(b) {
			break
		}
		if c := class[b[p]]; c != multi {
			p++
			if c == sep {
				return p, true
			}
			continue
		}
		if !eof && !utf8.FullRune(b[p:]) {
			return 0, false
		}
		r, w := utf8.DecodeRune(b[p:])
		p += w
		if !isWordRune(r) {
			return p, true
		}
	}
	return len(b), eof
}
