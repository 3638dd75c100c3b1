// Package filemap maps whole input files read-only into memory, the input
// path of the apps whose kernels outrun a copy: a map saves pread's copy
// of every byte into a buffer (a tenth of a nanosecond a byte, a sixth of
// histogram's count) for a page fault every 16 pages the first time they
// are read. A file is mapped once and unmapped when the reader is done
// with it (Close): unmapping, which interrupts every processor that ran
// the process's threads, is too slow to do per chunk when the ranks of a
// process share it.
//
// A file truncated while it is mapped makes reading the lost pages fault
// (SIGBUS); Read turns the fault into an error naming the file, where an
// unguarded read would crash the process.
package filemap

import (
	"fmt"
	"runtime/debug"
)

// A Map is a read-only map of a whole file.
type Map struct {
	b    []byte
	name string
}

// Bytes returns the file's bytes; they must not be read after Close.
func (m *Map) Bytes() []byte { return m.b }

// Read calls fn, which reads m's bytes, and returns a memory fault in it
// as an error naming the file (the file was truncated, or its pages could
// not be read); any other panic goes on.
func (m *Map) Read(fn func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(interface{ Addr() uintptr }); !ok {
				panic(v)
			}
			err = fmt.Errorf("%s: fault reading the file's mapped bytes (truncated while read?): %v", m.name, v)
		}
	}()
	fn()
	return nil
}
