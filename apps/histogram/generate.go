package histogram

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// gen makes deterministic pixels with a non-uniform colour distribution:
// red follows a horizontal gradient with triangular noise, green is skewed
// towards dark values, and blue mixes a narrow bright band (a "sky") with
// a vertical gradient.
type gen struct{ x uint64 }

func (g *gen) init(seed uint64) {
	// splitmix64 of the seed, never zero (xorshift's fixed point).
	z := seed + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	g.x = z ^ z>>31 | 1
}

func (g *gen) next() uint64 {
	g.x ^= g.x << 13
	g.x ^= g.x >> 7
	g.x ^= g.x << 17
	return g.x * 0x2545f4914f6cdd1d
}

// pixel writes the B, G, R bytes of pixel (x, y) of a w×h image to dst.
func (g *gen) pixel(dst []byte, x, y, w, h int) {
	r := g.next()
	red := x*256/w + int(r&15) + int(r>>4&15) - 15
	red = min(max(red, 0), 255)
	a := int(r >> 8 & 255)
	green := a * a >> 8
	var blue int
	if r>>16&1 == 0 {
		blue = 180 + int(r>>17&31)
	} else {
		blue = (y*256/h + int(r>>24&7)) & 255
	}
	dst[0], dst[1], dst[2] = byte(blue), byte(green), byte(red)
}

// Generate writes a width×height 24-bit uncompressed BMP
// (BITMAPINFOHEADER, bottom-up, rows padded to 4 bytes) with a non-uniform
// colour distribution, the same bytes for the same seed. The file has
// 54 + height*((3*width+3)&^3) bytes.
func Generate(w io.Writer, width, height int, seed uint64) error {
	if width <= 0 || height <= 0 || width > math.MaxInt32/3 || height > math.MaxInt32 {
		return fmt.Errorf("histogram: Generate(%d×%d): want 1 ≤ width ≤ %d and 1 ≤ height ≤ %d", width, height, math.MaxInt32/3, math.MaxInt32)
	}
	stride := (int64(width)*3 + 3) &^ 3
	size, ok := mulAdd(stride, int64(height), 54)
	if !ok || size > math.MaxUint32 {
		return fmt.Errorf("histogram: Generate(%d×%d): %d-byte rows make a file over 4 GiB, the BMP limit", width, height, stride)
	}
	le := binary.LittleEndian
	hdr := make([]byte, 54)
	hdr[0], hdr[1] = 'B', 'M'
	le.PutUint32(hdr[2:], uint32(size))
	le.PutUint32(hdr[10:], 54)
	le.PutUint32(hdr[14:], 40)
	le.PutUint32(hdr[18:], uint32(width))
	le.PutUint32(hdr[22:], uint32(height))
	le.PutUint16(hdr[26:], 1)
	le.PutUint16(hdr[28:], 24)
	le.PutUint32(hdr[34:], uint32(stride*int64(height)))
	le.PutUint32(hdr[38:], 2835) // 72 dpi
	le.PutUint32(hdr[42:], 2835)
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.Write(hdr); err != nil {
		return fmt.Errorf("histogram: Generate: %w", err)
	}
	var g gen
	g.init(seed)
	row := make([]byte, stride)
	for y := height - 1; y >= 0; y-- { // bottom-up: the last image row first
		for x := range width {
			g.pixel(row[3*x:], x, y, width, height)
		}
		if _, err := bw.Write(row); err != nil {
			return fmt.Errorf("histogram: Generate: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("histogram: Generate: %w", err)
	}
	return nil
}

// GenerateWidth is the image width GenerateBytes uses for large files.
const GenerateWidth = 4096

// SizeFor returns the dimensions GenerateBytes uses for a file of about
// size bytes: width GenerateWidth (less for small sizes) and the fewest rows
// that make the file at least size bytes.
func SizeFor(size int64) (width, height int) {
	width = GenerateWidth
	if size < 54+GenerateWidth*3*16 {
		width = max(1, int((size-54)/3/16))
	}
	stride := (int64(width)*3 + 3) &^ 3
	height = int(max(1, (size-54+stride-1)/stride))
	return width, height
}

// GenerateBytes writes a BMP of at least size bytes (and less than one row
// more) with Generate, its dimensions from SizeFor.
func GenerateBytes(w io.Writer, size int64, seed uint64) error {
	width, height := SizeFor(size)
	return Generate(w, width, height, seed)
}
