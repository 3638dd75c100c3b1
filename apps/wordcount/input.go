package wordcount

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pgasmr/pgasmr/internal/zio"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
)

// headBytes is how much of a file's start is searched for a NUL byte.
const headBytes = 8 << 10

// blockBytes is the read size of the streaming tokenizer; the context is
// checked once per block.
const blockBytes = 1 << 20

// keepBytes is the longest word read into the reader's buffer, which
// keeps its size for the chunk's other blocks; a longer one is read into
// a buffer of its own size, dropped once it is counted.
const keepBytes = 4 * blockBytes

// blockSlack is room past a chunk's nominal bytes in a buffer sized to
// the chunk: its cut ends move to word boundaries.
const blockSlack = 4 << 10

// Skip is an input file that was not counted because it could not be
// listed or read.
type Skip = mr.Skip

// list expands paths into the regular files under them (mr.ListFiles;
// with a rank, collectively: mr.AllListFiles), sorted by path without
// duplicates. A path that cannot be listed, or that
// is neither a directory nor a regular file (a FIFO, a device: refused
// before it is opened), is an error naming it, or with skip a Skip.
func list(ctx context.Context, r *pgas.Rank, paths []string, skip bool) ([]mr.File, []Skip, error) {
	lo := mr.ListOptions{SkipUnreadable: skip}
	var files []mr.File
	var skipped []Skip
	var err error
	if r != nil {
		files, skipped, err = mr.AllListFiles(ctx, r, paths, lo)
	} else {
		files, skipped, err = mr.ListFiles(ctx, paths, lo)
	}
	var le *mr.ListError
	var nr *mr.NotRegularError
	switch {
	case errors.As(err, &le) && errors.As(le.Err, &nr):
		return nil, nil, fmt.Errorf("wordcount: %w", nr) // it names the path
	case le != nil:
		return nil, nil, fmt.Errorf("wordcount: input %s: %w", le.Path, le.Err)
	case err != nil:
		return nil, nil, err
	}
	slices.SortFunc(files, func(a, b mr.File) int { return strings.Compare(a.Path, b.Path) })
	files = slices.CompactFunc(files, func(a, b mr.File) bool { return a.Path == b.Path })
	return files, skipped, nil
}

// chunk is a nominal byte range [off, off+n) of a file: it counts the words
// that start in [cut(off), cut(off+n)).
type chunk struct {
	path       string
	size       int64 // the file's size
	off, n     int64
	firstChunk bool
	idx        int64 // index in the job's chunk list
}

// chunks cuts files into chunks of at most size bytes; an empty file gives
// one empty chunk, and a file named as compressed (zio.ByName) one chunk
// of its compressed size: a compressed stream is read from its start.
func chunks(files []mr.File, size int64) []chunk {
	var cs []chunk
	for _, f := range files {
		if f.Size == 0 {
			cs = append(cs, chunk{path: f.Path, firstChunk: true})
			continue
		}
		step := size
		if zio.ByName(f.Path) != zio.None {
			step = f.Size
		}
		for off := int64(0); off < f.Size; off += step {
			cs = append(cs, chunk{path: f.Path, size: f.Size, off: off, n: min(step, f.Size-off), firstChunk: off == 0})
		}
	}
	return cs
}

// chunkInput is the mr.Input of a job: chunks weighted by length, each
// with its index in the job's chunk list (a resumed job maps only the
// chunks its checkpoint lacks).
type chunkInput struct{ cs []chunk }

func (in *chunkInput) Len() int64 { return int64(len(in.cs)) }

func (in *chunkInput) At(_ context.Context, i int64) (chunk, error) { return in.cs[i], nil }

func (in *chunkInput) Weight(i int64) float64 { return float64(in.cs[i].n) }

func (in *chunkInput) Hash() uint64 {
	h := fnv.New64a()
	var b []byte
	for _, c := range in.cs {
		b = binary.LittleEndian.AppendUint64(b[:0], uint64(len(c.path)))
		b = append(b, c.path...)
		b = binary.LittleEndian.AppendUint64(b, uint64(c.off))
		b = binary.LittleEndian.AppendUint64(b, uint64(c.n))
		h.Write(b)
	}
	return h.Sum64()
}

// status is what counting a chunk found.
type status int

const (
	counted    status = iota
	binaryFile        // a NUL in the first 8 KiB: nothing counted
	unreadable        // open or read failed and skipping was asked for
)

// reader counts chunks; it keeps its buffer between chunks. It belongs to
// one goroutine.
type reader struct {
	b    *batch // the words of a block, for add
	buf  []byte
	win  []byte
	skip bool
	// span is the last long cut found (cutBefore): the cut of every
	// offset in [from, to] of the file is at, so the chunks inside a huge
	// word that a rank takes after the one that found its end learn that
	// they own no word without reading it again.
	span struct {
		name         string
		size         int64
		from, to, at int64
	}
	// block, if not nil, is called after each block's words (Run hands
	// its table to the store there when the table is at the budget).
	block func() error
}

// count tokenizes chunk c, calling add with every word, many at a time
// (add must not retain them). With r.skip, a file
// that cannot be read gives status unreadable and the error as the reason
// (words of the chunk counted before a failed read stay counted);
// otherwise the error is returned, naming the file.
func (r *reader) count(ctx context.Context, c chunk, add func([][]byte)) (status, string, error) {
	st, err := r.countFile(ctx, c, add)
	if err == nil {
		var last int64
		if c.off+c.n == c.size {
			last = 1 // the file's last chunk
		}
		mr.ProgressFrom(ctx).Add(last, c.n)
	}
	switch {
	case err == nil:
		return st, "", nil
	case ctx.Err() != nil:
		return st, "", err
	case r.skip:
		reason := err.Error()
		if ce := (*zio.CorruptError)(nil); errors.As(err, &ce) {
			reason = strings.TrimPrefix(ce.Error(), ce.Path+": ") // the path is the Skip's
		}
		return unreadable, reason, nil
	}
	return st, "", err
}

func (r *reader) countFile(ctx context.Context, c chunk, add func([][]byte)) (status, error) {
	if err := ctx.Err(); err != nil {
		return counted, err
	}
	defer r.shrink()
	f, err := os.Open(c.path)
	if err != nil {
		return counted, fmt.Errorf("wordcount: %w", err) // *PathError names the file
	}
	defer f.Close()
	// A block, or less for a smaller chunk: with many ranks in a process
	// and small files, a 1 MiB buffer a rank was most of a job's memory.
	// (stream grows it for a word longer than it.)
	if need := int(min(blockBytes, max(headBytes, c.n+blockSlack))); cap(r.buf) < need {
		r.buf = make([]byte, need)
	}
	r.buf = r.buf[:cap(r.buf)]
	head := r.buf[:min(headBytes, c.size)]
	if err := readAt(f, head, 0); err != nil {
		return counted, err
	}
	format, err := zio.DetectHead(c.path, head)
	if err != nil {
		return counted, fmt.Errorf("wordcount: %w", err) // it names the file
	}
	if format != zio.None {
		if c.off > 0 {
			// Compressed content under a name that does not say so, cut
			// into chunks: its first chunk reads it all.
			return counted, nil
		}
		return r.streamCompressed(ctx, f, c.path, format, add)
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return binaryFile, nil
	}
	// The start's cut is looked for within the chunk (and a rune past
	// it) only: a chunk inside one long word owns no word, and finding
	// that must not cost a scan to the word's end, or a file of one
	// huge word costs every chunk the rest of it (quadratic).
	lo, ok, err := r.cutBefore(f, c.size, c.off, c.off+c.n+utf8.UTFMax+1)
	if err != nil || !ok {
		return counted, err
	}
	hi, err := r.cut(f, c.size, c.off+c.n)
	if err != nil {
		return counted, err
	}
	return counted, r.stream(ctx, f, c.size, lo, hi, c.off+c.n, add)
}

// shrink drops a buffer that a long word of a compressed file grew past
// a block, once the file is counted.
func (r *reader) shrink() {
	if cap(r.buf) > blockBytes {
		r.buf = nil
		if r.b != nil {
			r.b.release()
		}
	}
}

// stream tokenizes the bytes [lo, hi) of f, a file of size bytes, which
// start and end at word boundaries, reading a block at a time; hi is the
// cut of the nominal offset end.
//
// A word longer than the buffer is read whole, after its end is looked
// for in windows of cutBlock bytes (cutBefore), no further than end: a
// word that goes on past end ends at hi, which the chunk has found
// already. One longer than keepBytes is read into a buffer of its own
// size, dropped once it is counted. (Growing the buffer by doubling until
// the word fit allocated up to four times the word, and scanned it again
// at every doubling in safeEnd.)
func (r *reader) stream(ctx context.Context, f *os.File, size, lo, hi, end int64, add func([][]byte)) error {
	if r.b == nil {
		r.b = newBatch(nil)
		r.b.own = true // the buffer's words are lower-cased in place
	}
	r.b.fn = add
	carry := 0
	for pos := lo; pos < hi; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(len(r.buf)-carry), hi-pos)
		// A word longer than the buffer is read to its cut, whole: into a
		// buffer of its own if it is huge (small keeps the buffer for the
		// blocks after it), or else into the buffer, at least doubled.
		atCut := false
		var small []byte
		if carry == len(r.buf) {
			e, err := r.wordEnd(f, size, pos, hi, end)
			if err != nil {
				return err
			}
			n, atCut = e-pos, true
			need := int64(carry) + n
			if need > math.MaxInt {
				return fmt.Errorf("wordcount: %s: a word of more than %d bytes at offset %d", f.Name(), math.MaxInt, pos-int64(carry))
			}
			if need > keepBytes {
				small = r.buf
				r.buf = make([]byte, need)
				copy(r.buf, small)
			} else {
				r.buf = append(r.buf, make([]byte, max(int(need), 2*len(r.buf))-carry)...)
				r.buf = r.buf[:cap(r.buf)]
			}
		}
		if err := readAt(f, r.buf[carry:carry+int(n)], pos); err != nil {
			return err
		}
		pos += n
		data := r.buf[:carry+int(n)]
		cut := len(data)
		if pos < hi && !atCut {
			cut = safeEnd(data)
		}
		r.b.words(data[:cut])
		r.b.flush() // before the buffer is reused
		if small != nil {
			// The huge word is counted: its buffer goes, and nothing the
			// batch keeps points into it.
			r.b.release()
			r.buf = small
		}
		carry = copy(r.buf, data[cut:])
		if r.block != nil {
			if err := r.block(); err != nil {
				return err
			}
		}
	}
	return nil
}

// wordEnd returns the cut of offset pos (a word longer than the buffer
// ends just before it), at most hi: the cut of the chunk's nominal end
// end, which is also the cut of every offset from pos to end if the one
// of pos is not found before end plus a rune (see cutBefore).
func (r *reader) wordEnd(f *os.File, size, pos, hi, end int64) (int64, error) {
	e, ok, err := r.cutBefore(f, size, pos, min(hi, max(pos, end)+utf8.UTFMax+1))
	if err != nil {
		return 0, err
	}
	if !ok {
		return hi, nil
	}
	return e, nil
}

// streamCompressed tokenizes the decompressed contents of f, the file
// path of the given format, not read yet (but with ReadAt), reading a
// block at a time. A NUL in its first 8 KiB makes it binary, as for a file
// that is not compressed. Words before bad data (a truncated file) are
// counted, as before any failed read.
func (r *reader) streamCompressed(ctx context.Context, f *os.File, path string, format zio.Format, add func([][]byte)) (status, error) {
	zr, err := zio.NewNamedReader(f, path, format)
	if err != nil {
		return counted, fmt.Errorf("wordcount: %w", err) // it names the file
	}
	defer zr.Close() // f is closed by the caller
	if r.b == nil {
		r.b = newBatch(nil)
		r.b.own = true // the buffer's words are lower-cased in place
	}
	r.b.fn = add
	carry := 0
	for first := true; ; first = false {
		if err := ctx.Err(); err != nil {
			return counted, err
		}
		if carry == len(r.buf) { // one word longer than the buffer
			r.buf = append(r.buf, make([]byte, len(r.buf))...)
			r.buf = r.buf[:cap(r.buf)]
		}
		n, err := io.ReadFull(zr, r.buf[carry:]) // len(r.buf) >= headBytes
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		data := r.buf[:carry+n]
		if first && bytes.IndexByte(data[:min(len(data), headBytes)], 0) >= 0 {
			return binaryFile, nil
		}
		end := len(data)
		if !eof {
			end = safeEnd(data)
		}
		if err != nil && !eof {
			// Bad data: the words that end before it are counted, the
			// same ones whatever the buffer's size.
			r.b.words(data[:end])
			r.b.flush()
			return counted, fmt.Errorf("wordcount: %w", err) // it names the file
		}
		r.b.words(data[:end])
		r.b.flush() // before the buffer is reused
		carry = copy(r.buf, data[end:])
		if r.block != nil {
			if err := r.block(); err != nil {
				return counted, err
			}
		}
		if eof {
			return counted, nil
		}
	}
}

// cut returns the cut position of nominal offset o in f (see cutIn): 0 at
// the start, size at the end.
func (r *reader) cut(f *os.File, size, o int64) (int64, error) {
	p, _, err := r.cutBefore(f, size, o, size)
	return p, err
}

// cutBlock is the most bytes cut reads at once.
const cutBlock = 64 << 10

// cutBefore is cut reading no further than limit: ok is false if the cut
// is not found before it. A cut past o+utf8.UTFMax+1 ends a separator that
// starts after o+1, so the cut of any offset in between is the same: a
// chunk [o, o+n) whose start's cut is not found before o+n+utf8.UTFMax+1
// owns no word. The limit is at least a rune past o (o+utf8.UTFMax+1, or
// a cut after o), so that the rune o is inside of is read whole.
func (r *reader) cutBefore(f *os.File, size, o, limit int64) (int64, bool, error) {
	if o <= 0 || o >= size {
		return min(max(o, 0), size), true, nil
	}
	limit = min(limit, size)
	if sp := &r.span; sp.name == f.Name() && sp.size == size && sp.from <= o && o <= sp.to {
		return sp.at, sp.at <= limit, nil
	}
	// Windows of cutBlock bytes at most, each starting 3 bytes before
	// where its search starts (cutIn's look back into a rune), and each
	// search after the first starting utf8.UTFMax bytes before the last
	// window's end: a rune cut off by that end is read whole, and one
	// skipped there ended inside the last window and was no separator.
	// So a cut far away (the end of a huge word) is found in one pass of
	// bounded memory.
	from := o
	for {
		start := max(0, from-3)
		end := min(limit, from+cutBlock)
		if int64(cap(r.win)) < end-start {
			r.win = make([]byte, end-start)
		}
		b := r.win[:end-start]
		if err := readAt(f, b, start); err != nil {
			return 0, false, err
		}
		if p, ok := cutIn(b, int(from-start), end == size); ok {
			at := start + int64(p)
			if at-o > cutBlock {
				// Every offset from o to the start of the separator that
				// ends at at (utf8.UTFMax before at, or later) has the
				// cut at: the runes in between are a word's.
				r.span.name, r.span.size = f.Name(), size
				r.span.from, r.span.to, r.span.at = o, at-utf8.UTFMax, at
			}
			return at, true, nil
		}
		if end == limit {
			return 0, false, nil
		}
		from = end - utf8.UTFMax
	}
}

func readAt(f *os.File, b []byte, off int64) error {
	if _, err := f.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the file shrank since it was listed
		}
		return fmt.Errorf("wordcount: reading %d bytes of %s at offset %d: %w", len(b), f.Name(), off, err)
	}
	return nil
}
