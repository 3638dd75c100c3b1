package shm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The job's file in /dev/shm is a control area followed by one segment per
// rank:
//
//	[0, ctlBytes)                       control area (header, failure
//	                                    record, barrier words, rank table)
//	[ctlBytes + r*stride, +capacity)    rank r's segment
//
// Every word is an int64 at an 8-byte aligned offset and is only ever
// accessed atomically. Words that several processes write often (the
// barrier counter, the sleeper count) and each rank's entry have cache
// lines of their own.
const (
	magic   = 0x314d485353414750 // "PGASSHM1" little-endian
	version = 1

	offMagic       = 0
	offVersion     = 8
	offRanks       = 16
	offCapacity    = 24
	offStride      = 32
	offCtlBytes    = 40
	offLauncherPID = 48
	offLauncherT0  = 56 // launcher's start time in clock ticks since boot

	offFailClaim  = 128 // 0: no failure; 1: the launcher; r+2: rank r
	offFailKind   = 136
	offFailLen    = 144
	offFailReady  = 152 // 1 once kind, len and text are written
	offFailText   = 192
	failTextBytes = 512

	offCount    = 768 // barrier arrivals of all ranks since the launch
	offSleepers = 896 // processes in, or about to enter, a futex wait on count

	offRanksTable = 1024
	rankEntry     = 128
	// Words of a rank's entry.
	rPID    = 0  // the rank's process id
	rState  = 8  // stateRunning, stateExited, stateDead
	rArrive = 16 // barrier phases this rank has notified since the launch
	rOpen   = 24 // 1 while the rank has an open endpoint
	rUsed   = 32 // bytes of the segment that may be non-zero
	rJobSeg = 40 // Job.SegmentBytes of the rank's current job
	rJobN   = 48 // Job.Ranks of the rank's current job

	pageBytes = 4096
)

// Rank states, written by the launcher.
const (
	stateRunning = 0
	stateExited  = 1 // exited with status 0
	stateDead    = 2 // exited with another status or died by a signal
)

// Failure kinds: what a remote failure's cause wraps.
const (
	kindError    = 1
	kindCanceled = 2
	kindDeadline = 3
	kindTimeout  = 4
	kindDied     = 5
)

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }

func ctlBytes(ranks int) int64 {
	return roundUp(offRanksTable+int64(ranks)*rankEntry, pageBytes)
}

func stride(capacity int64) int64 { return roundUp(capacity, pageBytes) }

// fileBytes is the size of the file for ranks segments of capacity bytes.
func fileBytes(ranks int, capacity int64) int64 {
	return ctlBytes(ranks) + int64(ranks)*stride(capacity)
}

// segName is the file name of a job's segment.
func segName(pid int, jobID string) string {
	return Prefix + strconv.Itoa(pid) + "-" + jobID
}

// pidOf parses the launcher pid out of a segment file name.
func pidOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return 0, false
	}
	p, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	return pid, err == nil && pid > 0
}

// mapping is a job's file mapped into this process.
type mapping struct {
	mem      []byte
	ranks    int
	capacity int64
	stride   int64
	ctl      int64
}

func (m *mapping) word(off int64) *atomic.Int64 {
	return (*atomic.Int64)(unsafe.Pointer(&m.mem[off]))
}

func (m *mapping) rankWord(r int, w int64) *atomic.Int64 {
	return m.word(offRanksTable + int64(r)*rankEntry + w)
}

// segment returns rank r's segment, n bytes long.
func (m *mapping) segment(r int, n int64) []byte {
	base := m.ctl + int64(r)*m.stride
	return m.mem[base : base+n : base+n]
}

func (m *mapping) unmap() error {
	if m.mem == nil {
		return nil
	}
	err := unix.Munmap(m.mem)
	m.mem = nil
	return err
}

// create makes the file of a new job in dir with mode 0600, sizes it,
// reserves its pages (reserveJob, in devshm_linux.go), writes the header
// and maps it. A dir without room for the whole file is one error line
// naming dir, the size the job needs and what is free (noRoomError),
// whether statfs says so before the file is made or fallocate finds it
// out.
func create(dir, name string, ranks int, capacity int64) (*mapping, error) {
	size := fileBytes(ranks, capacity)
	free, err := freeBytes(dir)
	if err != nil {
		return nil, err
	}
	if free < size {
		return nil, noRoomError(dir, size, free, ranks, capacity)
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("shm: create segment: %w", err)
	}
	defer f.Close()
	fail := func(err error) (*mapping, error) {
		f.Truncate(0) // frees the reserved pages now, not when f is closed
		os.Remove(path)
		return nil, err
	}
	if err := f.Truncate(size); err != nil {
		return fail(fmt.Errorf("shm: size segment %s to %d bytes: %w", path, size, err))
	}
	if err := reserveJob(f, dir, size, ranks, capacity); err != nil {
		return fail(err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail(fmt.Errorf("shm: map segment %s: %w", path, err))
	}
	m := &mapping{mem: mem, ranks: ranks, capacity: capacity, stride: stride(capacity), ctl: ctlBytes(ranks)}
	m.word(offVersion).Store(version)
	m.word(offRanks).Store(int64(ranks))
	m.word(offCapacity).Store(capacity)
	m.word(offStride).Store(m.stride)
	m.word(offCtlBytes).Store(m.ctl)
	m.word(offLauncherPID).Store(int64(os.Getpid()))
	m.word(offLauncherT0).Store(startTime(os.Getpid()))
	m.word(offMagic).Store(magic)
	return m, nil
}

// attach maps the file of a running job and checks its header.
func attach(path string, ranks int, capacity int64) (*mapping, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("shm: open segment: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("shm: open segment: %w", err)
	}
	size := fileBytes(ranks, capacity)
	if fi.Size() != size {
		return nil, fmt.Errorf("shm: segment %s is %d bytes; %d ranks of %d bytes need %d", path, fi.Size(), ranks, capacity, size)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shm: map segment %s: %w", path, err)
	}
	m := &mapping{mem: mem, ranks: ranks, capacity: capacity, stride: stride(capacity), ctl: ctlBytes(ranks)}
	if m.word(offMagic).Load() != magic || m.word(offVersion).Load() != version ||
		m.word(offRanks).Load() != int64(ranks) || m.word(offCapacity).Load() != capacity {
		m.unmap()
		return nil, fmt.Errorf("shm: segment %s: header does not describe %d ranks of %d bytes (version %d)", path, ranks, capacity, version)
	}
	return m, nil
}

// startTime returns the start time of process pid in clock ticks since
// boot (field 22 of /proc/<pid>/stat), or -1 if it cannot be read. With the
// pid it identifies a process across pid reuse.
func startTime(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 {
		return -1
	}
	t, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return -1
	}
	return t
}

// alive reports whether process pid exists and, if t0 >= 0, started at t0.
func alive(pid int, t0 int64) bool {
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return false
	}
	if t0 >= 0 {
		if t := startTime(pid); t >= 0 && t != t0 {
			return false // the pid was reused
		}
	}
	return true
}

// CleanStale removes the segment files in Dir whose launcher is dead: left
// behind by a launcher that was killed before it could remove them. A file
// is stale when the pid in its name names no process, or a process that
// started after the launcher did (the pid was reused). It returns the paths
// it removed. Launch calls it before it creates a job's file.
func CleanStale() ([]string, error) {
	return cleanStale(Dir)
}

func cleanStale(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("shm: clean stale segments: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range ents {
		pid, ok := pidOf(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if alive(pid, launcherT0(path)) {
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("shm: remove stale segment: %w", err))
			continue
		}
		removed = append(removed, path)
	}
	return removed, errors.Join(errs...)
}

// launcherT0 reads the launcher start time from the header of the file at
// path, or returns -1.
func launcherT0(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	var b [offLauncherT0 + 8]byte
	if n, _ := f.ReadAt(b[:], 0); n < len(b) {
		return -1
	}
	if binary.NativeEndian.Uint64(b[offMagic:]) != magic {
		return -1
	}
	return int64(binary.NativeEndian.Uint64(b[offLauncherT0:]))
}

// claimFailure records the job's first failure: who (1 for the launcher,
// r+2 for rank r), what kind and a short text. It reports whether this call
// was the first; later calls change nothing. It wakes every barrier waiter.
func (m *mapping) claimFailure(who int64, kind int64, text string) bool {
	if !m.word(offFailClaim).CompareAndSwap(0, who) {
		return false
	}
	if len(text) > failTextBytes {
		text = text[:failTextBytes]
	}
	n := copy(m.mem[offFailText:offFailText+failTextBytes], text)
	m.word(offFailKind).Store(kind)
	m.word(offFailLen).Store(int64(n))
	m.word(offFailReady).Store(1)
	futexWakeAll(m.word(offCount))
	futexWakeAll(m.word(offFailClaim))
	return true
}

// failure returns the job's failure record; who is 0 if the job has not
// failed. A record being written is waited for briefly; if its writer died
// half-way, the text is empty.
func (m *mapping) failure() (who, kind int64, text string) {
	who = m.word(offFailClaim).Load()
	if who == 0 {
		return 0, 0, ""
	}
	for i := 0; m.word(offFailReady).Load() == 0; i++ {
		if i == 1000 {
			return who, kindError, ""
		}
		time.Sleep(100 * time.Microsecond)
	}
	n := m.word(offFailLen).Load()
	n = min(max(n, 0), failTextBytes)
	return who, m.word(offFailKind).Load(), string(m.mem[offFailText : offFailText+n])
}

// toWord converts the address of an 8-byte aligned word of a mapping.
func toWord(p *byte) *atomic.Int64 { return (*atomic.Int64)(unsafe.Pointer(p)) }
