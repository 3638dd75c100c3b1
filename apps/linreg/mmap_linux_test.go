package linreg

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/apps/internal/filemap"
)

// TestMappedTruncation: reading a mapped file that was truncated faults;
// the guard add reads maps through (filemap.Map.Read) turns the fault into
// an error naming the file instead of crashing.
func TestMappedTruncation(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, make([]byte, 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := filemap.OpenRange(f, 0, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	err = m.Read(func() {
		var s Sums
		sumInt8(&s, m.Bytes(), new([65536]uint32))
	})
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("reading a truncated mapping: %v; want a fault error naming %s", err, p)
	}
}

// TestReaderTruncated: the reader maps a file whole on its first chunk
// and reads later chunks out of the map; a file truncated in between
// must give an error naming it (a fault in the map), not a crash or
// sums of lost bytes. Where the chunk lies beyond a map made after the
// truncation, ReadAt reports the short file.
func TestReaderTruncated(t *testing.T) {
	defer func(m bool) { useMmap = m }(useMmap)
	useMmap = true
	p := filepath.Join(t.TempDir(), "pts")
	if err := os.WriteFile(p, make([]byte, 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := inputChunks([]string{p}, fmtInt8, 4096)
	if err != nil {
		t.Fatal(err)
	}
	chunk := func(i int64) chunk {
		c, err := in.At(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	rd := newReader(fmtInt8)
	defer rd.Close()
	if _, err := rd.sums(context.Background(), chunk(0)); err != nil {
		t.Fatal(err)
	}
	if len(rd.maps) != 1 || rd.maps[p] == nil {
		t.Fatalf("after the first chunk the reader holds maps %v; want %s mapped", rd.maps, p)
	}
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	_, err = rd.sums(context.Background(), chunk(5))
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("a chunk of a file truncated after it was mapped: %v; want an error naming %s", err, p)
	}
	fresh := newReader(fmtInt8)
	defer fresh.Close()
	_, err = fresh.sums(context.Background(), chunk(5))
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "offset 20480") {
		t.Fatalf("a chunk beyond a truncated file's end: %v; want an error naming %s and offset 20480", err, p)
	}
}
