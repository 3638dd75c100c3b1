package spamcount

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"unicode"
	"unicode/utf8"

	"github.com/pgasmr/pgasmr/mr"
)

//go:embed words.txt
var defaultWords []byte

// DefaultWords returns the built-in list of 256 words related to malware
// and spam, in list order. The slice is the caller's.
func DefaultWords() []string {
	ws, err := ParseWords(defaultWords)
	if err != nil {
		panic("spamcount: built-in word list: " + err.Error()) // checked by the tests
	}
	return ws
}

// ParseWords parses a word list: one word per line; blank lines and lines
// starting with '#' are ignored, and spaces around a word are trimmed.
// Every word must be unique and a single lower-case token under the word
// rule (a run of letters and numbers, already lower-cased), so that it can
// be matched at all; otherwise ParseWords returns an error naming the line.
func ParseWords(data []byte) ([]string, error) {
	var ws []string
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		w := string(bytes.TrimSpace(sc.Bytes()))
		if w == "" || w[0] == '#' {
			continue
		}
		if !isToken(w) {
			return nil, fmt.Errorf("spamcount: word list line %d: %q is not a single lower-case word (letters and numbers only)", line, w)
		}
		if prev, ok := seen[w]; ok {
			return nil, fmt.Errorf("spamcount: word list line %d: %q repeats line %d", line, w, prev)
		}
		seen[w] = line
		ws = append(ws, w)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("spamcount: word list: %w", err)
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("spamcount: word list has no words")
	}
	return ws, nil
}

// isToken reports whether w is valid UTF-8 made only of letters and numbers
// that unicode.ToLower leaves unchanged.
func isToken(w string) bool {
	if w == "" || !utf8.ValidString(w) {
		return false
	}
	for _, r := range w {
		if !(unicode.IsLetter(r) || unicode.IsNumber(r)) || unicode.ToLower(r) != r {
			return false
		}
	}
	return true
}

// loadWords returns the word list of o: the file o.WordsFile, or the
// built-in list.
func loadWords(o Options) ([]string, error) {
	if o.WordsFile == "" {
		return DefaultWords(), nil
	}
	// A FIFO or device would block the open or never end: refuse it
	// before opening, as every input path does.
	if _, err := mr.StatRegular(o.WordsFile); err != nil {
		return nil, fmt.Errorf("spamcount: %w", err)
	}
	data, err := os.ReadFile(o.WordsFile)
	if err != nil {
		return nil, fmt.Errorf("spamcount: %w", err)
	}
	ws, err := ParseWords(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, o.WordsFile)
	}
	return ws, nil
}

// matcher finds the listed words in text under the word rule. A matcher
// belongs to one goroutine.
type matcher struct {
	index   map[string]int32 // word → position in the list
	maxLen  int              // longest word in bytes
	counts  []int64          // occurrences in the current message, by word
	touched []int32          // words with counts > 0
	buf     []byte           // the current token, lower-cased
}

func newMatcher(words []string) *matcher {
	m := &matcher{index: make(map[string]int32, len(words)), counts: make([]int64, len(words))}
	for i, w := range words {
		m.index[w] = int32(i)
		m.maxLen = max(m.maxLen, len(w))
	}
	return m
}

// add counts the listed words of text. A word is a maximal run of runes
// for which unicode.IsLetter or unicode.IsNumber holds, lower-cased rune by
// rune; invalid UTF-8 bytes separate words.
func (m *matcher) add(text []byte) {
	buf := m.buf[:0]
	long := false // the token is longer than every listed word
	for i := 0; i < len(text); {
		c := text[i]
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				buf, long = m.end(buf, long)
				i++
				continue
			}
			i++
			if !long {
				if len(buf) < m.maxLen {
					buf = append(buf, c)
				} else {
					long = true
				}
			}
			continue
		}
		r, size = utf8.DecodeRune(text[i:])
		i += size
		if r == utf8.RuneError && size == 1 || !(unicode.IsLetter(r) || unicode.IsNumber(r)) {
			buf, long = m.end(buf, long)
			continue
		}
		if !long {
			r = unicode.ToLower(r)
			if len(buf)+utf8.RuneLen(r) <= m.maxLen {
				buf = utf8.AppendRune(buf, r)
			} else {
				long = true
			}
		}
	}
	m.buf, _ = m.end(buf, long)
}

// end closes the current token.
func (m *matcher) end(buf []byte, long bool) ([]byte, bool) {
	if len(buf) > 0 && !long {
		if i, ok := m.index[string(buf)]; ok {
			if m.counts[i] == 0 {
				m.touched = append(m.touched, i)
			}
			m.counts[i]++
		}
	}
	return buf[:0], false
}

// flush calls f for every word found since the last flush, in the order
// first found, and forgets them.
func (m *matcher) flush(f func(word int32, n int64)) {
	for _, i := range m.touched {
		f(i, m.counts[i])
		m.counts[i] = 0
	}
	m.touched = m.touched[:0]
}
