package linreg

import (
	"os"
	"syscall"
)

// mapRange maps the bytes [off, off+n) of f read-only and returns them
// and a function that unmaps them.
func mapRange(f *os.File, off, n int64) ([]byte, func(), error) {
	page := int64(os.Getpagesize())
	lo := off / page * page
	m, err := syscall.Mmap(int(f.Fd()), lo, int(off+n-lo), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, nil, err
	}
	return m[off-lo:], func() { syscall.Munmap(m) }, nil
}
