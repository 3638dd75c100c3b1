package filemap

import (
	"fmt"
	"os"
	"syscall"
)

// Open maps the first size bytes of f (its size when listed) read-only.
// An empty file gives an empty map.
func Open(f *os.File, size int64) (*Map, error) {
	if size == 0 {
		return &Map{name: f.Name()}, nil
	}
	if size < 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("%s: cannot map %d bytes", f.Name(), size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap: %w", f.Name(), err)
	}
	return &Map{b: b, name: f.Name()}, nil
}

// Close unmaps the file.
func (m *Map) Close() error {
	if m.b == nil {
		return nil
	}
	b := m.b
	m.b = nil
	if err := syscall.Munmap(b); err != nil {
		return fmt.Errorf("%s: munmap: %w", m.name, err)
	}
	return nil
}
