//go:build mrrun_stallhook && linux

package main

import "syscall"

// stallRank is the rank hook of a binary built with -tags mrrun_stallhook
// (see stallHook): every rank blocks, before its job, in read(2) on a pipe
// that no one writes, the stand-in for an input that never delivers (a
// hung network file system, a FIFO opened by a user's own map function),
// which only the forced exit of signal.go can end. The descriptors are
// blocking, so the read sleeps in the kernel, out of reach of the Go
// scheduler and of every context.
func (buildHooks) stallRank() {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		panic(err)
	}
	var b [1]byte
	syscall.Read(p[0], b[:]) // never returns: p[1] stays open
}
