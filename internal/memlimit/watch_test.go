package memlimit

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestExceededError(t *testing.T) {
	for _, tc := range []struct {
		e    ExceededError
		want string
	}{
		{ExceededError{Limit: Limit{Kind: AddressSpace, Bytes: 512 << 20}, Needed: 470<<20 + 12345,
			Hint: "raise the limit or give the job less input per rank"},
			"memory limit exceeded: the job needed more than 470 MiB, over the 512 MiB RLIMIT_AS (prlimit/ulimit -v); raise the limit or give the job less input per rank"},
		{ExceededError{Limit: Limit{Kind: Cgroup, Bytes: 1 << 30, File: "/sys/fs/cgroup/a/memory.max"}, Needed: 950 << 20},
			"memory limit exceeded: the job needed more than 950 MiB, over the 1 GiB cgroup memory.max"},
		{ExceededError{Limit: Limit{Kind: Cgroup, Bytes: 5 << 29, File: "/m/memory.limit_in_bytes"}, Needed: 2<<30 + 300<<20},
			"memory limit exceeded: the job needed more than 2.29 GiB, over the 2.5 GiB cgroup memory.limit_in_bytes"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q; want %q", got, tc.want)
		}
		if err := fmt.Errorf("job: %w", &tc.e); !errors.Is(err, ErrExceeded) {
			t.Errorf("errors.Is(%v, ErrExceeded) = false; want true", err)
		}
	}
}

func TestLimitThresholds(t *testing.T) {
	for _, tc := range []struct {
		l                       Limit
		trigger, firm, critical int64
	}{
		{Limit{Kind: AddressSpace, Bytes: 4 << 30}, 4<<30 - 4<<30/10, 4<<30 - 128<<20, 4<<30 - 64<<20},
		{Limit{Kind: AddressSpace, Bytes: 1 << 30}, 1<<30 - 128<<20, 1<<30 - 128<<20, 1<<30 - 64<<20},
		{Limit{Kind: Cgroup, Bytes: 1 << 30}, 1<<30 - 1<<30/10, 1<<30 - 32<<20, 1<<30 - 16<<20},
		{Limit{Kind: Cgroup, Bytes: 256 << 20}, 256<<20 - 32<<20, 256<<20 - 32<<20, 256<<20 - 16<<20},
	} {
		if tr, f, c := tc.l.trigger(), tc.l.firm(), tc.l.critical(); tr != tc.trigger || f != tc.firm || c != tc.critical {
			t.Errorf("%v: trigger, firm, critical = %d, %d, %d; want %d, %d, %d", tc.l, tr, f, c, tc.trigger, tc.firm, tc.critical)
		}
	}
}

// fakeVM returns a System whose virtual size is vm bytes (rewritten by
// the returned function) and whose RLIMIT_AS is limit.
func fakeVM(t *testing.T, vm, limit int64) (System, func(vm int64)) {
	t.Helper()
	if os.Getpagesize() != 4096 {
		t.Skip("the fake statm counts 4 KiB pages")
	}
	root := fakeTree(t, map[string]string{})
	set := func(vm int64) {
		t.Helper()
		p := filepath.Join(root, "proc/self/statm")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		// The same length every time, written in place: an open meter
		// reads the new contents.
		s := fmt.Sprintf("%-60s\n", fmt.Sprintf("%d 100 0 0 0 0 0", vm/4096))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte(s), 0); err != nil {
			t.Fatal(err)
		}
	}
	set(vm)
	return System{Root: root, AddressSpace: rlimit(uint64(limit))}, set
}

// never is a sampling period that leaves the samples to the test (after
// the one Watch takes).
const never = time.Hour

func TestWatchNoLimits(t *testing.T) {
	w, err := System{}.Watch(nil, Options{Exceeded: func(*ExceededError) { t.Error("Exceeded called") }})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Err(); err != nil {
		t.Errorf("Err() = %v; want nil", err)
	}
	w.Stop()
	w.Stop()
}

func TestWatchFires(t *testing.T) {
	const limit = 4 << 30 // trigger 3686.4 MiB, firm 3968 MiB, critical 4032 MiB
	s, set := fakeVM(t, 3900<<20, limit)
	ls, err := s.Limits()
	if err != nil {
		t.Fatal(err)
	}
	var exceeded, critical []*ExceededError
	gcs := numGC()
	w, err := s.Watch(ls, Options{Every: never, Hint: "try less",
		Exceeded: func(e *ExceededError) { exceeded = append(exceeded, e) },
		Critical: func(e *ExceededError) { critical = append(critical, e) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// 3900 MiB is over the trigger by more than this test process's Go
	// heap could have free: Watch's first sample runs a GC and fires.
	if len(exceeded) != 1 {
		t.Fatalf("Exceeded called %d times after Watch; want 1", len(exceeded))
	}
	if numGC() == gcs {
		t.Errorf("no GC before firing over the trigger; want one")
	}
	var e *ExceededError
	if err := w.Err(); !errors.As(err, &e) || e != exceeded[0] {
		t.Fatalf("Err() = %v; want the error given to Exceeded", err)
	}
	if e.Limit.Kind != AddressSpace || e.Limit.Bytes != limit || e.Needed < ls[0].trigger() || e.Needed > 3900<<20 || e.Hint != "try less" {
		t.Errorf("Err() = %+v; want RLIMIT_AS 4 GiB, needed in [trigger, 3900 MiB], hint %q", e, "try less")
	}
	set(4000 << 20)
	w.sample()
	if len(exceeded) != 1 || len(critical) != 0 {
		t.Errorf("another sample at 4000 MiB: Exceeded %d, Critical %d calls; want 1, 0", len(exceeded), len(critical))
	}
	set(4040 << 20) // within 64 MiB of the limit
	w.sample()
	w.sample()
	if len(exceeded) != 1 || len(critical) != 1 || critical[0] != e {
		t.Errorf("samples at 4040 MiB: Exceeded %d, Critical %d calls; want 1, 1 with the same error", len(exceeded), len(critical))
	}
}

// Within two margins of the limit the watchdog fires without a GC.
func TestWatchFirm(t *testing.T) {
	s, _ := fakeVM(t, 4000<<20, 4<<30)
	ls, err := s.Limits()
	if err != nil {
		t.Fatal(err)
	}
	gcs := numGC()
	w, err := s.Watch(ls, Options{Every: never})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var e *ExceededError
	if !errors.As(w.Err(), &e) || e.Needed != 4000<<20 {
		t.Errorf("Err() = %v; want needed 4000 MiB", w.Err())
	}
	if numGC() != gcs {
		t.Errorf("the watchdog ran a GC within two margins of the limit; want none")
	}
}

func TestWatchBelowTrigger(t *testing.T) {
	s, _ := fakeVM(t, 3600<<20, 4<<30)
	ls, err := s.Limits()
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ls, Options{Every: never, Exceeded: func(*ExceededError) { t.Error("Exceeded called") }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	gcs := numGC()
	for range 3 {
		w.sample()
	}
	if err := w.Err(); err != nil {
		t.Errorf("Err() = %v; want nil", err)
	}
	if numGC() != gcs {
		t.Errorf("the watchdog ran a GC under the trigger; want none")
	}
}

// Over the trigger by less than the garbage the Go heap holds: the
// watchdog's GC finds it, and does not fire.
func TestWatchGarbage(t *testing.T) {
	const limit = 4 << 30
	trig := Limit{Kind: AddressSpace, Bytes: limit}.trigger()
	s, set := fakeVM(t, 500<<20, limit)
	ls, err := s.Limits()
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ls, Options{Every: never, Exceeded: func(*ExceededError) { t.Error("Exceeded called") }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	garbage(64 << 20)
	set(trig + 8<<20)
	gcs := numGC()
	w.sample()
	if numGC() == gcs {
		t.Errorf("no GC after the usage crossed the trigger; want one")
	}
	gcs = numGC()
	w.sample()
	if numGC() != gcs {
		t.Errorf("a second GC at the same usage; want one per rise")
	}
	if err := w.Err(); err != nil {
		t.Errorf("Err() = %v; want nil (64 MiB of garbage)", err)
	}
}

//go:noinline
func garbage(n int) {
	b := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	runtime.KeepAlive(b)
}

func numGC() uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.NumGC
}

func TestWatchGoLimit(t *testing.T) {
	if prev := debug.SetMemoryLimit(-1); prev != math.MaxInt64 || os.Getenv("GOMEMLIMIT") != "" {
		t.Skipf("a Go memory limit is set (%d, GOMEMLIMIT=%q)", prev, os.Getenv("GOMEMLIMIT"))
	}
	const limit = 1 << 30
	trig := Limit{Kind: AddressSpace, Bytes: limit}.trigger()
	s, set := fakeVM(t, 600<<20, limit)
	ls, err := s.Limits()
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ls, Options{Every: never, SetGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	// What the Go runtime maps is the part of the fake virtual size the
	// Go limit covers; the rest is outside it, and the Go limit is 7/8 of
	// what the trigger leaves. The runtime's total moves a little between
	// the watchdog's sample and the test's.
	g := newGoSampler()
	check := func(vm int64) {
		t.Helper()
		got := debug.SetMemoryLimit(-1)
		total := g.read().total
		want := (trig - (vm - total)) / 8 * 7
		if got < want-8<<20 || got > want+8<<20 {
			t.Errorf("Go memory limit at a virtual size of %d MiB (Go runtime %d MiB) = %d MiB; want about %d MiB", vm>>20, total>>20, got>>20, want>>20)
		}
	}
	check(600 << 20)
	set(800 << 20)
	w.sample()
	check(800 << 20)
	set(2 << 30) // more outside the Go runtime than the trigger: the floor
	w.sample()
	if got := debug.SetMemoryLimit(-1); got != minGoLimit {
		t.Errorf("Go memory limit over the limit = %d; want the floor %d", got, minGoLimit)
	}
	w.Stop()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("Go memory limit after Stop = %d; want it restored to %d", got, int64(math.MaxInt64))
	}
}

func TestWatchGOMEMLIMIT(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Setenv("GOMEMLIMIT", "10GiB")
	s, _ := fakeVM(t, 600<<20, 1<<30)
	ls, err := s.Limits()
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ls, Options{Every: never, SetGoLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Errorf("Go memory limit with GOMEMLIMIT set = %d; want it left at %d", got, prev)
	}
}

// The watchdog's own goroutine samples and fires.
func TestWatchLoop(t *testing.T) {
	s, set := fakeVM(t, 500<<20, 1<<30)
	ls, err := s.Limits()
	if err != nil {
		t.Fatal(err)
	}
	fired := make(chan *ExceededError, 1)
	w, err := s.Watch(ls, Options{Every: time.Millisecond, Exceeded: func(e *ExceededError) { fired <- e }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	set(1000 << 20)
	select {
	case e := <-fired:
		if e.Limit.Kind != AddressSpace {
			t.Errorf("Exceeded(%v); want the RLIMIT_AS", e)
		}
	case <-time.After(time.Minute):
		t.Fatal("the watchdog did not fire within a minute of the usage crossing the limit")
	}
}

// A sample under the trigger does not allocate: the process may be near
// its limit.
func TestSampleAllocs(t *testing.T) {
	s, _ := fakeVM(t, 500<<20, 1<<30)
	ls, err := s.Limits()
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ls, Options{Every: never})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if n := testing.AllocsPerRun(100, w.sample); n != 0 {
		t.Errorf("sample() allocates %v times; want 0", n)
	}
}

func TestCheck(t *testing.T) {
	s, _ := fakeVM(t, 500<<20, 1<<30)
	ls, err := s.Limits()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ls, 100<<20); err != nil {
		t.Errorf("Check(100 MiB) at 500 MiB of 1 GiB = %v; want nil", err)
	}
	err = s.Check(ls, 500<<20)
	var e *ExceededError
	if !errors.As(err, &e) || e.Needed != 1000<<20 {
		t.Fatalf("Check(500 MiB) at 500 MiB of 1 GiB = %v; want an ExceededError, needed 1000 MiB", err)
	}
	const want = "memory limit exceeded: the job needed more than 1000 MiB, over the 1 GiB RLIMIT_AS (prlimit/ulimit -v)"
	if err.Error() != want {
		t.Errorf("Check(500 MiB) = %q; want %q", err, want)
	}
	if err := s.Check(nil, 1<<62); err != nil {
		t.Errorf("Check(no limits, 4 EiB) = %v; want nil", err)
	}
}

// Check against this process's real RLIMIT_AS, set for the test a few GiB
// above what the process maps now.
func TestCheckRealRlimit(t *testing.T) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_AS, &old); err != nil {
		t.Skip(err)
	}
	if old.Cur != unix.RLIM_INFINITY {
		t.Skipf("RLIMIT_AS is already %d", old.Cur)
	}
	if ls, err := Limits(); err == nil && len(ls) == 0 {
		if err := Check(1 << 62); err != nil {
			t.Errorf("Check(4 EiB) with no limit = %v; want nil", err)
		}
	}
	vm, err := System{}.Usage(Limit{Kind: AddressSpace})
	if err != nil {
		t.Skip(err)
	}
	set := unix.Rlimit{Cur: uint64(vm) + 8<<30, Max: old.Max}
	if err := unix.Setrlimit(unix.RLIMIT_AS, &set); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() {
		if err := unix.Setrlimit(unix.RLIMIT_AS, &old); err != nil {
			t.Errorf("restoring RLIMIT_AS: %v", err)
		}
	})
	ls, err := System{}.Limits()
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) == 0 || ls[0].Kind != AddressSpace || ls[0].Bytes != int64(set.Cur) {
		t.Fatalf("Limits() under RLIMIT_AS %d = %v; want it first", set.Cur, ls)
	}
	if err := (System{}).Check(ls[:1], 1<<20); err != nil {
		t.Errorf("Check(1 MiB) = %v; want nil", err)
	}
	if err := (System{}).Check(ls[:1], 16<<30); !errors.Is(err, ErrExceeded) {
		t.Errorf("Check(16 GiB) = %v; want ErrExceeded", err)
	}
}
