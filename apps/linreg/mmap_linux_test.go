package linreg

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/mr"
)

// TestMappedTruncation: reading a mapped file that was truncated faults;
// sums' guard (SetPanicOnFault, recover, faultError) turns the fault into
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
	m, unmap, err := mapRange(f, 0, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	err = func() (err error) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if v := recover(); v != nil {
				err = faultError(v, mr.Split{Path: p, Len: 1 << 16})
			}
		}()
		var s Sums
		sumInt8(&s, m, new([65536]uint32))
		return nil
	}()
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("reading a truncated mapping: %v; want a fault error naming %s", err, p)
	}
}
