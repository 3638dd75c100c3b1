package histogram

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// rgb is one pixel as the test sees it (not in BMP's B, G, R order).
type rgb struct{ r, g, b byte }

// picture is an image in memory, rows top to bottom.
type picture [][]rgb

// encoding says how the test encoder lays out a file.
type encoding struct {
	info    int  // DIB header size: 40, 52, 56, 108 or 124
	topDown bool // negative height, top row first
	gap     int  // bytes between the headers and the pixel data
}

// encodeBMP is the test's own BMP writer, independent of Generate: it
// writes pic as 24-bit BI_RGB with rows padded to 4 bytes (padding bytes
// 0xEE, so that counting them would show).
func encodeBMP(pic picture, e encoding) []byte {
	h, w := len(pic), len(pic[0])
	pad := (4 - (3*w)%4) % 4
	off := 14 + e.info + e.gap
	out := make([]byte, off, off+h*(3*w+pad))
	le := binary.LittleEndian
	out[0], out[1] = 'B', 'M'
	le.PutUint32(out[10:], uint32(off))
	le.PutUint32(out[14:], uint32(e.info))
	le.PutUint32(out[18:], uint32(w))
	ht := int32(h)
	if e.topDown {
		ht = -ht
	}
	le.PutUint32(out[22:], uint32(ht))
	le.PutUint16(out[26:], 1)
	le.PutUint16(out[28:], 24)
	if e.info >= 108 {
		out[14+56] = 'B' // LCS_sRGB-ish colour space tag, ignored by readers
	}
	for i := 14 + e.info; i < off; i++ {
		out[i] = 0xAB
	}
	for i := range h {
		y := h - 1 - i
		if e.topDown {
			y = i
		}
		for _, p := range pic[y] {
			out = append(out, p.b, p.g, p.r)
		}
		for range pad {
			out = append(out, 0xEE)
		}
	}
	le.PutUint32(out[2:], uint32(len(out)))
	return out
}

// oracle counts pic's channels directly.
func oracle(dst *Result, pic picture) {
	dst.Images++
	for _, row := range pic {
		for _, p := range row {
			dst.Pixels++
			dst.Red[p.r]++
			dst.Green[p.g]++
			dst.Blue[p.b]++
		}
	}
}

// randomPicture makes a w×h picture with skewed channels.
func randomPicture(rng *rand.Rand, w, h int) picture {
	pic := make(picture, h)
	for y := range pic {
		pic[y] = make([]rgb, w)
		for x := range pic[y] {
			pic[y][x] = rgb{byte(rng.IntN(256)), byte(rng.IntN(16) * rng.IntN(16)), byte(200 + rng.IntN(3))}
		}
	}
	return pic
}

func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
