// Package osthread runs functions on one locked OS thread: the thread a C
// library was initialised on and must be finalised on (MPI_Init_thread
// and MPI_Finalize, shmem_init_thread and shmem_finalize), which the Go
// scheduler would otherwise be free to hand to any goroutine.
package osthread

import "runtime"

// A Thread is a goroutine locked to its OS thread for good, running the
// functions Do gives it.
type Thread struct{ q chan func() }

// Start starts a Thread and runs init on it first. If init fails, the
// goroutine ends (and with it, being locked, the OS thread) and Start
// returns the error.
func Start(init func() error) (*Thread, error) {
	t := &Thread{q: make(chan func())}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread belongs to the library
		if err := init(); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for f := range t.q {
			f()
		}
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return t, nil
}

// Do runs f on the thread and returns when it has.
func (t *Thread) Do(f func()) {
	done := make(chan struct{})
	t.q <- func() {
		defer close(done)
		f()
	}
	<-done
}

// Stop ends the thread's goroutine once it has run what it was given. No
// Do may follow.
func (t *Thread) Stop() { close(t.q) }
