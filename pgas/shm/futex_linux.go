package shm

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Futex operations without FUTEX_PRIVATE_FLAG: the words live in a shared
// mapping and the waiters and wakers are different processes.
const (
	futexWait = 0
	futexWake = 1
)

// lowHalf returns the address of the less significant 32 bits of *w, the
// part a futex compares.
func lowHalf(w *atomic.Int64) *uint32 {
	p := unsafe.Pointer(w)
	if !littleEndian {
		p = unsafe.Add(p, 4)
	}
	return (*uint32)(p)
}

var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// futexSleep blocks while the low 32 bits of *w equal val, for at most d,
// or until a futexWakeAll on w. It may return early for any reason: the
// caller re-checks its condition.
func futexSleep(w *atomic.Int64, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	// Errors (EAGAIN: the value changed; ETIMEDOUT; EINTR) all mean
	// "look again".
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(lowHalf(w))), futexWait, uintptr(val),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWakeAll wakes every process sleeping on w.
func futexWakeAll(w *atomic.Int64) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(lowHalf(w))), futexWake, uintptr(1<<31-1), 0, 0, 0)
}
