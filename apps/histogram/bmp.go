package histogram

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/pgasmr/pgasmr/internal/zio"
)

// Errors a BMP header can fail with; every error from this package that
// concerns a file wraps one of them and names the file.
var (
	// ErrNotBMP: the file is not a BMP (wrong signature) or its header is
	// malformed (zero width or height, pixel data inside the header).
	ErrNotBMP = errors.New("not a valid BMP")
	// ErrUnsupported: a valid BMP this app does not read (compressed,
	// palette, 16- or 32-bit, OS/2 headers).
	ErrUnsupported = errors.New("unsupported BMP")
	// ErrTruncated: the file ends before its header or pixel data do.
	ErrTruncated = errors.New("truncated BMP")
)

const (
	fileHeaderSize = 14
	maxInfoSize    = 124 // BITMAPV5HEADER
	// MaxHeaderBytes is the most ParseHeader ever looks at.
	MaxHeaderBytes = fileHeaderSize + maxInfoSize
)

// Header describes a 24-bit uncompressed BMP's pixel layout.
type Header struct {
	Width, Height int   // in pixels, both > 0
	TopDown       bool  // rows stored top row first (negative height in the file)
	InfoSize      int   // DIB header size: 40, 52, 56, 108 or 124
	Offset        int64 // file offset of the first stored row
	Stride        int64 // bytes per stored row: Width*3 padded to a multiple of 4
}

// Pixels returns Width*Height.
func (h Header) Pixels() int64 { return int64(h.Width) * int64(h.Height) }

var compressions = map[uint32]string{
	1: "BI_RLE8", 2: "BI_RLE4", 3: "BI_BITFIELDS", 4: "BI_JPEG", 5: "BI_PNG",
	6: "BI_ALPHABITFIELDS", 11: "BI_CMYK", 12: "BI_CMYKRLE8", 13: "BI_CMYKRLE4",
}

// ParseHeader parses the headers of a BMP file of size bytes whose first
// bytes are b (at least min(size, MaxHeaderBytes) of them). It accepts
// 24-bit uncompressed (BI_RGB) images with a BITMAPINFOHEADER or a later
// version (V2, V3, V4, V5), stored bottom-up or top-down, and checks that
// the file holds every row. Errors wrap ErrNotBMP, ErrUnsupported or
// ErrTruncated and give the reason (not the file name).
func ParseHeader(b []byte, size int64) (Header, error) {
	if int64(len(b)) > size {
		b = b[:size]
	}
	if len(b) < 2 || b[0] != 'B' || b[1] != 'M' {
		if len(b) < 2 {
			return Header{}, fmt.Errorf("%w: file of %d bytes has no BMP signature", ErrTruncated, size)
		}
		return Header{}, fmt.Errorf("%w: signature %q, want \"BM\"", ErrNotBMP, b[:2])
	}
	if len(b) < fileHeaderSize+4 {
		return Header{}, fmt.Errorf("%w: file of %d bytes ends inside the file header", ErrTruncated, size)
	}
	le := binary.LittleEndian
	offset := int64(le.Uint32(b[10:]))
	info := le.Uint32(b[14:])
	switch info {
	case 40, 52, 56, 108, 124:
	case 12:
		return Header{}, fmt.Errorf("%w: OS/2 BITMAPCOREHEADER (12 bytes)", ErrUnsupported)
	case 16, 64:
		return Header{}, fmt.Errorf("%w: OS/2 BITMAPINFOHEADER2 (%d bytes)", ErrUnsupported, info)
	default:
		return Header{}, fmt.Errorf("%w: unknown DIB header size %d", ErrUnsupported, info)
	}
	if len(b) < fileHeaderSize+int(info) {
		return Header{}, fmt.Errorf("%w: file of %d bytes ends inside the %d-byte DIB header", ErrTruncated, size, info)
	}
	width := int32(le.Uint32(b[18:]))
	height := int32(le.Uint32(b[22:]))
	planes := le.Uint16(b[26:])
	bpp := le.Uint16(b[28:])
	comp := le.Uint32(b[30:])
	switch {
	case bpp == 1 || bpp == 2 || bpp == 4 || bpp == 8:
		return Header{}, fmt.Errorf("%w: palette image (%d bits per pixel), want 24-bit", ErrUnsupported, bpp)
	case bpp == 16 || bpp == 32:
		return Header{}, fmt.Errorf("%w: %d bits per pixel, want 24", ErrUnsupported, bpp)
	case bpp == 0:
		return Header{}, fmt.Errorf("%w: 0 bits per pixel (JPEG or PNG payload), want 24", ErrUnsupported)
	case bpp != 24:
		return Header{}, fmt.Errorf("%w: %d bits per pixel", ErrNotBMP, bpp)
	}
	if comp != 0 {
		name, ok := compressions[comp]
		if !ok {
			name = fmt.Sprintf("method %d", comp)
		}
		return Header{}, fmt.Errorf("%w: compressed (%s), want uncompressed BI_RGB", ErrUnsupported, name)
	}
	if planes != 1 {
		return Header{}, fmt.Errorf("%w: %d colour planes, want 1", ErrNotBMP, planes)
	}
	if width <= 0 {
		return Header{}, fmt.Errorf("%w: width %d, want > 0", ErrNotBMP, width)
	}
	if height == 0 || height == math.MinInt32 {
		return Header{}, fmt.Errorf("%w: height %d", ErrNotBMP, height)
	}
	h := Header{Width: int(width), Height: int(height), InfoSize: int(info), Offset: offset}
	if height < 0 {
		h.Height, h.TopDown = int(-height), true
	}
	h.Stride = (int64(h.Width)*3 + 3) &^ 3
	if offset < fileHeaderSize+int64(info) {
		return Header{}, fmt.Errorf("%w: pixel data offset %d inside the %d bytes of headers", ErrNotBMP, offset, fileHeaderSize+info)
	}
	if int64(h.Height) > (size-offset)/h.Stride {
		return Header{}, fmt.Errorf("%w: %d rows of %d bytes at offset %d need %s bytes, file has %d", ErrTruncated, h.Height, h.Stride, offset, need(h), size)
	}
	return h, nil
}

// need formats offset + stride*height without overflowing.
func need(h Header) string {
	n, ok := mulAdd(h.Stride, int64(h.Height), h.Offset)
	if !ok {
		return "more than 2^63"
	}
	return fmt.Sprint(n)
}

func mulAdd(a, b, c int64) (int64, bool) {
	if b != 0 && a > (math.MaxInt64-c)/b {
		return 0, false
	}
	return a*b + c, true
}

// ReadHeader opens path and parses its BMP header; a file compressed with
// gzip, bzip2 or zstd (package zio) is decompressed. Errors name the
// file.
func ReadHeader(path string) (Header, error) {
	h, _, err := readHeaderFormat(path)
	return h, err
}

// readHeaderFormat is ReadHeader, with the file's compression format.
func readHeaderFormat(path string) (Header, zio.Format, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, zio.None, fmt.Errorf("histogram: %w", err)
	}
	defer f.Close()
	return readHeader(f, path)
}

func readHeader(f *os.File, path string) (Header, zio.Format, error) {
	fi, err := f.Stat()
	if err != nil {
		return Header{}, zio.None, fmt.Errorf("histogram: %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return Header{}, zio.None, fmt.Errorf("histogram: %s: not a regular file (%v)", path, fi.Mode().Type())
	}
	var buf [MaxHeaderBytes]byte
	n, err := f.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Header{}, zio.None, fmt.Errorf("histogram: %s: reading the header: %w", path, err)
	}
	format, err := zio.DetectHead(path, buf[:n])
	if err != nil {
		return Header{}, zio.None, fmt.Errorf("histogram: %w", err) // it names the file
	}
	size := fi.Size()
	if format != zio.None {
		// The header of the decompressed bytes; their size is known
		// only if they end inside it, else whether they hold every row
		// is checked as they are read.
		zr, err := zio.NewNamedReader(f, path, format)
		if err != nil {
			return Header{}, format, fmt.Errorf("histogram: %w", err)
		}
		defer zr.Close()
		n, err = io.ReadFull(zr, buf[:])
		size = math.MaxInt64
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			size = int64(n)
		case err != nil:
			return Header{}, format, fmt.Errorf("histogram: %w", err) // it names the file
		}
	}
	h, err := ParseHeader(buf[:n], size)
	if err != nil {
		return Header{}, format, fmt.Errorf("histogram: %s: %w", path, err)
	}
	return h, format, nil
}
