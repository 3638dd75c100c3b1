package wordcount

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// oracleWords splits with the standard library: invalid bytes decode to
// utf8.RuneError, which is neither a letter nor a number.
func oracleWords(s string) []string {
	ws := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	for i, w := range ws {
		ws[i] = strings.Map(unicode.ToLower, w)
	}
	return ws
}

func words(text string) []string {
	var out []string
	Words([]byte(text), func(w []byte) { out = append(out, string(w)) })
	return out
}

func TestWords(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ,.! ", nil},
		{"Hello HELLO hello", []string{"hello", "hello", "hello"}},
		{"it's 42 x2 3.14", []string{"it", "s", "42", "x2", "3", "14"}},
		{"Éclair STRAßE naïve", []string{"éclair", "straße", "naïve"}},
		{"数据,数据 ΣΊΣΥΦΟΣ", []string{"数据", "数据", "σίσυφοσ"}},
		{"ab\xffcd\xe6\x95xy", []string{"ab", "cd", "xy"}},                                 // invalid bytes separate
		{"a\xe6\x95\xb0b", []string{"a数b"}},                                                // a valid rune joins
		{"snake_case-word", []string{"snake", "case", "word"}},                             // _ and - separate
		{"x²³ ٣٤ Ⅻ", []string{"x²³", "٣٤", "ⅻ"}},                                           // numbers of all kinds
		{"\uFFFDword\uFFFD", []string{"word"}},                                             // a valid U+FFFD separates
		{"MiXeD" + strings.Repeat("Z", 100), []string{"mixed" + strings.Repeat("z", 100)}}, // longer than the stack buffer
	} {
		if got := words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q; want %q", tt.in, got, tt.want)
		}
		if got := oracleWords(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("oracle(%q) = %q; want %q (the test is wrong)", tt.in, got, tt.want)
		}
	}
}

// randomText draws bytes from pieces that exercise every path: ASCII,
// upper case, multi-byte letters, separators, numbers and invalid bytes.
func randomText(rng *rand.Rand, n int) string {
	pieces := []string{"a", "Z", "q", "7", " ", " ", ",", "\n", "é", "É", "ß", "数", "据", "Σ", "—", "²", "\xff", "\xe6\x95", "\x80", "\uFFFD", "İ", "ǅ",
		// ASCII runs about the 8 bytes Words reads at once, and the
		// separators next to letters and digits in ASCII order.
		"hello", "WORLD", "abcdefg", "abcdefgh", "Abcdefghijklmnopq", "x1y2z3w4v5", "@", "[", "`", "{", "/", ":", "_", "\x7f", "\x00"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

func TestWordsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		s := randomText(rng, rng.IntN(120))
		if got, want := words(s), oracleWords(s); !slices.Equal(got, want) {
			t.Fatalf("Words(%q) = %q; want %q", s, got, want)
		}
	}
}

// TestWordsEveryByte puts every byte value at every position of a run of
// letters longer than the 8 bytes Words reads at once, and at the end of
// the text, where Words goes rune by rune.
func TestWordsEveryByte(t *testing.T) {
	const run = "abcdefghijklmnopqrsTUVWXYZ0123456789"
	for b := range 256 {
		for p := range len(run) + 1 {
			for _, s := range []string{run[:p] + string(rune(b)) + run[p:], run[:p] + string([]byte{byte(b)}) + run[p:], run[:p] + string([]byte{byte(b)})} {
				if got, want := words(s), oracleWords(s); !slices.Equal(got, want) {
					t.Fatalf("Words(%q) = %q; want %q", s, got, want)
				}
			}
		}
	}
}

func FuzzWords(f *testing.F) {
	for _, s := range []string{"Hello HELLO hello", "ab\xffcd", "数据 ΣΊΣΥΦΟΣ", "x²³", "İstanbul"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := words(s), oracleWords(s); !slices.Equal(got, want) {
			t.Fatalf("Words(%q) = %q; want %q", s, got, want)
		}
		// Cutting at safeEnd or cutIn never changes the words.
		b := []byte(s)
		if e := safeEnd(b); e > 0 {
			if got, want := append(words(s[:e]), words(s[e:])...), oracleWords(s); !slices.Equal(got, want) {
				t.Fatalf("cut %q at safeEnd %d: %q; want %q", s, e, got, want)
			}
		}
		for o := 0; o <= len(b); o++ {
			p, ok := cutIn(b, o, true)
			if !ok {
				t.Fatalf("cutIn(%q, %d, eof) not found", s, o)
			}
			if got, want := append(words(s[:p]), words(s[p:])...), oracleWords(s); !slices.Equal(got, want) {
				t.Fatalf("cut %q at cutIn(%d) = %d: %q; want %q", s, o, p, got, want)
			}
		}
	})
}

func TestCutRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		s := randomText(rng, 1+rng.IntN(40))
		b := []byte(s)
		prev := 0
		for o := 0; o <= len(b); o++ {
			p, _ := cutIn(b, o, true)
			if o > 0 && o < len(b) && p < prev {
				t.Fatalf("cutIn(%q) not monotonic at %d: %d < %d", s, o, p, prev)
			}
			prev = p
			if got, want := append(words(s[:p]), words(s[p:])...), oracleWords(s); !slices.Equal(got, want) {
				t.Fatalf("cut %q at cutIn(%d) = %d: %q; want %q", s, o, p, got, want)
			}
		}
	}
}
