// Package filemap maps input files read-only into memory, the input path
// of the apps whose kernels outrun a copy: a map saves pread's copy of
// every byte into a buffer (a tenth of a nanosecond a byte, a sixth of
// histogram's count) for a page fault every 16 pages the first time they
// are read. Unmapping interrupts every processor that ran the process's
// threads: where a process's ranks share a file, map it once and unmap it
// when the reader is done with it (Open, Close), not per chunk (OpenRange
// is for when maps are few).
//
// A file truncated while it is mapped makes reading the lost pages fault
// (SIGBUS); Read turns the fault into an error naming the file and the
// range, where an unguarded read would crash the process.
package filemap

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// A Map is a read-only map of a file's bytes [off, off+len(Bytes())).
type Map struct {
	b    []byte // the bytes asked for
	mem  []byte // the whole mapping, from a page boundary
	name string
	off  int64
}

// Bytes returns the mapped bytes; they must not be read after Close.
func (m *Map) Bytes() []byte { return m.b }

// Read calls fn, which reads m's bytes, and returns a memory fault in it
// as an error naming the file and the range (the file was truncated, or
// its pages could not be read); any other panic goes on.
func (m *Map) Read(fn func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(interface{ Addr() uintptr }); !ok {
				panic(v)
			}
			err = fmt.Errorf("%s: fault reading the mapped bytes [%d,%d) (file truncated while read?): %v", m.name, m.off, m.off+int64(len(m.b)), v)
		}
	}()
	fn()
	return nil
}

// CloseAll closes the maps of a reader's cache of maps (nil entries, for
// files that could not be mapped, are skipped) and empties it.
func CloseAll[K comparable](maps map[K]*Map) error {
	var errs []error
	for _, m := range maps {
		if m != nil {
			errs = append(errs, m.Close())
		}
	}
	clear(maps)
	return errors.Join(errs...)
}
