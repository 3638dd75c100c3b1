//go:build !linux

package tmpdir

import (
	"errors"
	"os"
	"syscall"
)

// proc is what the system says about a live process: without /proc,
// nothing but that it exists.
type proc struct {
	start  int64
	ns     uint64
	zombie bool
}

// inspect reports whether process pid exists. Where that cannot be told,
// it exists.
func inspect(pid int) (p proc, exists bool) {
	pr, err := os.FindProcess(pid)
	if err != nil {
		return p, false
	}
	if err := pr.Signal(syscall.Signal(0)); errors.Is(err, os.ErrProcessDone) {
		return p, false
	}
	return p, true
}
