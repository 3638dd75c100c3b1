package wordcount

import (
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
	var stack [64]byte
	lower := stack[:0]
	n := len(text)
	for i := 0; i < n; {
		// Skip separators.
		switch class[text[i]] {
		case sep:
			i++
			continue
		case multi:
			r, w := utf8.DecodeRune(text[i:])
			if !isWordRune(r) {
				i += w
				continue
			}
		}
		// A word starts at i. While copied is false, text[start:i] is the
		// lower-cased word; once true, the word is lower followed by the
		// verbatim bytes text[from:i].
		start, from := i, i
		copied := false
	word:
		for i < n {
			switch class[text[i]] {
			case low:
				i++
			case sep:
				break word
			case up:
				if !copied {
					lower = append(lower[:0], text[start:i]...)
					copied = true
				} else {
					lower = append(lower, text[from:i]...)
				}
				lower = append(lower, text[i]+('a'-'A'))
				i++
				from = i
			default:
				r, w := utf8.DecodeRune(text[i:])
				if !isWordRune(r) {
					break word
				}
				if lr := unicode.ToLower(r); lr != r {
					if !copied {
						lower = append(lower[:0], text[start:i]...)
						copied = true
					} else {
						lower = append(lower, text[from:i]...)
					}
					lower = utf8.AppendRune(lower, lr)
					i += w
					from = i
					continue
				}
				i += w
			}
		}
		if copied {
			lower = append(lower, text[from:i]...)
			fn(lower)
		} else {
			fn(text[start:i])
		}
	}
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
