//go:build linux

package osthread

import (
	"errors"
	"syscall"
	"testing"
)

// TestSameThread: init and every Do run on one OS thread, whatever other
// goroutines run meanwhile.
func TestSameThread(t *testing.T) {
	var first int
	th, err := Start(func() error { first = syscall.Gettid(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer th.Stop()
	for range 50 {
		go func() {}()
		var tid int
		th.Do(func() { tid = syscall.Gettid() })
		if tid != first {
			t.Fatalf("Do ran on thread %d; init ran on %d", tid, first)
		}
	}
}

func TestInitError(t *testing.T) {
	boom := errors.New("boom")
	if th, err := Start(func() error { return boom }); th != nil || !errors.Is(err, boom) {
		t.Fatalf("Start = %v, %v; want nil and the init's error", th, err)
	}
}
