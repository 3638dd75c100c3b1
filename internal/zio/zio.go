package zio

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Format is a compression format.
type Format int

// The formats; None is a file that is not compressed.
const (
	None Format = iota
	Gzip
	Bzip2
	Zstd
)

// String returns "none", "gzip", "bzip2" or "zstd".
func (f Format) String() string {
	switch f {
	case None:
		return "none"
	case Gzip:
		return "gzip"
	case Bzip2:
		return "bzip2"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Ext returns the format's file name extension: ".gz", ".bz2", ".zst",
// or "" for None.
func (f Format) Ext() string {
	switch f {
	case Gzip:
		return ".gz"
	case Bzip2:
		return ".bz2"
	case Zstd:
		return ".zst"
	}
	return ""
}

// ErrCorrupt is wrapped by every error about bad compressed data: a
// truncated or damaged file, or a name that promises a format its content
// lacks.
var ErrCorrupt = errors.New("corrupt compressed data")

// ErrTooLarge is wrapped by ReadAll's error for a file that decompresses
// to more bytes than its limit.
var ErrTooLarge = errors.New("decompressed data larger than the limit")

// MagicLen is the number of leading bytes Detect needs to tell every
// format (bzip2's is the longest); DetectFile reads that many.
const MagicLen = 10

// MaxZstdWindow is the largest zstd window (history) a reader accepts, as
// the zstd command's default: a file compressed with a longer window
// (zstd --long=28 and above) is an error, not gigabytes of memory.
const MaxZstdWindow = 128 << 20

const (
	zstdMagic          = 0xFD2FB528 // little-endian
	zstdSkippableMagic = 0x184D2A50 // low 4 bits: any
)

var (
	bzip2BlockMagic = []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59} // BCD pi
	bzip2EOSMagic   = []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90} // BCD sqrt(pi)
)

// Detect names the format whose magic head starts with: gzip (1f 8b 08),
// bzip2 ("BZh", a block size '1'-'9', then a block's or an empty
// stream's end magic: 10 bytes), zstd (a frame, 28 b5 2f fd, or a
// skippable frame, 5? 2a 4d 18). Anything else, text that starts "BZh"
// included, is None. A head shorter than a format's magic is not that
// format.
func Detect(head []byte) Format {
	switch {
	case len(head) >= 3 && head[0] == 0x1f && head[1] == 0x8b && head[2] == 8:
		return Gzip
	case len(head) >= 4 && (binary.LittleEndian.Uint32(head) == zstdMagic ||
		binary.LittleEndian.Uint32(head)&^0xF == zstdSkippableMagic):
		return Zstd
	case len(head) >= 10 && head[0] == 'B' && head[1] == 'Z' && head[2] == 'h' &&
		'1' <= head[3] && head[3] <= '9' &&
		(bytes.Equal(head[4:10], bzip2BlockMagic) || bytes.Equal(head[4:10], bzip2EOSMagic)):
		return Bzip2
	}
	return None
}

// ByName returns the format name's extension promises (.gz, .bz2 or .zst,
// in any case), or None. It reads nothing: for planning, like keeping a
// file that is probably compressed in one piece; Detect decides.
func ByName(name string) Format {
	for _, f := range [...]Format{Gzip, Bzip2, Zstd} {
		ext := f.Ext()
		if len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext) {
			return f
		}
	}
	return None
}

// DetectHead is DetectFile for a file whose first bytes (at least
// MagicLen of them, or the whole file) are head: the format of head, or,
// when head has none but name ends in a compressed format's extension, a
// *CorruptError "x.gz: not gzip data (starts "...")".
func DetectHead(name string, head []byte) (Format, error) {
	f := Detect(head)
	if f != None {
		return f, nil
	}
	if want := ByName(name); want != None {
		why := &notFormat{fmt.Sprintf("not %s data (empty file)", want)}
		if len(head) > 0 {
			why.msg = fmt.Sprintf("not %s data (starts %q)", want, head[:min(len(head), 8)])
		}
		return None, &CorruptError{Path: name, Format: want, Err: why}
	}
	return None, nil
}

// DetectFile reads the first MagicLen bytes of path and returns their
// format (DetectHead): content decides, but a name ending in .gz, .bz2 or
// .zst whose content lacks the format's magic is an error wrapping
// ErrCorrupt.
func DetectFile(path string) (Format, error) {
	file, err := os.Open(path)
	if err != nil {
		return None, err // *PathError names the file
	}
	defer file.Close()
	var buf [MagicLen]byte
	n, err := io.ReadFull(file, buf[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return None, err
	}
	return DetectHead(path, buf[:n])
}

// A CorruptError is bad compressed data in a file; it wraps ErrCorrupt
// (errors.Is) and Err.
type CorruptError struct {
	Path   string // the file, or "" from NewReader
	Format Format // the format the file was read as (or its name promised)
	Err    error  // what was wrong: the decompressor's error, io.ErrUnexpectedEOF for a truncated file
}

func (e *CorruptError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	var nf *notFormat
	if errors.As(e.Err, &nf) {
		b.WriteString(e.Err.Error())
		return b.String()
	}
	fmt.Fprintf(&b, "corrupt %s data: %v", e.Format, e.Err)
	return b.String()
}

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func (e *CorruptError) Unwrap() error { return e.Err }

// notFormat is a name's promise that the content breaks.
type notFormat struct{ msg string }

func (e *notFormat) Error() string { return e.msg }

// NewReader decompresses r in format f (None: r itself, with a Close that
// does nothing). Concatenated gzip members, bzip2 streams and zstd frames
// are read through. Bad data is a *CorruptError without a path; r's own
// errors are returned as r gave them. Close releases the decompressor,
// not r. An unknown f is an error.
func NewReader(r io.Reader, f Format) (io.ReadCloser, error) {
	return NewNamedReader(r, "", f)
}

// NewNamedReader is NewReader for the contents of file name, read from r
// (a file opened and not read, or read only with ReadAt): its errors name
// the file as Open's do. Close releases the decompressor, not r.
func NewNamedReader(r io.Reader, name string, f Format) (io.ReadCloser, error) {
	if f == None {
		return io.NopCloser(r), nil
	}
	return newReader(r, name, f, nil)
}

// Open opens path, detects its format (DetectHead) and returns a reader of
// its decompressed bytes, which closes the file. Every error of Open, and
// of the reader's Read and Close, names the file; bad data wraps
// ErrCorrupt: "PATH: corrupt gzip data: unexpected EOF". An uncompressed
// file's reader is the *os.File.
func Open(path string) (io.ReadCloser, Format, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, None, err // *PathError names the file
	}
	rc, f, err := openFile(file, path)
	if err != nil {
		file.Close()
		return nil, None, err
	}
	return rc, f, nil
}

// openFile detects the format of file, opened as path and not read, and
// returns a reader of its contents that closes it.
func openFile(file *os.File, path string) (io.ReadCloser, Format, error) {
	var buf [MagicLen]byte
	n, err := io.ReadFull(file, buf[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, None, err
	}
	f, err := DetectHead(path, buf[:n])
	if err != nil {
		return nil, None, err
	}
	var src io.Reader = file
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		src = io.MultiReader(bytes.NewReader(buf[:n]), file) // not seekable: put the head back
	} else if f == None {
		return file, None, nil
	}
	if f == None {
		return struct {
			io.Reader
			io.Closer
		}{src, file}, None, nil
	}
	rc, err := newReader(src, path, f, file)
	return rc, f, err
}

// srcBuf is the read size of a decompressor's source.
const srcBuf = 64 << 10

// reader decompresses a source, naming it in its errors.
type reader struct {
	name   string
	format Format
	src    *srcReader
	dec    io.Reader
	close  func() error // the decompressor's, or nil
	file   io.Closer    // closed by Close, or nil
	err    error        // sticky
}

// srcReader records the first error of a decompressor's source other than
// io.EOF: an error of the decompressor after it is the source's, not bad
// data.
type srcReader struct {
	r   io.Reader
	err error
}

func (s *srcReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

func newReader(r io.Reader, name string, f Format, file io.Closer) (io.ReadCloser, error) {
	zr := &reader{name: name, format: f, src: &srcReader{r: r}, file: file}
	// gzip and bzip2 read a byte at a time from an io.ByteReader; zstd
	// reads headers of a few bytes: one buffer for all.
	br := bufio.NewReaderSize(zr.src, srcBuf)
	switch f {
	case Gzip:
		gz, err := gzip.NewReader(br) // reads the first header
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, zr.fail(err)
		}
		zr.dec, zr.close = gz, gz.Close
	case Bzip2:
		zr.dec = bzip2.NewReader(br)
	case Zstd:
		d, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxZstdWindow))
		if err != nil {
			return nil, zr.fail(err)
		}
		zr.dec, zr.close = d, func() error { d.Close(); return nil }
	default:
		return nil, fmt.Errorf("zio: unknown format %v", f)
	}
	return zr, nil
}

// fail returns the error to report for the decompressor's error err and
// makes it sticky.
func (r *reader) fail(err error) error {
	switch {
	case r.src.err != nil:
		err = r.src.err
		var pe *fs.PathError
		if r.name != "" && !errors.As(err, &pe) {
			err = fmt.Errorf("%s: %w", r.name, err)
		}
	case errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded):
		err = &CorruptError{Path: r.name, Format: r.format,
			Err: fmt.Errorf("window larger than the %d MiB limit: %w", MaxZstdWindow>>20, err)}
	default:
		err = &CorruptError{Path: r.name, Format: r.format, Err: err}
	}
	r.err = err
	return err
}

func (r *reader) Read(p []byte) (n int, err error) {
	if r.err != nil {
		return 0, r.err
	}
	// A decompressor that panics on bad data is bad data, not a crash.
	defer func() {
		if v := recover(); v != nil {
			n, err = 0, r.fail(fmt.Errorf("decompressor panicked: %v", v))
		}
	}()
	n, err = r.dec.Read(p)
	if err != nil && err != io.EOF {
		err = r.fail(err)
	}
	return n, err
}

// Close releases the decompressor and closes the file of Open.
func (r *reader) Close() error {
	var errs []error
	if r.close != nil {
		// gzip's Close repeats a read error already returned.
		if err := r.close(); err != nil && r.err == nil && err != io.EOF {
			errs = append(errs, r.fail(err))
		}
		r.close = nil
	}
	if r.file != nil {
		errs = append(errs, r.file.Close()) // *PathError names the file
		r.file = nil
	}
	return errors.Join(errs...)
}

// ReadAll returns the decompressed contents of path, of format f, for
// callers that need a whole file in memory. More than limit bytes (limit
// > 0; <= 0: no bound) is an error naming the file and wrapping
// ErrTooLarge: a decompression bomb stops at limit+1 bytes read. Its
// errors are Open's.
func ReadAll(path string, limit int64) ([]byte, Format, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, None, err
	}
	rc, f, err := openFile(file, path)
	if err != nil {
		file.Close()
		return nil, None, err
	}
	hint := sizeHint(file, f)
	if limit > 0 {
		hint = min(hint, limit+1)
	}
	b, err := readAll(rc, hint, limit)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, ErrTooLarge) {
		err = fmt.Errorf("%s: %w (%d bytes)", path, err, limit)
	}
	if err != nil {
		return nil, None, err
	}
	return b, f, nil
}

// readAll reads r to its end into a buffer of first capacity hint; more
// than limit bytes (limit > 0) is ErrTooLarge.
func readAll(r io.Reader, hint, limit int64) ([]byte, error) {
	b := make([]byte, 0, max(hint, 512))
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if limit > 0 && int64(len(b)) > limit {
			return nil, ErrTooLarge
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// sizeHint guesses the decompressed size of file, of format f, for a first
// buffer: its size, or what a gzip trailer or a zstd frame header says,
// bounded by what the compressed size could give.
func sizeHint(file *os.File, f Format) int64 {
	fi, err := file.Stat()
	if err != nil {
		return 0
	}
	size := fi.Size()
	switch f {
	case None:
		return size + 1 // the read of EOF
	case Gzip:
		// ISIZE, the last member's size mod 2^32: right for one member
		// under 4 GiB.
		var t [4]byte
		if size < 18 {
			return 0
		}
		if _, err := file.ReadAt(t[:], size-4); err != nil {
			return 0
		}
		return min(int64(binary.LittleEndian.Uint32(t[:]))+1, size*1032+1)
	case Zstd:
		var h zstd.Header
		var head [zstd.HeaderMaxSize]byte
		n, _ := file.ReadAt(head[:], 0)
		if h.Decode(head[:n]) == nil && h.HasFCS && !h.Skippable {
			return min(int64(h.FrameContentSize), size*256) + 1
		}
	}
	return size * 4
}
