package wordcount

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// common are the most frequent English words, at the head of the Zipf
// vocabulary.
var common = strings.Fields("the of and to a in is it you that he was for on are with as I his they be at one have this from or had by hot word but what some we can out other were all there when up use your how said an each she which do their time if will way about many then them write would like so these her long make thing see him two has look more day could go come did number sound no most people my over know water than call first who may down side been now find")

// foreign are non-ASCII words mixed into the vocabulary.
var foreign = strings.Fields("é café naïve straße ß über 数据 東京 λόγος москва données señor ½ 2024 1999 déjà Ωmega ǅemal")

// letters are drawn for made-up words, roughly by English frequency.
const letters = "eeeeeeeeeeeetttttttttaaaaaaaaooooooooiiiiiiinnnnnnnsssssshhhhhhrrrrrrddddllllcccuuummwwffggyyppbbvkjxqz"

// wordLen draws a word length with a mean near 5 and a long tail.
func wordLen(rng *rand.Rand) int {
	lens := [...]int{2, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 8, 8, 9, 10, 11, 12, 13, 15}
	return lens[rng.IntN(len(lens))]
}

// Generate writes a text corpus of about totalBytes bytes (each file
// ends with its first complete line at or past its share) in files files
// under dir, in nested directories (dir/dNN/dNN/fileNNNN.txt): words from
// a Zipf-distributed vocabulary (the commonest English words first, then
// made-up words of realistic lengths and some non-ASCII words), mixed
// case, punctuation and line breaks. The output depends only on the
// arguments.
func Generate(dir string, totalBytes int64, files int, seed uint64) error {
	return GenerateVocabulary(dir, totalBytes, files, seed, DefaultVocabulary)
}

// DefaultVocabulary is Generate's vocabulary: the words its Zipf draws
// from. MinVocabulary is the least GenerateVocabulary takes: the common
// English words and the places of the non-ASCII ones among them.
const (
	DefaultVocabulary = 50000
	MinVocabulary     = 300
)

// GenerateVocabulary is Generate over a vocabulary of vocabulary words.
// Up to DefaultVocabulary it is Generate's (the same bytes for the same
// seed at DefaultVocabulary). Past it, three words in four are drawn
// uniformly from the whole vocabulary (the made-up words past the first
// DefaultVocabulary are made from a hash of their index, 6 to 12
// letters), the others from Generate's Zipf: with a vocabulary much
// larger than the corpus's words, most words occur once, a corpus of
// mostly unique tokens (log lines with ids, n-grams) for jobs whose keys
// outgrow memory.
func GenerateVocabulary(dir string, totalBytes int64, files int, seed uint64, vocabulary int64) error {
	if files < 1 || totalBytes < 0 {
		return fmt.Errorf("wordcount: Generate(%d bytes, %d files), want files >= 1 and bytes >= 0", totalBytes, files)
	}
	if vocabulary < MinVocabulary {
		return fmt.Errorf("wordcount: a vocabulary of %d words, want at least %d", vocabulary, MinVocabulary)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	vocab := slices.Clone(common)
	for len(vocab) < int(min(vocabulary, DefaultVocabulary)) {
		if rng.IntN(200) == 0 {
			vocab = append(vocab, foreign[rng.IntN(len(foreign))]+string(letters[rng.IntN(len(letters))]))
			continue
		}
		b := make([]byte, wordLen(rng))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		vocab = append(vocab, string(b))
	}
	// Shorter words are commoner: sort the made-up part by length.
	rest := vocab[len(common):]
	slices.SortStableFunc(rest, func(a, b string) int { return len(a) - len(b) })
	for i, w := range foreign { // some non-ASCII words among the frequent ones
		vocab[len(common)+10*i] = w
	}
	zipf := rand.NewZipf(rng, 1.07, 2, uint64(len(vocab)-1))
	draw := func() string { return vocab[zipf.Uint64()] }
	if vocabulary > DefaultVocabulary {
		var b []byte
		draw = func() string {
			if rng.IntN(4) == 0 {
				return vocab[zipf.Uint64()]
			}
			i := rng.Uint64N(uint64(vocabulary))
			if i < uint64(len(vocab)) {
				return vocab[i]
			}
			b = madeUp(b[:0], seed, i)
			return string(b)
		}
	}
	per := totalBytes / int64(files)
	for f := range files {
		size := per
		if f == files-1 {
			size = totalBytes - per*int64(files-1)
		}
		p := filepath.Join(dir, fmt.Sprintf("d%02d", f%7), fmt.Sprintf("d%02d", f%3), fmt.Sprintf("file%04d.txt", f))
		if err := writeText(p, size, rng, draw); err != nil {
			return err
		}
	}
	return nil
}

// madeUp appends the made-up word of index i of a vocabulary: 6 to 12
// letters drawn by English frequency from a hash of the seed and i.
func madeUp(b []byte, seed, i uint64) []byte {
	h := seed*0x9e3779b97f4a7c15 ^ i
	next := func() uint64 { // splitmix64
		h += 0x9e3779b97f4a7c15
		z := h
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
	r := next()
	n := 6 + int(r%7)
	for j := 0; j < n; j++ {
		if j%8 == 0 {
			r = next()
		}
		b = append(b, letters[int(r&0xff)%len(letters)])
		r >>= 8
	}
	return b
}

func writeText(path string, size int64, rng *rand.Rand, draw func() string) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("wordcount: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("wordcount: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("wordcount: %w", cerr)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<16)
	var line []byte
	start := true // of a sentence
	for n := int64(0); n < size; {
		word := draw()
		switch c := rng.IntN(100); {
		case c < 2:
			line = append(line, strings.ToUpper(word)...)
		case c < 10 || start:
			r, n := utf8.DecodeRuneInString(word)
			line = utf8.AppendRune(line, unicode.ToUpper(r))
			line = append(line, word[n:]...)
		default:
			line = append(line, word...)
		}
		start = false
		switch c := rng.IntN(100); {
		case c < 6:
			line = append(line, '.')
			start = true
		case c < 10:
			line = append(line, ',')
		case c == 10:
			line = append(line, '!')
			start = true
		case c == 11:
			line = append(line, '?')
			start = true
		case c == 12:
			line = append(line, ';')
		case c == 13:
			line = append(line, " -"...)
		}
		if len(line) > 60+rng.IntN(20) || n+int64(len(line)) >= size {
			line = append(line, '\n')
		} else {
			line = append(line, ' ')
		}
		if line[len(line)-1] == '\n' {
			if _, err := w.Write(line); err != nil {
				return fmt.Errorf("wordcount: %w", err)
			}
			n += int64(len(line))
			line = line[:0]
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("wordcount: %w", err)
	}
	return nil
}
