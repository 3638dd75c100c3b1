package wordcount

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pgasmr/pgasmr/reduce"
)

// A result past the memory budget. Under a budget (pgas.Config.MemoryBytes)
// the reduce builds the result from the words it streams (builder): while
// they fit in a quarter of the rank's share (mr.StoreShare) they are held
// and sorted in memory,
// as without a budget; past that they go to a store keyed by their place
// in the result (count descending, then word), which spills sorted runs
// to files, and the result reads them back merged, in order, when it is
// written (Result.Each, Result.Write), as often as it is; Result.Close
// removes them.

// wordBytes estimates a held word beyond its bytes: a WordCount (a
// string header and a count) and the slice's growth.
const wordBytes = 24 + 8

// builder builds a count's result from its words, each given once
// (add), in any order.
type builder struct {
	files
	top     int
	words   []WordCount
	held    int64 // estimated bytes of words
	budget  int64 // bytes of words held in memory (0: no bound)
	tmp     string
	total   int64
	spilled *spilledWords
}

func (b *builder) add(w string, n int64) error {
	b.total += n
	if b.spilled != nil {
		return b.spilled.add(w, n)
	}
	b.words = append(b.words, WordCount{w, n})
	b.held += wordBytes + int64(len(w))
	if b.budget <= 0 || b.held <= b.budget {
		return nil
	}
	sw, err := newSpilledWords(b.tmp, b.budget, b.top)
	if err != nil {
		return err
	}
	for _, wc := range b.words {
		if err := sw.add(wc.Word, wc.Count); err != nil {
			sw.Close()
			return err
		}
	}
	b.words, b.held, b.spilled = nil, 0, sw
	return nil
}

// result returns the result of the words added.
func (b *builder) result() *Result {
	if b.spilled == nil {
		return b.files.sorted(b.top, b.words)
	}
	r := b.files.sorted(b.top, nil)
	r.TotalWords, r.DistinctWords = b.total, b.spilled.n
	r.spilled = b.spilled
	return r
}

// spilledWords are a result's words in a store keyed by sortKey, which
// orders them as the result does.
type spilledWords struct {
	st    *reduce.Store[string, int64]
	sp    *reduce.Spill
	emit  func(string, int64)
	n     int64 // words
	top   int   // the first top are the result (0: all)
	width widths
}

func newSpilledWords(dir string, budget int64, top int) (*spilledWords, error) {
	st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
	if err != nil {
		return nil, err
	}
	sp := &reduce.Spill{Dir: dir}
	st.SetSpill(sp, budget)
	return &spilledWords{st: st, sp: sp, emit: st.Emitter(), top: top}, nil
}

// sortKey is a word's key in the store: math.MaxInt64 - count, big-endian,
// then the word, so that byte order is the result's order.
func sortKey(w string, n int64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(math.MaxInt64-n))
	return string(b[:]) + w
}

func (s *spilledWords) add(w string, n int64) error {
	s.emit(sortKey(w, n), 0)
	if err := s.st.Err(); err != nil {
		return fmt.Errorf("wordcount: %w", err)
	}
	s.n++
	s.width.widen(WordCount{w, n})
	return nil
}

// each calls f with the words in the result's order, reading the spilled
// runs back.
func (s *spilledWords) each(f func(WordCount) error) error {
	if s.st == nil {
		return errors.New("wordcount: the result's files were removed (Result.Close)")
	}
	rd, err := s.st.Stream()
	if err != nil {
		return fmt.Errorf("wordcount: %w", err)
	}
	defer rd.Close()
	var i int64
	for k := range reduce.All(rd) {
		if s.top > 0 && i >= int64(s.top) {
			break
		}
		if len(k) < 8 {
			return fmt.Errorf("wordcount: a spilled word's key of %d bytes", len(k))
		}
		n := math.MaxInt64 - int64(binary.BigEndian.Uint64([]byte(k[:8])))
		if err := f(WordCount{Word: k[8:], Count: n}); err != nil {
			return err
		}
		i++
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("wordcount: %w", err)
	}
	return nil
}

// Close removes the files.
func (s *spilledWords) Close() error {
	if s.st == nil {
		return nil
	}
	s.st.Reset()
	s.st = nil
	return s.sp.Close()
}

// sorted returns the result of files with words, which it sorts by count
// descending then word, keeping the first top (all if top is 0).
func (f *files) sorted(top int, words []WordCount) *Result {
	r := &Result{Files: f.Read, SkippedBinary: f.Binary, Unreadable: f.Unreadable, Words: words}
	slices.Sort(r.SkippedBinary)
	slices.SortFunc(r.Unreadable, func(a, b Skip) int { return strings.Compare(a.Path, b.Path) })
	for _, wc := range r.Words {
		r.TotalWords += wc.Count
	}
	r.DistinctWords = int64(len(r.Words))
	sortWords(r.Words)
	if top > 0 && len(r.Words) > top {
		r.Words = r.Words[:top:top]
	}
	return r
}

// sortWords sorts words by count descending, then word. It sorts their
// counts and word prefixes (reduce.StringPrefix) beside their indices,
// so that most comparisons read two numbers from one slice rather than
// two words' bytes: with millions of distinct words, most of them once,
// the words' bytes are all over memory.
func sortWords(words []WordCount) {
	type item struct {
		count int64
		p     uint64
		i     int32
	}
	items := make([]item, len(words))
	for i, wc := range words {
		items[i] = item{wc.Count, reduce.StringPrefix(wc.Word), int32(i)}
	}
	slices.SortFunc(items, func(a, b item) int {
		if a.count != b.count {
			return cmp.Compare(b.count, a.count)
		}
		if a.p != b.p {
			return cmp.Compare(a.p, b.p)
		}
		return strings.Compare(words[a.i].Word, words[b.i].Word)
	})
	sorted := make([]WordCount, len(words))
	for j, it := range items {
		sorted[j] = words[it.i]
	}
	copy(words, sorted)
}
