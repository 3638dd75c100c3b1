//go:build !linux

package filemap

import (
	"errors"
	"fmt"
	"os"
)

// Open reports errors.ErrUnsupported here: the caller reads the file.
func Open(f *os.File, size int64) (*Map, error) { return OpenRange(f, 0, size) }

// OpenRange reports errors.ErrUnsupported here: the caller reads the file.
func OpenRange(f *os.File, off, n int64) (*Map, error) {
	return nil, fmt.Errorf("%s: %w", f.Name(), errors.ErrUnsupported)
}

// Close does nothing.
func (m *Map) Close() error { return nil }
