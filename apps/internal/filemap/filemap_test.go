package filemap

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func open(t *testing.T, data []byte) (*os.File, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, p
}

// testData is a file's bytes, not all alike.
func testData() []byte {
	data := make([]byte, 3<<16+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	return data
}

// readMap returns a copy of m's bytes, read under Read's guard.
func readMap(t *testing.T, m *Map) []byte {
	t.Helper()
	var got []byte
	if err := m.Read(func() { got = bytes.Clone(m.Bytes()) }); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestMap: the map holds the file's bytes, an empty file maps empty, and
// Close twice is harmless.
func TestMap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("maps on Linux only")
	}
	for _, d := range [][]byte{testData(), nil} {
		f, _ := open(t, d)
		m, err := Open(f, int64(len(d)))
		if err != nil {
			t.Fatal(err)
		}
		if got := readMap(t, m); !bytes.Equal(got, d) {
			t.Fatalf("%d bytes mapped differ from the file's %d", len(got), len(d))
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	}
}

// TestOpenRange: a range at any offset maps the file's bytes there.
func TestOpenRange(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("maps on Linux only")
	}
	data := testData()
	f, _ := open(t, data)
	for _, r := range [][2]int64{{0, 10}, {4095, 2}, {4097, 1 << 16}, {100, int64(len(data)) - 100}, {5, 0}} {
		m, err := OpenRange(f, r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		if got := readMap(t, m); !bytes.Equal(got, data[r[0]:r[0]+r[1]]) {
			t.Errorf("range %v: %d bytes differ from the file's", r, len(got))
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadTruncated: reading a map of a file truncated meanwhile faults;
// Read returns the fault as an error naming the file.
func TestReadTruncated(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("maps on Linux only")
	}
	f, p := open(t, make([]byte, 1<<16))
	m, err := Open(f, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	sum := 0
	err = m.Read(func() {
		for _, c := range m.Bytes() {
			sum += int(c)
		}
	})
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("reading a truncated map: %v; want a fault error naming %s", err, p)
	}
}

// TestReadPanics: a panic that is not a fault is not taken for one.
func TestReadPanics(t *testing.T) {
	defer func() {
		if v := recover(); v != "boom" {
			t.Fatalf("recovered %v; want the panic to go on", v)
		}
	}()
	(&Map{name: "x"}).Read(func() { panic("boom") })
}

// TestCloseAll closes every map of a cache (their bytes are gone), skips
// nil entries and empties the cache.
func TestCloseAll(t *testing.T) {
	data := testData()
	f, _ := open(t, data)
	a, err := Open(f, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenRange(f, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	maps := map[string]*Map{"a": a, "b": b, "unmappable": nil}
	if err := CloseAll(maps); err != nil {
		t.Fatal(err)
	}
	if len(maps) != 0 {
		t.Fatalf("after CloseAll the cache holds %d entries", len(maps))
	}
	if runtime.GOOS == "linux" && (a.Bytes() != nil || b.Bytes() != nil) {
		t.Fatal("a map CloseAll closed still has bytes")
	}
	if err := CloseAll(maps); err != nil {
		t.Fatalf("CloseAll of an empty cache: %v", err)
	}
}
