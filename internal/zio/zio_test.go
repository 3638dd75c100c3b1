package zio_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/internal/zio"
	"github.com/pgasmr/pgasmr/internal/zio/ziotest"
)

func TestFormatNames(t *testing.T) {
	for _, c := range []struct {
		f         zio.Format
		name, ext string
	}{
		{zio.None, "none", ""},
		{zio.Gzip, "gzip", ".gz"},
		{zio.Bzip2, "bzip2", ".bz2"},
		{zio.Zstd, "zstd", ".zst"},
		{zio.Format(9), "Format(9)", ""},
	} {
		if got := c.f.String(); got != c.name {
			t.Errorf("Format(%d).String() = %q; want %q", int(c.f), got, c.name)
		}
		if got := c.f.Ext(); got != c.ext {
			t.Errorf("Format(%d).Ext() = %q; want %q", int(c.f), got, c.ext)
		}
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		head string
		want zio.Format
	}{
		{"", zio.None},
		{"hello, world", zio.None},
		{"\x1f\x8b\x08\x00", zio.Gzip},
		{"\x1f\x8b\x07\x00", zio.None}, // not deflate
		{"\x1f\x8b", zio.None},
		{"\x28\xb5\x2f\xfd\x00", zio.Zstd},
		{"\x50\x2a\x4d\x18\x00", zio.Zstd}, // skippable frames
		{"\x5f\x2a\x4d\x18", zio.Zstd},
		{"\x60\x2a\x4d\x18", zio.None},
		{"BZh9\x31\x41\x59\x26\x53\x59", zio.Bzip2},
		{"BZh1\x17\x72\x45\x38\x50\x90", zio.Bzip2}, // an empty stream
		{"BZh0\x31\x41\x59\x26\x53\x59", zio.None},
		{"BZh9 is how our notes start", zio.None},
		{"BZh9\x31\x41\x59", zio.None}, // too short to tell
		{"BZh", zio.None},
	} {
		if got := zio.Detect([]byte(c.head)); got != c.want {
			t.Errorf("Detect(%q) = %v; want %v", c.head, got, c.want)
		}
	}
}

func TestByName(t *testing.T) {
	for name, want := range map[string]zio.Format{
		"a.gz": zio.Gzip, "A.GZ": zio.Gzip, "a.bz2": zio.Bzip2, "d/a.txt.zst": zio.Zstd,
		"a.txt": zio.None, ".gz": zio.None, "a.tgz": zio.None, "a.zstd": zio.None,
	} {
		if got := zio.ByName(name); got != want {
			t.Errorf("ByName(%q) = %v; want %v", name, got, want)
		}
	}
}

// readAllFile reads path through Open, streaming.
func readAllFile(path string) ([]byte, zio.Format, error) {
	rc, f, err := zio.Open(path)
	if err != nil {
		return nil, zio.None, err
	}
	b, err := io.ReadAll(rc)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	return b, f, err
}

// TestFixtures reads files made by the reference tools (bzip2 1.0.8,
// gzip -9, zstd 1.5.4 -19; multi.* are two streams or frames
// concatenated).
func TestFixtures(t *testing.T) {
	want, err := os.ReadFile("testdata/text.txt")
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]zio.Format{
		"text.txt": zio.None, "text.txt.gz": zio.Gzip, "text.txt.bz2": zio.Bzip2, "text.txt.zst": zio.Zstd,
		"multi.txt.bz2": zio.Bzip2, "multi.txt.zst": zio.Zstd,
	} {
		path := filepath.Join("testdata", name)
		got, gf, err := readAllFile(path)
		if err != nil || gf != f || !bytes.Equal(got, want) {
			t.Errorf("Open(%s): %d bytes, %v, %v; want %d bytes, %v", name, len(got), gf, err, len(want), f)
		}
		got, gf, err = zio.ReadAll(path, 0)
		if err != nil || gf != f || !bytes.Equal(got, want) {
			t.Errorf("ReadAll(%s): %d bytes, %v, %v; want %d bytes, %v", name, len(got), gf, err, len(want), f)
		}
		if gf, err := zio.DetectFile(path); gf != f || err != nil {
			t.Errorf("DetectFile(%s) = %v, %v; want %v", name, gf, err, f)
		}
	}
}

// inputs are the contents the round trips compress.
func inputs() map[string][]byte {
	r := rand.New(rand.NewPCG(34, 1))
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	text, err := os.ReadFile("testdata/text.txt")
	if err != nil {
		panic(err)
	}
	return map[string][]byte{
		"empty":  nil,
		"one":    []byte("x"),
		"runs":   bytes.Repeat([]byte("aaaaabbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbc"), 50),
		"zeros":  make([]byte, 1<<20),
		"text":   text,
		"random": random,
	}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for name, data := range inputs() {
		for _, f := range append([]zio.Format{zio.None}, ziotest.Formats...) {
			t.Run(fmt.Sprintf("%s/%v", name, f), func(t *testing.T) {
				z := ziotest.Compress(f, data)
				path := filepath.Join(dir, name+"-"+f.String()+f.Ext())
				if err := os.WriteFile(path, z, 0o644); err != nil {
					t.Fatal(err)
				}
				got, gf, err := readAllFile(path)
				if err != nil || gf != f || !bytes.Equal(got, data) {
					t.Errorf("Open: %d bytes, %v, %v; want %d bytes, %v", len(got), gf, err, len(data), f)
				}
				got, gf, err = zio.ReadAll(path, int64(len(data)))
				if err != nil || gf != f || !bytes.Equal(got, data) {
					t.Errorf("ReadAll: %d bytes, %v, %v; want %d bytes, %v", len(got), gf, err, len(data), f)
				}
				rc, err := zio.NewReader(bytes.NewReader(z), f)
				if err != nil {
					t.Fatal(err)
				}
				got, err = io.ReadAll(rc)
				if err != nil || !bytes.Equal(got, data) {
					t.Errorf("NewReader: %d bytes, %v; want %d bytes", len(got), err, len(data))
				}
				if err := rc.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
		}
	}
}

// TestConcatenated: gzip members, bzip2 streams and zstd frames (and
// skippable frames) one after another are one stream.
func TestConcatenated(t *testing.T) {
	a, b := []byte("first part, "), []byte("second part\n")
	skippable := []byte{0x5a, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	want := cat(a, b)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
		f    zio.Format
	}{
		{"members.gz", cat(ziotest.Compress(zio.Gzip, a), ziotest.Compress(zio.Gzip, b)), zio.Gzip},
		{"streams.bz2", cat(ziotest.Compress(zio.Bzip2, a), ziotest.Compress(zio.Bzip2, nil), ziotest.Compress(zio.Bzip2, b)), zio.Bzip2},
		{"frames.zst", cat(ziotest.Compress(zio.Zstd, a), ziotest.Compress(zio.Zstd, b)), zio.Zstd},
		{"skippable.zst", cat(skippable, ziotest.Compress(zio.Zstd, a), skippable, ziotest.Compress(zio.Zstd, b)), zio.Zstd},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, f, err := readAllFile(path)
		if err != nil || f != c.f || !bytes.Equal(got, want) {
			t.Errorf("%s: %q, %v, %v; want %q, %v", c.name, got, f, err, want, c.f)
		}
	}
}

// checkCorrupt checks that err is bad data of path.
func checkCorrupt(t *testing.T, what string, err error, path string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: no error; want one wrapping ErrCorrupt", what)
	case !errors.Is(err, zio.ErrCorrupt):
		t.Errorf("%s: %v; want an error wrapping ErrCorrupt", what, err)
	case !strings.HasPrefix(err.Error(), path+": "):
		t.Errorf("%s: %q; want it to start with the path %q", what, err, path)
	}
}

// TestTruncated: every proper prefix of a compressed file, read through
// Open and ReadAll, is an error naming the file, never a short stream.
func TestTruncated(t *testing.T) {
	data, err := os.ReadFile("testdata/text.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range ziotest.Formats {
		z := ziotest.Compress(f, data)
		if f == zio.Bzip2 { // the reference encoder's, too
			if z, err = os.ReadFile("testdata/text.txt.bz2"); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, "cut.txt"+f.Ext())
		for n := range len(z) {
			if err := os.WriteFile(path, z[:n], 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := readAllFile(path)
			checkCorrupt(t, fmt.Sprintf("%v cut to %d of %d bytes: Open", f, n, len(z)), err, path)
			if n%5 == 0 {
				_, _, err = zio.ReadAll(path, 0)
				checkCorrupt(t, fmt.Sprintf("%v cut to %d of %d bytes: ReadAll", f, n, len(z)), err, path)
			}
		}
	}
}

// TestBitFlips: a compressed file with any one bit flipped reads as an
// error naming the file, or (a flip in a field no check covers, like
// gzip's modification time) as the same bytes: never as other bytes.
func TestBitFlips(t *testing.T) {
	data := []byte("Real corpora ship compressed: a silent wrong answer is the worst answer.\n")
	dir := t.TempDir()
	for _, f := range ziotest.Formats {
		z := ziotest.Compress(f, data)
		path := filepath.Join(dir, "flip"+f.Ext())
		errs := 0
		for bit := range 8 * len(z) {
			b := bytes.Clone(z)
			b[bit/8] ^= 1 << (bit % 8)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			got, _, err := zio.ReadAll(path, 1<<20)
			if err != nil {
				errs++
				checkCorrupt(t, fmt.Sprintf("%v with bit %d flipped", f, bit), err, path)
				continue
			}
			if !bytes.Equal(got, data) {
				t.Errorf("%v with bit %d flipped: read %q, no error; want an error", f, bit, got)
			}
		}
		if errs == 0 {
			t.Errorf("%v: no flipped bit was an error", f)
		}
	}
}

func TestNameMismatch(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// A name that promises compression, with text: an error.
	for _, c := range []struct{ name, data, want string }{
		{"x.gz", "hello, world\n", `: not gzip data (starts "hello, w")`},
		{"x.bz2", "BZh9 is text", `: not bzip2 data (starts "BZh9 is ")`},
		{"x.zst", "", ": not zstd data (empty file)"},
	} {
		path := write(c.name, []byte(c.data))
		_, _, err := zio.Open(path)
		checkCorrupt(t, "Open("+c.name+")", err, path)
		if err != nil && err.Error() != path+c.want {
			t.Errorf("Open(%s): %q; want %q", c.name, err, path+c.want)
		}
		_, err = zio.DetectFile(path)
		checkCorrupt(t, "DetectFile("+c.name+")", err, path)
		_, _, err = zio.ReadAll(path, 0)
		checkCorrupt(t, "ReadAll("+c.name+")", err, path)
	}
	// Content wins: zstd data named .gz is read as zstd, gzip data with
	// no extension as gzip, and text starting "BZh" as text.
	for _, c := range []struct {
		name string
		data []byte
		want []byte
		f    zio.Format
	}{
		{"x-zstd.gz", ziotest.Compress(zio.Zstd, []byte("zstd\n")), []byte("zstd\n"), zio.Zstd},
		{"x-gzip", ziotest.Compress(zio.Gzip, []byte("gzip\n")), []byte("gzip\n"), zio.Gzip},
		{"notes.txt", []byte("BZh9 notes\n"), []byte("BZh9 notes\n"), zio.None},
		{"short", []byte("BZ"), []byte("BZ"), zio.None},
	} {
		path := write(c.name, c.data)
		got, f, err := readAllFile(path)
		if err != nil || f != c.f || !bytes.Equal(got, c.want) {
			t.Errorf("%s: %q, %v, %v; want %q, %v", c.name, got, f, err, c.want, c.f)
		}
	}
}

func TestReadAllLimit(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 1<<20)
	for _, f := range append([]zio.Format{zio.None}, ziotest.Formats...) {
		path := filepath.Join(dir, "bomb"+f.Ext())
		ziotest.WriteFile(t, path, f, data)
		for _, c := range []struct {
			limit int64
			ok    bool
		}{{0, true}, {-1, true}, {1 << 20, true}, {1<<20 - 1, false}, {1000, false}} {
			got, _, err := zio.ReadAll(path, c.limit)
			switch {
			case c.ok && (err != nil || len(got) != len(data)):
				t.Errorf("ReadAll(%s, %d): %d bytes, %v; want %d bytes", path, c.limit, len(got), err, len(data))
			case !c.ok && (!errors.Is(err, zio.ErrTooLarge) || !strings.HasPrefix(err.Error(), path+": ")):
				t.Errorf("ReadAll(%s, %d): %v; want ErrTooLarge naming the file", path, c.limit, err)
			}
		}
	}
}

// failReader gives its data, then err.
type failReader struct {
	data []byte
	err  error
}

func (r *failReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestSourceError: a failed read of the compressed bytes is that error,
// with the name, not bad data.
func TestSourceError(t *testing.T) {
	eio := errors.New("input/output error")
	data := bytes.Repeat([]byte("some text to compress "), 3000)
	for _, f := range ziotest.Formats {
		z := ziotest.Compress(f, data)
		rc, err := zio.NewNamedReader(&failReader{z[:len(z)/2], eio}, "disk.dat", f)
		if err == nil {
			_, err = io.ReadAll(rc)
			rc.Close()
		}
		if !errors.Is(err, eio) || errors.Is(err, zio.ErrCorrupt) || !strings.HasPrefix(err.Error(), "disk.dat: ") {
			t.Errorf("%v: %v; want the source's error, naming disk.dat, not ErrCorrupt", f, err)
		}
	}
}

// TestZstdWindow: a window past MaxZstdWindow is an error, not memory;
// one at it is read.
func TestZstdWindow(t *testing.T) {
	// A frame: no content size, no checksum, window 2^(10+exp), one raw
	// last block of "abc".
	frame := func(exp byte) []byte {
		return []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, exp << 3, 3<<3 | 1, 0, 0, 'a', 'b', 'c'}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "max.zst")
	if err := os.WriteFile(path, frame(17), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _, err := readAllFile(path); err != nil || string(got) != "abc" {
		t.Errorf("a 128 MiB window: %q, %v; want \"abc\"", got, err)
	}
	path = filepath.Join(dir, "long.zst")
	if err := os.WriteFile(path, frame(18), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := readAllFile(path)
	checkCorrupt(t, "a 256 MiB window", err, path)
	if err != nil && !strings.Contains(err.Error(), "window") {
		t.Errorf("a 256 MiB window: %v; want it to say window", err)
	}
}

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "zio-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "hello.txt.gz")
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte("hello, compressed world\n"))
	w.Close()
	os.WriteFile(path, b.Bytes()[:b.Len()-3], 0o644) // truncated

	rc, f, err := zio.Open(path)
	if err != nil {
		panic(err)
	}
	defer rc.Close()
	_, err = io.ReadAll(rc)
	fmt.Println(f, errors.Is(err, zio.ErrCorrupt), strings.TrimPrefix(err.Error(), dir+"/"))
	// Output: gzip true hello.txt.gz: corrupt gzip data: unexpected EOF
}
