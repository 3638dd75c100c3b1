package linreg

import (
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
