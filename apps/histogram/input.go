package histogram

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"github.com/pgasmr/pgasmr/apps/internal/filemap"
	"github.com/pgasmr/pgasmr/internal/zio"
	"github.com/pgasmr/pgasmr/mr"
)

// DefaultChunkBytes is the default size of an input element: a run of
// whole pixel rows of about this many bytes.
const DefaultChunkBytes = 4 << 20

// readBytes is the most one read holds (it fits in L2 for the count that
// follows); the context is checked before each read.
const readBytes = 128 << 10

// chunk is an input element: rows consecutive stored rows of file file,
// the first starting at byte off.
type chunk struct {
	file int
	rows int
	off  int64
}

// plan is the list of chunks over all input files.
type plan struct {
	files   []string
	hdrs    []Header
	formats []zio.Format // a compressed file is one chunk, read as a stream
	chunks  []chunk
	pixels  int64
}

// newPlan parses every file's header and cuts the files into chunks of
// whole rows of about chunkBytes (at least one row each); a compressed
// file is one chunk. A path that is not a regular file (a FIFO, a device)
// is refused before it is opened.
func newPlan(ctx context.Context, files []string, chunkBytes int64) (*plan, error) {
	if chunkBytes <= 0 {
		chunkBytes = DefaultChunkBytes
	}
	p := &plan{files: files, hdrs: make([]Header, len(files)), formats: make([]zio.Format, len(files))}
	var total int64 // pixel bytes with padding, for progress reports
	for i, path := range files {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("histogram: %w", err)
		}
		// Checked before ReadHeader opens it: opening a FIFO blocks.
		if _, err := mr.StatRegular(path); err != nil {
			return nil, fmt.Errorf("histogram: %w", err)
		}
		h, format, err := readHeaderFormat(path)
		if err != nil {
			return nil, err
		}
		p.hdrs[i], p.formats[i] = h, format
		p.pixels += h.Pixels()
		per := int(max(1, min(chunkBytes/h.Stride, int64(h.Height))))
		if format != zio.None {
			per = h.Height
		}
		for row := 0; row < h.Height; row += per {
			p.chunks = append(p.chunks, chunk{file: i, rows: min(per, h.Height-row), off: h.Offset + int64(row)*h.Stride})
		}
		total += int64(h.Height) * h.Stride
	}
	mr.ProgressFrom(ctx).SetTotal(int64(len(files)), total)
	return p, nil
}

// bytes returns the pixel bytes (with padding) of chunk c.
func (p *plan) bytes(c chunk) int64 { return int64(c.rows) * p.hdrs[c.file].Stride }

// input is the plan as an mr.Input, weighted by bytes.
type input struct {
	p    *plan
	hash uint64
}

func newInput(p *plan) *input {
	h := fnv.New64a()
	var b []byte
	for _, f := range p.files {
		b = binary.LittleEndian.AppendUint64(b[:0], uint64(len(f)))
		h.Write(append(b, f...))
	}
	for _, c := range p.chunks {
		b = binary.LittleEndian.AppendUint64(b[:0], uint64(c.file))
		b = binary.LittleEndian.AppendUint64(b, uint64(c.off))
		b = binary.LittleEndian.AppendUint64(b, uint64(c.rows))
		h.Write(b)
	}
	return &input{p: p, hash: h.Sum64()}
}

func (in *input) Len() int64 { return int64(len(in.p.chunks)) }

func (in *input) At(_ context.Context, i int64) (chunk, error) {
	if i < 0 || i >= int64(len(in.p.chunks)) {
		return chunk{}, fmt.Errorf("histogram: chunk %d of %d", i, len(in.p.chunks))
	}
	return in.p.chunks[i], nil
}

func (in *input) Weight(i int64) float64 { return float64(in.p.bytes(in.p.chunks[i])) }

func (in *input) Hash() uint64 { return in.hash }

// reader reads chunks' pixels; it keeps the files it opened until Close.
// A reader belongs to one goroutine.
type reader struct {
	p     *plan
	files map[int]*os.File
	maps  map[int]*filemap.Map // nil for a file that could not be mapped
	buf   []byte
}

// useMmap makes a reader map each file it reads (filemap) rather than
// read its chunks into a buffer (a variable for tests).
var useMmap = true

func newReader(p *plan) *reader {
	return &reader{p: p, files: map[int]*os.File{}, maps: map[int]*filemap.Map{}, buf: make([]byte, readBytes)}
}

func (rd *reader) Close() error {
	errs := []error{filemap.CloseAll(rd.maps)}
	for _, f := range rd.files {
		errs = append(errs, f.Close())
	}
	clear(rd.files)
	return errors.Join(errs...)
}

// mapped returns the map of file i, open as f, mapping it on first use;
// nil if it cannot be mapped (the reader reads it instead).
func (rd *reader) mapped(i int, f *os.File) *filemap.Map {
	m, ok := rd.maps[i]
	if !ok && useMmap {
		if st, err := f.Stat(); err == nil {
			m, _ = filemap.Open(f, st.Size())
		}
		rd.maps[i] = m
	}
	return m
}

// each calls fn with the pixels of chunk c, row by row (a row wider than
// the read buffer in several pieces of whole pixels), in storage order;
// padding is left out. It checks ctx before every read.
func (rd *reader) each(ctx context.Context, c chunk, fn func(px []byte)) error {
	if err := rd.eachRow(ctx, c, fn); err != nil {
		return err
	}
	h := rd.p.hdrs[c.file]
	var done int64
	if c.off+int64(c.rows)*h.Stride == h.Offset+int64(h.Height)*h.Stride {
		done = 1 // the file's last chunk
	}
	mr.ProgressFrom(ctx).Add(done, int64(c.rows)*h.Stride)
	return nil
}

func (rd *reader) eachRow(ctx context.Context, c chunk, fn func(px []byte)) error {
	path := rd.p.files[c.file]
	h := rd.p.hdrs[c.file]
	if rd.p.formats[c.file] != zio.None {
		return rd.eachCompressed(ctx, c, fn)
	}
	f := rd.files[c.file]
	if f == nil {
		var err error
		if f, err = os.Open(path); err != nil {
			return fmt.Errorf("histogram: %w", err)
		}
		rd.files[c.file] = f
	}
	rowBytes := int64(h.Width) * 3
	if m := rd.mapped(c.file, f); m != nil {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("histogram: %s: %w", path, err)
		}
		b := m.Bytes()
		end := c.off + int64(c.rows-1)*h.Stride + rowBytes
		if end > int64(len(b)) {
			return fmt.Errorf("%w: %s: file ends before byte %d (was it truncated while being read?)", ErrTruncated, path, end)
		}
		err := m.Read(func() {
			for i := range int64(c.rows) {
				o := c.off + i*h.Stride
				fn(b[o : o+rowBytes])
			}
		})
		if err != nil {
			return fmt.Errorf("histogram: %w", err)
		}
		// Bytes of the last page that a truncation cut off read as
		// zeros, not as a fault: the file must still hold the chunk.
		if st, err := f.Stat(); err != nil || st.Size() < end {
			return fmt.Errorf("%w: %s: file ends before byte %d (was it truncated while being read?)", ErrTruncated, path, end)
		}
		return nil
	}
	read := func(buf []byte, off int64) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("histogram: %s: %w", path, err)
		}
		if _, err := f.ReadAt(buf, off); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%w: %s: file ends before byte %d (was it truncated while being read?)", ErrTruncated, path, off+int64(len(buf)))
			}
			return fmt.Errorf("histogram: %s: %w", path, err)
		}
		return nil
	}
	if h.Stride <= int64(len(rd.buf)) {
		per := int(int64(len(rd.buf)) / h.Stride)
		for r := 0; r < c.rows; r += per {
			n := min(per, c.rows-r)
			// The last row of the file need not be padded in the read.
			buf := rd.buf[:int64(n-1)*h.Stride+rowBytes]
			if err := read(buf, c.off+int64(r)*h.Stride); err != nil {
				return err
			}
			for i := range n {
				o := int64(i) * h.Stride
				fn(buf[o : o+rowBytes])
			}
		}
		return nil
	}
	piece := int64(len(rd.buf)) / 3 * 3
	for r := 0; r < c.rows; r++ {
		off := c.off + int64(r)*h.Stride
		for done := int64(0); done < rowBytes; done += piece {
			buf := rd.buf[:min(piece, rowBytes-done)]
			if err := read(buf, off+done); err != nil {
				return err
			}
			fn(buf)
		}
	}
	return nil
}

// eachCompressed is eachRow for chunk c of a compressed file, the file's
// every row: its decompressed bytes are read as a stream into the read
// buffer, as many rows at a time as it holds. Bytes that end before the
// last row are an error wrapping ErrTruncated.
func (rd *reader) eachCompressed(ctx context.Context, c chunk, fn func(px []byte)) error {
	path := rd.p.files[c.file]
	h := rd.p.hdrs[c.file]
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("histogram: %s: %w", path, err)
	}
	zr, _, err := zio.Open(path)
	if err != nil {
		return fmt.Errorf("histogram: %w", err) // it names the file
	}
	defer zr.Close()
	pos := int64(0) // decompressed bytes read
	read := func(buf []byte) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("histogram: %s: %w", path, err)
		}
		n, err := io.ReadFull(zr, buf)
		pos += int64(n)
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return fmt.Errorf("%w: %s: decompressed data ends at byte %d, before byte %d", ErrTruncated, path, pos, pos-int64(n)+int64(len(buf)))
		case err != nil:
			return fmt.Errorf("histogram: %w", err) // it names the file
		}
		return nil
	}
	for pos < c.off {
		if err := read(rd.buf[:min(int64(len(rd.buf)), c.off-pos)]); err != nil {
			return err
		}
	}
	rowBytes := int64(h.Width) * 3
	pad := rd.buf[:0] // the padding after the last row read, read before the next
	if h.Stride <= int64(len(rd.buf)) {
		per := int(int64(len(rd.buf)) / h.Stride)
		for r := 0; r < c.rows; r += per {
			if err := read(pad); err != nil {
				return err
			}
			n := min(per, c.rows-r)
			// The last row of the file need not be padded.
			buf := rd.buf[:int64(n-1)*h.Stride+rowBytes]
			if err := read(buf); err != nil {
				return err
			}
			for i := range n {
				o := int64(i) * h.Stride
				fn(buf[o : o+rowBytes])
			}
			pad = rd.buf[:h.Stride-rowBytes]
		}
		return nil
	}
	piece := int64(len(rd.buf)) / 3 * 3
	for r := 0; r < c.rows; r++ {
		if err := read(pad); err != nil {
			return err
		}
		for done := int64(0); done < rowBytes; done += piece {
			buf := rd.buf[:min(piece, rowBytes-done)]
			if err := read(buf); err != nil {
				return err
			}
			fn(buf)
		}
		pad = rd.buf[:h.Stride-rowBytes]
	}
	return nil
}
