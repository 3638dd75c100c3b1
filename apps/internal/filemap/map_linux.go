package filemap

import (
	"fmt"
	"os"
	"syscall"
)

// Open maps the first size bytes of f (its size when listed) read-only;
// pages are read in as they are touched. An empty file gives an empty map.
func Open(f *os.File, size int64) (*Map, error) { return mapRange(f, 0, size, 0) }

// OpenRange maps the bytes [off, off+n) of f read-only, every page read
// in at once (MAP_POPULATE: a short-lived map then takes no faults).
func OpenRange(f *os.File, off, n int64) (*Map, error) {
	return mapRange(f, off, n, syscall.MAP_POPULATE)
}

func mapRange(f *os.File, off, n int64, flags int) (*Map, error) {
	if n == 0 {
		return &Map{name: f.Name(), off: off}, nil
	}
	page := int64(os.Getpagesize())
	lo := off / page * page
	if off < 0 || n < 0 || int64(int(off+n-lo)) != off+n-lo {
		return nil, fmt.Errorf("%s: cannot map %d bytes at %d", f.Name(), n, off)
	}
	mem, err := syscall.Mmap(int(f.Fd()), lo, int(off+n-lo), syscall.PROT_READ, syscall.MAP_SHARED|flags)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap: %w", f.Name(), err)
	}
	return &Map{b: mem[off-lo:], mem: mem, name: f.Name(), off: off}, nil
}

// Close unmaps the file.
func (m *Map) Close() error {
	if m.mem == nil {
		return nil
	}
	mem := m.mem
	m.b, m.mem = nil, nil
	if err := syscall.Munmap(mem); err != nil {
		return fmt.Errorf("%s: munmap: %w", m.name, err)
	}
	return nil
}
