package histogram

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
)

func tiny() []byte {
	return encodeBMP(picture{{{1, 2, 3}, {4, 5, 6}}, {{7, 8, 9}, {10, 11, 12}}}, encoding{info: 40})
}

func TestParseHeaderVersions(t *testing.T) {
	pic := picture{{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}}
	for _, e := range []encoding{{info: 40}, {info: 52}, {info: 56}, {info: 108}, {info: 124}, {info: 124, topDown: true}, {info: 40, gap: 17}} {
		b := encodeBMP(pic, e)
		h, err := ParseHeader(b, int64(len(b)))
		if err != nil {
			t.Fatalf("ParseHeader(%+v) = %v", e, err)
		}
		want := Header{Width: 3, Height: 1, TopDown: e.topDown, InfoSize: e.info, Offset: int64(14 + e.info + e.gap), Stride: 12}
		if h != want {
			t.Errorf("ParseHeader(%+v) = %+v; want %+v", e, h, want)
		}
	}
}

// TestBadFiles checks that every kind of bad file is an error naming the
// file and the reason, from every mode.
func TestBadFiles(t *testing.T) {
	le := binary.LittleEndian
	mod := func(f func(b []byte) []byte) []byte { return f(tiny()) }
	for _, c := range []struct {
		name   string
		b      []byte
		target error
		reason string
	}{
		{"empty", nil, ErrTruncated, "no BMP signature"},
		{"png", []byte("\x89PNG\r\n\x1a\n...."), ErrNotBMP, "signature"},
		{"short-header", tiny()[:30], ErrTruncated, "inside the 40-byte DIB header"},
		{"rle8", mod(func(b []byte) []byte { le.PutUint16(b[28:], 8); le.PutUint32(b[30:], 1); return b }), ErrUnsupported, "palette"},
		{"rle-24", mod(func(b []byte) []byte { le.PutUint32(b[30:], 1); return b }), ErrUnsupported, "compressed (BI_RLE8)"},
		{"bitfields", mod(func(b []byte) []byte { le.PutUint32(b[30:], 3); return b }), ErrUnsupported, "BI_BITFIELDS"},
		{"palette", mod(func(b []byte) []byte { le.PutUint16(b[28:], 8); return b }), ErrUnsupported, "palette image (8 bits"},
		{"16-bit", mod(func(b []byte) []byte { le.PutUint16(b[28:], 16); return b }), ErrUnsupported, "16 bits per pixel"},
		{"32-bit", mod(func(b []byte) []byte { le.PutUint16(b[28:], 32); return b }), ErrUnsupported, "32 bits per pixel"},
		{"os2", mod(func(b []byte) []byte { le.PutUint32(b[14:], 12); return b }), ErrUnsupported, "OS/2"},
		{"zero-width", mod(func(b []byte) []byte { le.PutUint32(b[18:], 0); return b }), ErrNotBMP, "width 0"},
		{"zero-height", mod(func(b []byte) []byte { le.PutUint32(b[22:], 0); return b }), ErrNotBMP, "height 0"},
		{"offset-in-header", mod(func(b []byte) []byte { le.PutUint32(b[10:], 20); return b }), ErrNotBMP, "offset 20"},
		{"truncated", tiny()[:len(tiny())-1], ErrTruncated, "2 rows of 8 bytes"},
		{"huge", mod(func(b []byte) []byte { le.PutUint32(b[18:], 1<<31-1); le.PutUint32(b[22:], 1<<31-1); return b }), ErrTruncated, "file has"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			good := writeFile(t, dir, "good.bmp", tiny())
			bad := writeFile(t, dir, c.name+".bmp", c.b)
			files := []string{good, bad}
			check := func(mode string, err error) {
				t.Helper()
				if err == nil {
					t.Fatalf("%s: no error", mode)
				}
				if !errors.Is(err, c.target) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), c.reason) {
					t.Errorf("%s: error %q; want %v naming %s and %q", mode, err, c.target, bad, c.reason)
				}
			}
			_, err := Seq(context.Background(), files, Options{})
			check("seq", err)
			_, err = Goroutines(context.Background(), files, Options{})
			check("goroutines", err)
			err = pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
				_, err := Run(ctx, r, files, DefaultOptions())
				return err
			})
			check("pgasmr", err)
		})
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Seq(context.Background(), []string{"/nonexistent/x.bmp"}, Options{})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/x.bmp") {
		t.Errorf("Seq(missing) = %v; want an error naming the file", err)
	}
}

// FuzzParseHeader: ParseHeader never panics, and what it accepts is
// consistent with the file size.
func FuzzParseHeader(f *testing.F) {
	f.Add(tiny(), int64(len(tiny())))
	f.Add(encodeBMP(picture{{{1, 2, 3}}}, encoding{info: 124, topDown: true}), int64(70))
	f.Add([]byte("BM"), int64(2))
	f.Fuzz(func(t *testing.T, b []byte, size int64) {
		if size < int64(len(b)) {
			size = int64(len(b))
		}
		h, err := ParseHeader(b, size)
		if err != nil {
			if !errors.Is(err, ErrNotBMP) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrTruncated) {
				t.Fatalf("ParseHeader error %v wraps no sentinel", err)
			}
			return
		}
		if h.Width <= 0 || h.Height <= 0 || h.Stride%4 != 0 || h.Stride < 3*int64(h.Width) || h.Offset < 54 {
			t.Fatalf("ParseHeader accepted %+v", h)
		}
		if end, ok := mulAdd(h.Stride, int64(h.Height), h.Offset); !ok || end > size {
			t.Fatalf("ParseHeader accepted %+v for a %d-byte file", h, size)
		}
		if !bytes.HasPrefix(b, []byte("BM")) {
			t.Fatalf("ParseHeader accepted signature %q", b[:2])
		}
	})
}
