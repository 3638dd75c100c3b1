package memlimit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/metrics"
)

// meter reads what one Limit counts through files it keeps open, into a
// caller's buffer: a sample is a pread or two and a scan, no allocation.
type meter struct {
	limit    Limit
	pageSize int64
	statm    *os.File // AddressSpace: /proc/self/statm
	current  *os.File // Cgroup: memory.current (v2) or memory.usage_in_bytes (v1)
	stat     *os.File // Cgroup: memory.stat
	// The memory.stat keys of the file cache.
	activeFile, inactiveFile string
}

func (s System) newMeter(l Limit) (*meter, error) {
	m := &meter{limit: l, pageSize: int64(os.Getpagesize())}
	var err error
	switch l.Kind {
	case AddressSpace:
		m.statm, err = os.Open(s.path("/proc/self/statm"))
	case Cgroup:
		cur, pre := "memory.current", ""
		if l.v1 {
			cur, pre = "memory.usage_in_bytes", "total_"
		}
		m.activeFile, m.inactiveFile = pre+"active_file", pre+"inactive_file"
		if m.current, err = os.Open(filepath.Join(l.dir, cur)); err == nil {
			m.stat, err = os.Open(filepath.Join(l.dir, "memory.stat"))
		}
	default:
		err = fmt.Errorf("kind %d", l.Kind)
	}
	if err != nil {
		m.close()
		return nil, fmt.Errorf("memlimit: measuring %v: %w", l, err)
	}
	return m, nil
}

func (m *meter) close() {
	for _, f := range []*os.File{m.statm, m.current, m.stat} {
		if f != nil {
			f.Close()
		}
	}
}

// errParse is the error of a file that does not read as expected.
var errParse = errors.New("unexpected contents")

// read returns the usage, using buf (8 KiB is plenty) for the files.
func (m *meter) read(buf []byte) (int64, error) {
	if m.statm != nil {
		b, err := readAt(m.statm, buf)
		if err != nil {
			return 0, err
		}
		size, _, ok := parseStatm(b)
		if !ok {
			return 0, fmt.Errorf("memlimit: %s: %w", m.statm.Name(), errParse)
		}
		return size * m.pageSize, nil
	}
	b, err := readAt(m.current, buf)
	if err != nil {
		return 0, err
	}
	cur, _, ok := parseUint(b)
	if !ok {
		return 0, fmt.Errorf("memlimit: %s: %w", m.current.Name(), errParse)
	}
	if b, err = readAt(m.stat, buf); err != nil {
		return 0, err
	}
	active, ok1 := statField(b, m.activeFile)
	inactive, ok2 := statField(b, m.inactiveFile)
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("memlimit: %s: no %s or %s: %w", m.stat.Name(), m.activeFile, m.inactiveFile, errParse)
	}
	return max(cur-active-inactive, 0), nil
}

// readAt reads f from its start into buf. /proc and cgroup files are
// generated at each read from offset 0, so one pread is one fresh sample.
func readAt(f *os.File, buf []byte) ([]byte, error) {
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("memlimit: %w", err)
	}
	return buf[:n], nil
}

// goMemory is what the Go runtime holds, from runtime/metrics.
type goMemory struct {
	total    int64 // mapped read-write by the runtime
	released int64 // of total: returned to the OS, still mapped
	free     int64 // of total: heap free and resident, reusable without a new mapping
	cycles   uint64
}

// goSampler reads goMemory into samples it keeps.
type goSampler struct {
	s [4]metrics.Sample
}

func newGoSampler() *goSampler {
	g := new(goSampler)
	for i, name := range []string{
		"/memory/classes/total:bytes",
		"/memory/classes/heap/released:bytes",
		"/memory/classes/heap/free:bytes",
		"/gc/cycles/total:gc-cycles",
	} {
		g.s[i].Name = name
	}
	return g
}

func (g *goSampler) read() goMemory {
	metrics.Read(g.s[:])
	return goMemory{
		total:    int64(g.s[0].Value.Uint64()),
		released: int64(g.s[1].Value.Uint64()),
		free:     int64(g.s[2].Value.Uint64()),
		cycles:   g.s[3].Value.Uint64(),
	}
}

// reusable is what of usage u the Go runtime could hand out again without
// mapping more: its free heap, and for AddressSpace also the heap it
// released (still mapped, so still counted). Right after a GC this is the
// garbage the GC found.
func (g goMemory) reusable(k Kind) int64 {
	if k == AddressSpace {
		return g.free + g.released
	}
	return g.free
}

// outside is what usage u of a limit of kind k counts that Go's memory
// limit does not: for AddressSpace everything mapped outside the Go
// runtime's read-write memory (its address space reservations, thread
// stacks, C allocators' arenas, shared segments); for Cgroup the other
// processes of the cgroup and what this one holds outside the Go runtime.
func (g goMemory) outside(k Kind, u int64) int64 {
	if k == AddressSpace {
		return max(u-g.total, 0)
	}
	return max(u-(g.total-g.released), 0)
}
