package linreg

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strconv"

	"github.com/pgasmr/pgasmr/apps/internal/filemap"
	"github.com/pgasmr/pgasmr/mr"
)

// chunk is one map input element: a byte range of a file, or a whole
// compressed file (Codec set), and its index in the job's list of chunks.
type chunk struct {
	Index int64
	mr.Split
	Last bool // the file's last chunk (for progress reports)
	// Key is the reduce key of the chunk's float sums: increasing with
	// Index, with room below the next chunk's for Keys keys. A compressed
	// file's decompressed bytes are summed in chunks of Step bytes, as
	// the uncompressed file would be cut, keyed Key, Key+1, ...: so its
	// float sums are added in the same order, to the same bytes.
	Key, Keys, Step int64
}

// chunks is the job's input: every file cut into chunks. It is an
// mr.Input with the splits' weights (their lengths; a compressed file's
// size on disk) and hash.
type chunks struct {
	splits       mr.Input[mr.Split]
	last         []bool // last[i]: chunk i ends its file
	files, bytes int64  // files with chunks, bytes in chunks
	step         int64  // the chunk size
	shift        uint   // chunk i's Key is i<<shift
}

func (c *chunks) Len() int64 { return c.splits.Len() }

func (c *chunks) At(ctx context.Context, i int64) (chunk, error) {
	s, err := c.splits.At(ctx, i)
	return chunk{Index: i, Split: s, Last: c.last[i], Key: i << c.shift, Keys: 1 << c.shift, Step: c.step}, err
}

func (c *chunks) Weight(i int64) float64 { return c.splits.(mr.Weighter).Weight(i) }

func (c *chunks) Hash() uint64 { return c.splits.(mr.Hasher).Hash() }

// recordSize returns the bytes per point of a binary format (0 for csv).
func recordSize(format int) int64 {
	switch format {
	case fmtInt8:
		return 2
	case fmtF64:
		return 16
	}
	return 0
}

// inputChunks cuts the files into chunks and checks that binary files hold
// whole records. It reads no data.
func inputChunks(files []string, format int, size int64) (*chunks, error) {
	in, _, err := mr.Files(context.Background(), mr.FileOptions{SplitBytes: size}, files...) // refuses FIFOs and devices before opening them
	if nr := (*mr.NotRegularError)(nil); errors.As(err, &nr) {
		return nil, fmt.Errorf("linreg: %w", nr) // "linreg: PATH: a named pipe (FIFO), not a regular file", as in every app
	}
	if err != nil {
		return nil, fmt.Errorf("linreg: %w", err)
	}
	rec := recordSize(format)
	c := &chunks{splits: in, last: make([]bool, in.Len()), step: size, shift: 62 - uint(bits.Len64(uint64(in.Len())))}
	for i := range in.Len() {
		s, err := in.At(context.Background(), i)
		if err != nil {
			return nil, fmt.Errorf("linreg: %w", err)
		}
		if rec > 0 && s.Codec == "" { // a compressed file's size is checked as it is read
			if end := s.Off + s.Len; s.Len < size && end%rec != 0 { // a file's last split
				return nil, fmt.Errorf("linreg: %s: size %d is not a multiple of the %d-byte record: %d trailing bytes at offset %d",
					s.Path, end, rec, end%rec, end-end%rec)
			}
		}
		if s.Off == 0 {
			c.files++
		}
		if i > 0 && s.Off == 0 {
			c.last[i-1] = true
		}
		c.bytes += s.Len
	}
	if len(c.last) > 0 {
		c.last[len(c.last)-1] = true
	}
	return c, nil
}

// useMmap makes a reader map each binary file it reads once, whole
// (filemap.Open; on Linux), and sum its chunks out of the map until Close;
// elsewhere, where mapping fails, or for a chunk beyond the end of the
// map (a file that shrank since it was cut), it reads them with ReadAt into
// a buffer of readBytes. A map saves the copy (a third of a 1-rank job's
// time) now that the AVX2 kernel prefetches: 2 ranks on 256 MB 41.3 ms
// read, 37.1 ms with a map per 1 MiB chunk (each unmap interrupts the
// other rank's processor), 27.5 ms with one map per file (21 interleaved
// rounds). A variable for tests; BenchmarkRead compares the two.
var useMmap = true

// readBytes is the size of one ReadAt.
const readBytes = 256 << 10

// reader sums chunks; it holds one worker's buffers.
type reader struct {
	format  int
	buf     []byte
	maps    map[string]*filemap.Map // binary files mapped whole (nil: could not be), until Close
	hist    *[65536]uint32          // int8: counts of the (x, y) byte pairs not yet folded
	pending int64                   // points counted in hist
	br      *bufio.Reader
	line    []byte
}

func newReader(format int) *reader {
	return &reader{format: format}
}

// Close unmaps the files the reader mapped.
func (rd *reader) Close() error { return filemap.CloseAll(rd.maps) }

// mappedFor returns the map of c's file if useMmap is set and the map
// holds c's bytes, or nil.
func (rd *reader) mappedFor(c chunk) *filemap.Map {
	if !useMmap {
		return nil
	}
	if m := rd.mapped(c.Path); m != nil && c.Off+c.Len <= int64(len(m.Bytes())) {
		return m
	}
	return nil
}

// mapped returns the map of the whole file at path, mapping it on first
// use; nil if it cannot be mapped (the reader reads it instead, and
// reports what is wrong with it).
func (rd *reader) mapped(path string) *filemap.Map {
	if m, ok := rd.maps[path]; ok {
		return m
	}
	if rd.maps == nil {
		rd.maps = map[string]*filemap.Map{}
	}
	var m *filemap.Map
	if f, err := os.Open(path); err == nil {
		if st, err := f.Stat(); err == nil && st.Size() > 0 {
			m, _ = filemap.Open(f, st.Size())
		}
		f.Close() // the map keeps the pages
	}
	rd.maps[path] = m
	return m
}

// chunkSums calls fn with the key and the sums of c's points: once, or,
// for a compressed file, once for each chunk of c.Step bytes of its
// decompressed bytes, in order (see chunk.Key). It stops at fn's first
// error.
func (rd *reader) chunkSums(ctx context.Context, c chunk, fn func(key int64, s Sums) error) error {
	if c.Codec == "" {
		s, err := rd.sums(ctx, c)
		if err != nil {
			return err
		}
		return fn(c.Key, s)
	}
	if err := rd.compressed(ctx, c, fn); err != nil {
		return err
	}
	progress(ctx, c)
	return nil
}

// progress reports chunk c read to the context's mr.Progress.
func progress(ctx context.Context, c chunk) {
	var last int64
	if c.Last {
		last = 1
	}
	mr.ProgressFrom(ctx).Add(last, c.Len)
}

// sums returns the sums of the points in c (of a compressed file's
// chunks, added in order: chunkSums gives them one by one).
func (rd *reader) sums(ctx context.Context, c chunk) (Sums, error) {
	var s Sums
	err := rd.add(ctx, c, &s)
	rd.flush(&s)
	return s, err
}

// flush folds the int8 points counted in the histogram into s.
func (rd *reader) flush(s *Sums) {
	if rd.pending > 0 {
		foldInt8(s, rd.hist)
		rd.pending = 0
	}
}

// add adds the points of c to s. Float sums start from s and go on in
// input order; int8 points are counted in the reader's histogram (s.N
// grows at once) and reach the other fields of s at the next flush, or
// earlier if the counts could overflow. On error the histogram is
// discarded.
func (rd *reader) add(ctx context.Context, c chunk, s *Sums) (err error) {
	defer func() {
		if err == nil {
			progress(ctx, c)
		}
	}()
	if c.Codec != "" {
		return rd.compressed(ctx, c, func(_ int64, sub Sums) error {
			*s = s.Add(sub)
			return nil
		})
	}
	if rd.format == fmtCSV {
		return rd.csv(ctx, c.Split, s)
	}
	defer func() {
		if err != nil {
			rd.discard()
		}
	}()
	// sum adds the points of p, read at off, to s.
	sum := func(p []byte, off int64) error { return rd.sum(s, p, c.Path, off) }
	if m := rd.mappedFor(c); m != nil {
		b := m.Bytes()
		for off, end := c.Off, c.Off+c.Len; off < end; {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("linreg: %s at offset %d: %w", c.Path, off, err)
			}
			n := min(pieceBytes, end-off)
			var serr error
			if ferr := m.Read(func() { serr = sum(b[off:off+n], off) }); ferr != nil { // a truncated file faults: an error naming it
				return fmt.Errorf("linreg: %w", ferr) // the histogram is discarded above
			}
			if serr != nil {
				return serr
			}
			off += n
		}
		return nil
	}
	f, err := os.Open(c.Path)
	if err != nil {
		return fmt.Errorf("linreg: %w", err)
	}
	defer f.Close()
	for off, end := c.Off, c.Off+c.Len; off < end; {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("linreg: %s at offset %d: %w", c.Path, off, err)
		}
		n := min(readBytes, end-off)
		if rd.buf == nil {
			rd.buf = make([]byte, readBytes)
		}
		p := rd.buf[:n]
		if _, err := f.ReadAt(p, off); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("linreg: %s: reading %d bytes at offset %d: %w", c.Path, len(p), off, err)
		}
		if err := sum(p, off); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// discard drops the int8 points counted in the histogram (after an error).
func (rd *reader) discard() {
	if rd.pending > 0 {
		*rd.hist = [65536]uint32{}
		rd.pending = 0
	}
}

// sum adds the points of p, read at offset off of the file path (of its
// decompressed bytes), to s: int8 points through the reader's histogram
// (see add), float64 ones in order. A NaN or an infinity is an error.
func (rd *reader) sum(s *Sums, p []byte, path string, off int64) error {
	switch {
	case rd.format == fmtInt8 && haveAVX2:
		sumInt8Wide(s, p)
	case rd.format == fmtInt8:
		if rd.hist == nil {
			rd.hist = new([65536]uint32)
		}
		if rd.pending+int64(len(p)/2) > maxPending {
			rd.flush(s)
		}
		countInt8(p, rd.hist)
		s.N += int64(len(p) / 2)
		rd.pending += int64(len(p) / 2)
	default:
		if i := sumF64(s, p); i >= 0 {
			return fmt.Errorf("linreg: %s: point at offset %d: %s is %v", path, off+int64(i)&^15, []string{"x", "y"}[i/8%2], math.Float64frombits(binary.LittleEndian.Uint64(p[i:])))
		}
	}
	return nil
}

// compressed reads the decompressed bytes of c, a compressed file, and
// calls fn with the key and the sums of each chunk of c.Step bytes of
// them, as the uncompressed file would be cut (for CSV, of the lines that
// start in it); a chunk with no point is left out (its sums add nothing).
// Errors name the file; offsets in them count decompressed bytes.
func (rd *reader) compressed(ctx context.Context, c chunk, fn func(key int64, s Sums) error) (err error) {
	rc, err := c.Split.Open() // its errors name the file
	if err != nil {
		return fmt.Errorf("linreg: %w", err)
	}
	defer rc.Close() // a read-only file: nothing is lost
	defer func() {
		if err != nil {
			rd.discard()
		}
	}()
	var s Sums
	some := false // s has points
	j := int64(0) // the chunk of s
	emit := func() error {
		if !some {
			return nil
		}
		if j >= c.Keys {
			return fmt.Errorf("linreg: %s: more than %d chunks of %d bytes in one compressed file: raise the chunk size", c.Path, c.Keys, c.Step)
		}
		rd.flush(&s)
		if err := fn(c.Key+j, s); err != nil {
			return err
		}
		s, some = Sums{}, false
		return nil
	}
	if rd.format == fmtCSV {
		if rd.br == nil {
			rd.br = bufio.NewReaderSize(nil, 64<<10)
		}
		rd.br.Reset(rc)
		defer rd.br.Reset(nil)
		pos, checked := int64(0), int64(0)
		for line := int64(1); ; line++ {
			if pos-checked >= pieceBytes {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("linreg: %s at offset %d: %w", c.Path, pos, err)
				}
				checked = pos
			}
			n, text, err := rd.readLine(true)
			switch {
			case errors.Is(err, errLongLine):
				return fmt.Errorf("linreg: %s: reading at offset %d: %w", c.Path, pos, err)
			case err != nil && !errors.Is(err, io.EOF):
				return fmt.Errorf("linreg: %w", err) // it names the file
			}
			if n == 0 {
				return emit() // end of file
			}
			if k := pos / c.Step; k != j {
				if err := emit(); err != nil {
					return err
				}
				j = k
			}
			if perr := parsePoint(&s, text, pos == 0); perr != nil {
				return fmt.Errorf("linreg: %s:%d (offset %d): %w", c.Path, line, pos, perr)
			}
			some = true
			pos += int64(n)
		}
	}
	if rd.buf == nil {
		rd.buf = make([]byte, readBytes)
	}
	rec := recordSize(rd.format)
	for pos, end := int64(0), c.Step; ; {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("linreg: %s at offset %d: %w", c.Path, pos, err)
		}
		p := rd.buf[:min(int64(len(rd.buf)), end-pos)]
		n, err := io.ReadFull(rc, p)
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		switch {
		case err != nil && !eof:
			return fmt.Errorf("linreg: %w", err) // it names the file
		case eof && (pos+int64(n))%rec != 0:
			size := pos + int64(n)
			return fmt.Errorf("linreg: %s: decompressed size %d is not a multiple of the %d-byte record: %d trailing bytes at offset %d",
				c.Path, size, rec, size%rec, size-size%rec)
		}
		if n > 0 {
			if err := rd.sum(&s, p[:n], c.Path, pos); err != nil {
				return err
			}
			some = true
		}
		pos += int64(n)
		if pos == end || eof {
			if err := emit(); err != nil {
				return err
			}
			j++
			end += c.Step
		}
		if eof {
			return nil
		}
	}
}

// maxPending bounds the points counted in the histogram between folds,
// so no uint32 count can overflow (a variable for tests).
var maxPending int64 = 1 << 31

// countInt8 counts the int8 points of p (an even number of bytes) in the
// 2-D histogram h of their (x, y) byte pairs: one increment per point.
func countInt8(p []byte, h *[65536]uint32) {
	for len(p) >= 8 {
		v := binary.LittleEndian.Uint64(p)
		h[uint16(v)]++
		h[uint16(v>>16)]++
		h[uint16(v>>32)]++
		h[uint16(v>>48)]++
		p = p[8:]
	}
	for ; len(p) >= 2; p = p[2:] {
		h[uint16(p[0])|uint16(p[1])<<8]++
	}
}

// foldInt8 adds the points counted in h to the sums of s (not to s.N),
// row by row with exact int64 arithmetic, and clears h.
func foldInt8(s *Sums, h *[65536]uint32) {
	for yb := range 256 {
		row := h[yb<<8 : yb<<8+256]
		var c, cx, cxx int64
		for xb, n := range row {
			if n == 0 {
				continue
			}
			x, k := int64(int8(xb)), int64(n)
			c += k
			cx += k * x
			cxx += k * x * x
			row[xb] = 0
		}
		y := int64(int8(yb))
		s.X += cx
		s.Y += c * y
		s.XX += cxx
		s.YY += c * y * y
		s.XY += cx * y
	}
}

// sumInt8 adds the int8 points of p to s through the histogram h (zero
// on entry and on return).
func sumInt8(s *Sums, p []byte, h *[65536]uint32) {
	s.N += int64(len(p) / 2)
	countInt8(p, h)
	foldInt8(s, h)
}

// avx2Bytes is the most bytes one call of sumInt8AVX2 takes: 32,768
// steps of 16 points, two a lane, so that a lane's sum of x*x (at most
// 2^14 a point) stays below 2^31.
const avx2Bytes = 1 << 20

// sumInt8Wide adds the int8 points of p (an even number of bytes) to s
// directly, 16 at a time in 16-bit lanes multiplied and summed in 32-bit
// ones (sumInt8AVX2), the rest one by one: the same exact sums as the
// histogram's, at a third of its time where the processor has AVX2.
func sumInt8Wide(s *Sums, p []byte) {
	s.N += int64(len(p) / 2)
	var w [5]int64
	for len(p) >= 32 {
		n := min(len(p), avx2Bytes) &^ 31
		sumInt8AVX2(p[:n], &w)
		p = p[n:]
	}
	for ; len(p) >= 2; p = p[2:] {
		x, y := int64(int8(p[0])), int64(int8(p[1]))
		w[0] += x
		w[1] += y
		w[2] += x * x
		w[3] += y * y
		w[4] += x * y
	}
	s.X += w[0]
	s.Y += w[1]
	s.XX += w[2]
	s.YY += w[3]
	s.XY += w[4]
}

// sumF64 adds the float64 points of p (a multiple of 16 bytes) to s in
// order. It returns the offset in p of the first NaN or infinite value, or
// -1.
func sumF64(s *Sums, p []byte) int {
	sx, sy, sxx, syy, sxy := s.FX, s.FY, s.FXX, s.FYY, s.FXY
	for i := 0; i+16 <= len(p); i += 16 {
		x := math.Float64frombits(binary.LittleEndian.Uint64(p[i:]))
		y := math.Float64frombits(binary.LittleEndian.Uint64(p[i+8:]))
		if !finite(x) {
			return i
		}
		if !finite(y) {
			return i + 8
		}
		sx += x
		sy += y
		sxx += x * x
		syy += y * y
		sxy += x * y
		s.N++
	}
	s.FX, s.FY, s.FXX, s.FYY, s.FXY = sx, sy, sxx, syy, sxy
	return -1
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// csv sums the lines that start in the split [Off, Off+Len): a split that
// does not start a file skips the line in progress at Off (it belongs to
// the previous split), and the last line is read to its end past the
// split.
func (rd *reader) csv(ctx context.Context, sp mr.Split, s *Sums) error {
	if sp.Len == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("linreg: %s at offset %d: %w", sp.Path, sp.Off, err)
	}
	f, err := os.Open(sp.Path)
	if err != nil {
		return fmt.Errorf("linreg: %w", err)
	}
	defer f.Close()
	start := sp.Off
	if start > 0 {
		start-- // a line starts at Off if the byte before it ends a line
	}
	if rd.br == nil {
		rd.br = bufio.NewReaderSize(nil, 64<<10)
	}
	rd.br.Reset(io.NewSectionReader(f, start, math.MaxInt64-start))
	pos, end := start, sp.Off+sp.Len
	if sp.Off > 0 {
		n, _, err := rd.readLine(false)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("linreg: %s: reading at offset %d: %w", sp.Path, pos, err)
		}
		pos += int64(n)
	}
	checked := pos
	for pos < end {
		if pos-checked >= pieceBytes {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("linreg: %s at offset %d: %w", sp.Path, pos, err)
			}
			checked = pos
		}
		n, line, err := rd.readLine(true)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("linreg: %s: reading at offset %d: %w", sp.Path, pos, err)
		}
		if n == 0 {
			break // end of file
		}
		if perr := parsePoint(s, line, pos == 0); perr != nil {
			return fmt.Errorf("linreg: %s:%s (offset %d): %w", sp.Path, lineNumber(sp.Path, pos), pos, perr)
		}
		pos += int64(n)
	}
	return nil
}

// maxLine bounds a CSV line.
const maxLine = 1 << 20

// errLongLine is readLine's error for a line longer than maxLine.
var errLongLine = fmt.Errorf("line longer than %d bytes", maxLine)

// readLine reads one line, with its '\n' if any, and returns its length
// and (if keep) its bytes, valid until the next call.
func (rd *reader) readLine(keep bool) (int, []byte, error) {
	rd.line = rd.line[:0]
	n := 0
	for {
		frag, err := rd.br.ReadSlice('\n')
		n += len(frag)
		if keep && (len(rd.line) > 0 || errors.Is(err, bufio.ErrBufferFull)) {
			if len(rd.line)+len(frag) > maxLine {
				return n, nil, errLongLine
			}
			rd.line = append(rd.line, frag...)
			frag = rd.line
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return n, frag, err
	}
}

// parsePoint parses one CSV line ("x,y", with its line end) and adds the
// point to s. Blank lines are skipped, and so is a header "x,y" on the
// first line of a file.
func parsePoint(s *Sums, line []byte, first bool) error {
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	t := bytes.Trim(line, " \t")
	if len(t) == 0 {
		return nil
	}
	xs, ys, ok := bytes.Cut(t, []byte(","))
	if !ok {
		return fmt.Errorf("want \"x,y\", got %q", clip(line))
	}
	xs, ys = bytes.Trim(xs, " \t"), bytes.Trim(ys, " \t")
	if first && string(xs) == "x" && string(ys) == "y" {
		return nil
	}
	x, err := strconv.ParseFloat(string(xs), 64)
	if err != nil || !finite(x) {
		return fmt.Errorf("x %q is not a finite number", clip(xs))
	}
	y, err := strconv.ParseFloat(string(ys), 64)
	if err != nil || !finite(y) {
		return fmt.Errorf("y %q is not a finite number", clip(ys))
	}
	s.N++
	s.FX += x
	s.FY += y
	s.FXX += x * x
	s.FYY += y * y
	s.FXY += x * y
	return nil
}

func clip(b []byte) []byte {
	if len(b) > 40 {
		return append(b[:40:40], "..."...)
	}
	return b
}

// lineNumber returns the 1-based number of the line starting at offset
// off of the file (counted on the error path only), or "?" if the file
// cannot be read.
func lineNumber(path string, off int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "?"
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	line := int64(1)
	for pos := int64(0); pos < off; {
		p := buf[:min(int64(len(buf)), off-pos)]
		n, err := f.ReadAt(p, pos)
		line += int64(bytes.Count(p[:n], []byte("\n")))
		pos += int64(n)
		if err != nil && pos < off {
			return "?"
		}
	}
	return strconv.FormatInt(line, 10)
}
