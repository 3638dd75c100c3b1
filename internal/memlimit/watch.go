package memlimit

import (
	"errors"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// ErrExceeded is what every *ExceededError matches with errors.Is.
var ErrExceeded = errors.New("memory limit exceeded")

// ExceededError is the error of a process about to cross a memory limit.
// Its message is meant to be shown as it is, as the one line of a failed
// job:
//
//	memory limit exceeded: the job needed more than 470 MiB, over the 512 MiB RLIMIT_AS (prlimit/ulimit -v); raise the limit or give the job less input per rank
type ExceededError struct {
	Limit Limit
	// Needed is what the process used, in what Limit counts, when it was
	// stopped (after a GC); the job needed more.
	Needed int64
	// Hint ends the message after "; " when not empty.
	Hint string
}

func (e *ExceededError) Error() string {
	var buf [256]byte
	b := append(buf[:0], "memory limit exceeded: the job needed more than "...)
	b = appendSize(b, e.Needed, true)
	b = append(b, ", over the "...)
	switch e.Limit.Kind {
	case AddressSpace:
		b = appendSize(b, e.Limit.Bytes, false)
		b = append(b, " RLIMIT_AS (prlimit/ulimit -v)"...)
	default:
		b = appendSize(b, e.Limit.Bytes, false)
		b = append(b, " cgroup "...)
		b = append(b, baseName(e.Limit.File)...)
	}
	if e.Hint != "" {
		b = append(append(b, "; "...), e.Hint...)
	}
	return string(b)
}

// Is makes errors.Is(err, ErrExceeded) true.
func (e *ExceededError) Is(target error) bool { return target == ErrExceeded }

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// Options configure a Watchdog. The zero value samples every 25 ms,
// leaves Go's memory limit alone and only records what it finds (Err).
type Options struct {
	// Every is the sampling period; 0 is 25 ms.
	Every time.Duration
	// SetGoLimit keeps Go's memory limit (runtime/debug.SetMemoryLimit)
	// under the effective limit, by the rule of the package doc, while
	// the watchdog runs; Stop restores it. It is ignored when GOMEMLIMIT
	// is set or the program set a Go memory limit of its own.
	SetGoLimit bool
	// Hint is the ExceededError's Hint.
	Hint string
	// Exceeded is called once, from the watchdog's goroutine, when the
	// process is about to cross a limit: the place to cancel the job. It
	// must not block.
	Exceeded func(*ExceededError)
	// Critical is called once, from the watchdog's goroutine, if after
	// Exceeded the usage still climbs to within a margin of the limit
	// (see the package doc): the job did not stop in time, and the next
	// heap arena or thread stack may not map, which the Go runtime
	// reports with a crash. The place to print the error and exit.
	Critical func(*ExceededError)
}

// Watchdog samples the process's memory against its limits until Stop.
// Its methods may be called concurrently.
type Watchdog struct {
	done     chan struct{}
	running  bool // a goroutine samples (set by Watch)
	wg       sync.WaitGroup
	stopOnce sync.Once
	err      atomic.Pointer[ExceededError]

	// Read and written by the watchdog's goroutine only (and by Watch
	// before it starts, by Stop after it ended).
	o       Options
	meters  []*meter
	gcAt    []int64 // per meter: the usage at the last GC the watchdog ran
	fired   *ExceededError
	crit    bool
	goMem   *goSampler
	setGo   bool
	goLimit int64 // the Go memory limit the watchdog last set
	prevGo  int64 // the Go memory limit before Watch
	buf     [8192]byte
}

// Watch starts a Watchdog over limits (from Limits). With no limits it
// returns a Watchdog that does nothing. It returns an error if the usage
// of a limit cannot be read; a limit whose usage cannot be read later is
// no longer watched. It takes the first sample, and sets
// Go's memory limit if asked, before it returns.
func (s System) Watch(limits []Limit, o Options) (*Watchdog, error) {
	w := &Watchdog{done: make(chan struct{}), o: o}
	if len(limits) == 0 {
		close(w.done)
		return w, nil
	}
	if w.o.Every <= 0 {
		w.o.Every = 25 * time.Millisecond
	}
	for _, l := range limits {
		m, err := s.newMeter(l)
		if err == nil {
			w.meters = append(w.meters, m)
			_, err = m.read(w.buf[:])
		}
		if err != nil {
			for _, m := range w.meters {
				m.close()
			}
			return nil, err
		}
	}
	w.gcAt = make([]int64, len(w.meters))
	w.goMem = newGoSampler()
	if o.SetGoLimit && os.Getenv("GOMEMLIMIT") == "" {
		if prev := debug.SetMemoryLimit(-1); prev == math.MaxInt64 {
			w.setGo, w.prevGo = true, prev
		}
	}
	w.sample()
	w.running = true
	w.wg.Add(1)
	go w.loop()
	return w, nil
}

// Stop stops the sampling, waits for the watchdog's goroutine (and so for
// a running Exceeded or Critical call) and restores Go's memory limit. It
// may be called more than once.
func (w *Watchdog) Stop() {
	w.stopOnce.Do(func() {
		if !w.running {
			return
		}
		close(w.done)
		w.wg.Wait()
		for _, m := range w.meters {
			m.close()
		}
		if w.setGo {
			debug.SetMemoryLimit(w.prevGo)
		}
	})
}

// Err returns the *ExceededError once the watchdog has found the process
// about to cross a limit, nil before.
func (w *Watchdog) Err() error {
	if e := w.err.Load(); e != nil {
		return e
	}
	return nil
}

func (w *Watchdog) loop() {
	defer w.wg.Done()
	t := time.NewTicker(w.o.Every)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
			w.sample()
		}
	}
}

// sample takes one sample of every limit and acts on it.
func (w *Watchdog) sample() {
	g := w.goMem.read()
	goLimit := int64(math.MaxInt64)
	for i := 0; i < len(w.meters); i++ {
		m := w.meters[i]
		l := m.limit
		u, err := m.read(w.buf[:])
		if err != nil {
			// The usage of this limit cannot be read any more: it is no
			// longer watched, rather than stopping a job that may fit.
			m.close()
			w.meters = append(w.meters[:i], w.meters[i+1:]...)
			w.gcAt = append(w.gcAt[:i], w.gcAt[i+1:]...)
			i--
			continue
		}
		trig := l.trigger()
		goLimit = min(goLimit, (trig-g.outside(l.Kind, u))/8*7)
		switch {
		case w.fired != nil:
			if u >= l.critical() && !w.crit && w.o.Critical != nil {
				w.crit = true
				w.o.Critical(w.fired)
			}
		case u >= l.firm():
			w.fire(l, u)
		case u >= trig:
			// Over the trigger: what of it is garbage? Only a GC tells, so
			// run one, unless one ran since the usage was about this high.
			if u-w.gcAt[i] >= max(l.Bytes/64, 16<<20) {
				runtime.GC()
				w.gcAt[i] = u
				g = w.goMem.read()
				if u, err = m.read(w.buf[:]); err != nil {
					continue
				}
			}
			if need := u - g.reusable(l.Kind); need >= trig {
				w.fire(l, need)
			}
		}
	}
	if w.setGo && len(w.meters) > 0 {
		// What the trigger leaves the Go runtime, less an eighth for the
		// GC to work in, and never so little that it only collects.
		goLimit = max(goLimit, minGoLimit)
		if d := goLimit - w.goLimit; d >= goLimitStep || d <= -goLimitStep || w.goLimit == 0 {
			debug.SetMemoryLimit(goLimit)
			w.goLimit = goLimit
		}
	}
}

const (
	// minGoLimit is the lowest Go memory limit the watchdog sets.
	minGoLimit = 16 << 20
	// goLimitStep is the least change for which it sets a new one.
	goLimitStep = 4 << 20
)

// fire records the error and calls Exceeded, once.
func (w *Watchdog) fire(l Limit, needed int64) {
	e := &ExceededError{Limit: l, Needed: needed, Hint: w.o.Hint}
	w.fired = e
	w.err.Store(e)
	if w.o.Exceeded != nil {
		w.o.Exceeded(e)
	}
}

// Check returns an *ExceededError if this process, holding n bytes more
// than it does now, would be about to cross one of limits (over the
// trigger of the package doc); nil if not. It runs no GC and counts what
// the process holds now, garbage included. Errors reading the usage are
// returned as they are.
func (s System) Check(limits []Limit, n int64) error {
	for _, l := range limits {
		u, err := s.Usage(l)
		if err != nil {
			return err
		}
		if u+n >= l.trigger() {
			return &ExceededError{Limit: l, Needed: u + n}
		}
	}
	return nil
}

// processLimits are this process's limits, read once.
var processLimits = sync.OnceValues(System{}.Limits)

// Limits returns this process's memory limits, the effective one first (see
// System.Limits). It reads them once; later calls return the same result.
func Limits() ([]Limit, error) { return processLimits() }

// Check is System.Check for this process and its Limits: call it before a
// large allocation, which could otherwise jump over a limit between two
// samples of a Watchdog and crash the process.
func Check(n int64) error {
	ls, err := Limits()
	if err != nil {
		return err
	}
	return System{}.Check(ls, n)
}
