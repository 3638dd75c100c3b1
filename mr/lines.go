package mr

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/pgasmr/pgasmr/internal/zio"
)

// Line is a line of a file, read by Split.Lines.
type Line struct {
	Path string
	Off  int64  // the offset of the line's first byte in the file
	Text []byte // the line without its "\n" or "\r\n"; valid only during the call
}

// Lines calls fn with each line that starts in the split, in order: the
// split at offset 0 owns the file's first line, every other split skips
// the line in progress at its start, and every split reads past its end
// to finish its last line. The splits of a file thus read each of its
// lines exactly once, whatever their size. A line ends at '\n' or at the
// end of the file; the empty remainder after a final '\n' is not a line.
// With s.Header, the split at offset 0 skips the file's first line.
//
// A line must fit in memory. Lines stops at the first error of fn and
// returns it, naming the file and the line's offset; an error reading the
// file names it and the offset.
func (s Split) Lines(ctx context.Context, fn func(Line) error) error {
	r, err := s.reader(max(s.Off-1, 0))
	if err != nil {
		return err
	}
	return r.close(r.lines(ctx, fn))
}

func (r *splitReader) lines(ctx context.Context, fn func(Line) error) error {
	s := r.s
	if err := r.align(); err != nil {
		return r.eof(err)
	}
	if s.Off == 0 && s.Header {
		if _, err := r.line(); err != nil {
			return r.eof(err)
		}
	}
	for n := 0; r.off < r.end; n++ {
		if n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		off := r.off
		b, err := r.line()
		if err != nil {
			return r.eof(err)
		}
		b = b[:len(b)-eol(b)]
		if err := fn(Line{Path: s.Path, Off: off, Text: b}); err != nil {
			return fmt.Errorf("mr: %s: line at offset %d: %w", s.Path, off, err)
		}
	}
	return nil
}

// eol is the length of b's line ending: 2 for "\r\n", 1 for "\n", else 0.
func eol(b []byte) int {
	switch n := len(b); {
	case n >= 2 && b[n-1] == '\n' && b[n-2] == '\r':
		return 2
	case n >= 1 && b[n-1] == '\n':
		return 1
	}
	return 0
}

// Records calls fn with each record of size bytes that starts in the
// split, in order, with its offset: records start at the file's offsets
// 0, size, 2*size..., and a split reads past its end to finish its last
// one, so the splits of a file read each record exactly once. rec is
// valid only during the call. A file whose length is not a multiple of
// size is an error naming it and its length (from the split that holds
// the partial record). s.Header does not apply to records.
func (s Split) Records(ctx context.Context, size int, fn func(off int64, rec []byte) error) error {
	if size <= 0 {
		return fmt.Errorf("mr: split %v: record size %d, want > 0", s, size)
	}
	z := int64(size)
	r, err := s.reader((s.Off + z - 1) / z * z)
	if err != nil {
		return err
	}
	return r.close(r.records(ctx, size, fn))
}

func (r *splitReader) records(ctx context.Context, size int, fn func(off int64, rec []byte) error) error {
	s, z := r.s, int64(size)
	rec := make([]byte, size)
	for n := 0; r.off < r.end; n++ {
		if n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		k, err := io.ReadFull(r.br, rec)
		switch {
		case err == io.EOF:
			return nil
		case err == io.ErrUnexpectedEOF:
			return fmt.Errorf("mr: %s: %d bytes, not a multiple of the %d-byte record size", s.Path, r.off+int64(k), size)
		case err != nil:
			return r.fail(err)
		}
		off := r.off
		r.off += z
		if err := fn(off, rec); err != nil {
			return fmt.Errorf("mr: %s: record at offset %d: %w", s.Path, off, err)
		}
	}
	return nil
}

// CSVOptions says how Split.CSV parses rows (with encoding/csv).
type CSVOptions struct {
	// Comma is the field delimiter; 0 means ','.
	Comma rune
	// FieldsPerRecord is the number of fields of every row if positive;
	// if 0, a split's rows must have as many fields as its first; if
	// negative, rows may have any number of fields.
	FieldsPerRecord int
}

// CSV calls fn with each CSV row (RFC 4180, as encoding/csv reads it)
// that starts in the split, in order: splits are aligned as Lines aligns
// them, so the splits of a file read each row exactly once. Blank lines
// are not rows. With s.Header, the split that owns the file's first row
// skips it. row is reused: valid only during the call.
//
// A split that is not a whole file finds the start of its first row by
// the first line break, which is wrong inside a quoted field: a row with
// a line break inside quotes is then an error naming the file and the
// row's offset, found by the split that owns the row (rows before it have
// no such break, so that split's start is right), which fails the job.
// Read such a file whole (FileOptions.SplitBytes 0), where quoted line
// breaks are read as encoding/csv reads them.
//
// A malformed row is an error naming the file and the row's offset,
// wrapping encoding/csv's error (such as csv.ErrFieldCount).
func (s Split) CSV(ctx context.Context, opts CSVOptions, fn func(row []string) error) error {
	r, err := s.reader(max(s.Off-1, 0))
	if err != nil {
		return err
	}
	return r.close(r.csv(ctx, opts, fn))
}

func (r *splitReader) csv(ctx context.Context, opts CSVOptions, fn func(row []string) error) error {
	s := r.s
	if err := r.align(); err != nil {
		return r.eof(err)
	}
	lf := &lineFeeder{r: r}
	cr := csv.NewReader(lf)
	if opts.Comma != 0 {
		cr.Comma = opts.Comma
	}
	cr.FieldsPerRecord = opts.FieldsPerRecord
	cr.ReuseRecord = true
	header := s.Header // the split's first row may be the file's first
	for n := 0; ; n++ {
		if n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := r.blanks(); err != nil {
			return r.eof(err)
		}
		if r.off >= r.end {
			return nil
		}
		off := r.off
		row, err := cr.Read()
		switch {
		case lf.err != nil && lf.err != io.EOF:
			return r.fail(lf.err)
		case err == io.EOF:
			return nil
		case err != nil:
			if pe := (*csv.ParseError)(nil); errors.As(err, &pe) {
				err = pe.Err // its line numbers count from the split's start
			}
			return fmt.Errorf("mr: %s: CSV row at offset %d: %w", s.Path, off, err)
		}
		if !r.whole {
			for _, f := range row {
				if strings.IndexByte(f, '\n') >= 0 {
					return fmt.Errorf("mr: %s: CSV row at offset %d has a line break inside quotes, which splits of part of a file cannot align to: read the file whole (FileOptions.SplitBytes 0)", s.Path, off)
				}
			}
		}
		if header {
			header = false
			first := s.Off == 0
			if !first {
				if first, err = r.blankBefore(off); err != nil {
					return err
				}
			}
			if first {
				continue
			}
		}
		if err := fn(row); err != nil {
			return fmt.Errorf("mr: %s: CSV row at offset %d: %w", s.Path, off, err)
		}
	}
}

// LineMap adapts a map of lines to a map of splits that calls f with each
// line the split owns (Split.Lines):
//
//	mr.ApplyMap(ctx, r, in, mr.LineMap(func(ctx context.Context, l mr.Line, emit func(string, int64)) error {
//		for _, w := range strings.Fields(string(l.Text)) {
//			emit(w, 1)
//		}
//		return nil
//	}), st)
func LineMap[K, V any](f func(ctx context.Context, l Line, emit func(K, V)) error) MapFunc[Split, K, V] {
	return func(ctx context.Context, s Split, emit func(K, V)) error {
		return s.Lines(ctx, func(l Line) error { return f(ctx, l, emit) })
	}
}

// CSVMap adapts a map of CSV rows to a map of splits that calls f with
// each row the split owns (Split.CSV with opts).
func CSVMap[K, V any](opts CSVOptions, f func(ctx context.Context, row []string, emit func(K, V)) error) MapFunc[Split, K, V] {
	return func(ctx context.Context, s Split, emit func(K, V)) error {
		return s.CSV(ctx, opts, func(row []string) error { return f(ctx, row, emit) })
	}
}

// splitReader reads a split's file, decompressed, from an offset to the
// file's end, for Lines, Records and CSV.
type splitReader struct {
	s     Split
	br    *bufio.Reader
	c     io.Closer
	file  *os.File // an uncompressed file, or nil
	off   int64    // the offset of br's next byte in the file
	end   int64    // the split's end: the first offset it does not own
	whole bool     // the split is its whole file
	long  []byte
}

// reader opens s's file and returns a reader of it from offset from,
// which is 0 for a compressed split. An uncompressed file shorter than
// the split's end is an error naming it.
func (s Split) reader(from int64) (*splitReader, error) {
	f, err := s.format()
	if err != nil {
		return nil, err
	}
	if f != zio.None {
		rc, err := s.Open()
		if err != nil {
			return nil, err
		}
		return &splitReader{s: s, br: bufio.NewReaderSize(rc, 64<<10), c: rc, end: math.MaxInt64, whole: true}, nil
	}
	file, err := os.Open(s.Path)
	if err != nil {
		return nil, fmt.Errorf("mr: split %v: %w", s, err)
	}
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("mr: split %v: %w", s, err)
	}
	size := fi.Size()
	if size < s.Off+s.Len {
		file.Close()
		return nil, fmt.Errorf("mr: split %v: %s is now %d bytes: %w", s, s.Path, size, io.ErrUnexpectedEOF)
	}
	from = min(from, size)
	bufSize := int(min(max(s.Off+s.Len-from+1, 4<<10), 64<<10))
	return &splitReader{
		s:     s,
		br:    bufio.NewReaderSize(io.NewSectionReader(file, from, size-from), bufSize),
		c:     file,
		file:  file,
		off:   from,
		end:   s.Off + s.Len,
		whole: s.Off == 0 && s.Len == size,
	}, nil
}

// close closes r and returns err, or the error of Close if err is nil.
func (r *splitReader) close(err error) error {
	if cerr := r.c.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("mr: split %v: %w", r.s, cerr)
	}
	return err
}

// fail returns err, an error reading the file, naming the offset.
func (r *splitReader) fail(err error) error {
	return fmt.Errorf("mr: split %v: reading at offset %d: %w", r.s, r.off, err)
}

// eof returns nil for io.EOF and other errors as they are.
func (r *splitReader) eof(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// align skips, in a split that does not start at offset 0, what precedes
// its first line: r starts one byte before the split, and the first line
// starts after the first '\n' from there. It returns io.EOF if no line
// starts in the rest of the file.
func (r *splitReader) align() error {
	if r.s.Off == 0 {
		return nil
	}
	for {
		b, err := r.br.ReadSlice('\n')
		r.off += int64(len(b))
		switch {
		case err == nil:
			return nil
		case err == bufio.ErrBufferFull:
			if r.off >= r.end {
				return io.EOF // no line starts in the split
			}
		case err == io.EOF:
			return io.EOF
		default:
			return r.fail(err)
		}
	}
}

// line returns the next line with its ending, or io.EOF at the end of the
// file. It is valid until the next read.
func (r *splitReader) line() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = r.br.ReadSlice('\n')
			r.long = append(r.long, b...)
		}
		b = r.long
	}
	r.off += int64(len(b))
	switch {
	case err == io.EOF && len(b) > 0:
		return b, nil // the last line, without '\n'
	case err == io.EOF:
		return nil, io.EOF
	case err != nil:
		return nil, r.fail(err)
	}
	return b, nil
}

// blanks skips blank lines ("\n", "\r\n"), which are not CSV rows, and
// returns io.EOF at the end of the file.
func (r *splitReader) blanks() error {
	for {
		b, err := r.br.Peek(2)
		switch {
		case len(b) == 0 && err == io.EOF:
			return io.EOF
		case len(b) == 0:
			return r.fail(err)
		case b[0] == '\n':
			r.br.Discard(1)
			r.off++
		case len(b) == 2 && b[0] == '\r' && b[1] == '\n':
			r.br.Discard(2)
			r.off += 2
		default:
			return nil
		}
	}
}

// blankBefore reports whether the bytes of the (uncompressed) file before
// off are all blank lines, which are not CSV rows.
func (r *splitReader) blankBefore(off int64) (bool, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(r.file, 0, off), 512)
	for n := int64(0); n < off; {
		b, err := br.Peek(2)
		switch {
		case len(b) >= 1 && b[0] == '\n':
			br.Discard(1)
			n++
		case len(b) == 2 && b[0] == '\r' && b[1] == '\n':
			br.Discard(2)
			n += 2
		case len(b) == 0 && err != io.EOF:
			return false, fmt.Errorf("mr: split %v: reading at offset %d: %w", r.s, n, err)
		default:
			return false, nil
		}
	}
	return true, nil
}

// lineFeeder gives encoding/csv the file a line at a time: a Read never
// returns bytes past a '\n', so that csv's buffer is empty after each row
// and r.off is the offset of the next row's first byte.
type lineFeeder struct {
	r    *splitReader
	rest []byte // of the line being read, in r.br's buffer
	err  error  // the error that ended the file (io.EOF at its end)
}

func (lf *lineFeeder) Read(p []byte) (int, error) {
	if len(lf.rest) == 0 {
		if lf.err != nil {
			return 0, lf.err
		}
		b, err := lf.r.br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull {
			lf.err = err
		}
		if len(b) == 0 {
			return 0, lf.err
		}
		lf.rest = b // the rest of the line, or of r.br's buffer
	}
	n := copy(p, lf.rest)
	lf.rest = lf.rest[n:]
	lf.r.off += int64(n)
	return n, nil
}
