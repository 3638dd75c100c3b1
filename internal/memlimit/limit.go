package memlimit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// Kind says which mechanism sets a Limit, and so what it counts.
type Kind uint8

const (
	// AddressSpace is RLIMIT_AS (prlimit --as, ulimit -v): it counts the
	// process's virtual size (VmSize), every mapping included: the Go
	// runtime's address space reservations, thread stacks, C allocators'
	// arenas and mapped shared memory segments. Each process has its own.
	AddressSpace Kind = iota + 1
	// Cgroup is a cgroup's memory.max (v2) or memory.limit_in_bytes (v1):
	// it counts the memory charged to the cgroup, shared by every process
	// in it. The kernel reclaims file cache before it kills, so a Limit of
	// this kind counts the cgroup's usage less its file cache.
	Cgroup
)

// Limit is one memory limit on this process.
type Limit struct {
	Kind  Kind
	Bytes int64
	// File is the cgroup file that sets a Cgroup limit (the process's own
	// cgroup's or a parent's), "" for AddressSpace.
	File string

	dir string // the cgroup directory of File, whose usage counts
	v1  bool   // a cgroup v1 memory controller
}

// String names the limit for messages: "RLIMIT_AS 512 MiB
// (prlimit/ulimit -v)", "cgroup memory.max 1 GiB".
func (l Limit) String() string {
	return string(l.appendName(make([]byte, 0, 64)))
}

// appendName appends what String returns.
func (l Limit) appendName(dst []byte) []byte {
	switch l.Kind {
	case AddressSpace:
		dst = append(dst, "RLIMIT_AS "...)
		dst = appendSize(dst, l.Bytes, false)
		return append(dst, " (prlimit/ulimit -v)"...)
	case Cgroup:
		dst = append(dst, "cgroup "...)
		dst = append(dst, baseName(l.File)...)
		dst = append(dst, ' ')
		return appendSize(dst, l.Bytes, false)
	}
	return append(dst, "no limit"...)
}

// margin is the room a limit of kind l.Kind must keep for what maps
// memory in steps: for RLIMIT_AS one Go heap arena (the heap grows its
// address space 64 MiB at a time), for a cgroup 16 MiB.
func (l Limit) margin() int64 {
	if l.Kind == AddressSpace {
		return 64 << 20
	}
	return 16 << 20
}

// trigger is the usage from which the process is about to cross l, if
// what it holds is not garbage: 90% of l, and at least two margins below
// it.
func (l Limit) trigger() int64 {
	return min(l.Bytes-l.Bytes/10, l.firm())
}

// firm is the usage from which the process is about to cross l, garbage
// or not: two margins below it.
func (l Limit) firm() int64 {
	return l.Bytes - 2*l.margin()
}

// critical is the usage from which the next step (a heap arena, a
// thread's stack) may fail to map: one margin below l.
func (l Limit) critical() int64 {
	return l.Bytes - l.margin()
}

// System is where the package reads limits and usage: a /proc and /sys
// tree and the process's RLIMIT_AS. The zero value is this process on the
// real file systems; tests point Root at a fake tree.
type System struct {
	// Root prefixes /proc and /sys paths ("" is the real ones).
	Root string
	// AddressSpace returns RLIMIT_AS's soft limit; nil is getrlimit(2).
	// unix.RLIM_INFINITY is no limit.
	AddressSpace func() (uint64, error)
}

func (s System) path(p string) string { return s.Root + p }

func (s System) rlimitAS() (uint64, error) {
	if s.AddressSpace != nil {
		return s.AddressSpace()
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_AS, &rl); err != nil {
		return 0, fmt.Errorf("memlimit: getrlimit(RLIMIT_AS): %w", err)
	}
	return rl.Cur, nil
}

// Limits returns the memory limits on this process, the effective one
// first: the one with the least room left now, in what each counts.
// Missing cgroup files mean no cgroup limit (a system without cgroups, or
// without the memory controller); an unreadable or malformed one is an
// error, and so is a failing getrlimit. Limits returns nil when there are
// none.
func (s System) Limits() ([]Limit, error) {
	var ls []Limit
	as, err := s.rlimitAS()
	if err != nil {
		return nil, err
	}
	if as != unix.RLIM_INFINITY && as < 1<<63 {
		ls = append(ls, Limit{Kind: AddressSpace, Bytes: int64(as)})
	}
	cg, ok, err := s.cgroupLimit()
	if err != nil {
		return nil, err
	}
	if ok {
		ls = append(ls, cg)
	}
	if len(ls) > 1 {
		room := make(map[Kind]int64, len(ls))
		for _, l := range ls {
			u, err := s.Usage(l)
			if err != nil {
				return nil, err
			}
			room[l.Kind] = l.Bytes - u
		}
		slices.SortStableFunc(ls, func(a, b Limit) int { return cmpInt64(room[a.Kind], room[b.Kind]) })
	}
	return ls, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cgroupLimit returns the tightest cgroup memory limit on the process: the
// smallest memory.max (cgroup v2, preferred when the process is in a v2
// cgroup with the memory controller) or memory.limit_in_bytes (v1) of its
// cgroup and the cgroup's parents.
func (s System) cgroupLimit() (Limit, bool, error) {
	b, err := os.ReadFile(s.path("/proc/self/cgroup"))
	if errors.Is(err, fs.ErrNotExist) {
		return Limit{}, false, nil
	}
	if err != nil {
		return Limit{}, false, fmt.Errorf("memlimit: %w", err)
	}
	pc := parseProcCgroup(string(b))
	// Where the hierarchies are mounted: mountinfo, or the usual places.
	v2m := cgroupMount{root: "/", dir: s.path("/sys/fs/cgroup")}
	v1m := cgroupMount{root: "/", dir: s.path("/sys/fs/cgroup/memory")}
	if mi, err := os.ReadFile(s.path("/proc/self/mountinfo")); err == nil {
		m2, m1, ok2, ok1 := parseMountinfo(string(mi))
		if ok2 {
			v2m = cgroupMount{root: m2.root, dir: s.path(m2.dir)}
		}
		if ok1 {
			v1m = cgroupMount{root: m1.root, dir: s.path(m1.dir)}
		}
	}
	if pc.v2 != "" {
		l, ok, err := minLimit(cgroupDirs(v2m, pc.v2), "memory.max", parseV2Max)
		if err != nil || ok {
			return l, ok, err
		}
	}
	if pc.v1 != "" {
		l, ok, err := minLimit(cgroupDirs(v1m, pc.v1), "memory.limit_in_bytes", parseV1Limit)
		l.v1 = true
		return l, ok, err
	}
	return Limit{}, false, nil
}

// minLimit reads file in each of dirs and returns the smallest limit.
func minLimit(dirs []string, file string, parse func(string) (int64, bool, error)) (Limit, bool, error) {
	var best Limit
	found := false
	for _, d := range dirs {
		p := filepath.Join(d, file)
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Limit{}, false, fmt.Errorf("memlimit: %w", err)
		}
		n, ok, err := parse(string(b))
		if err != nil {
			return Limit{}, false, fmt.Errorf("memlimit: %s: %w", p, err)
		}
		if ok && (!found || n < best.Bytes) {
			best, found = Limit{Kind: Cgroup, Bytes: n, File: p, dir: d}, true
		}
	}
	return best, found, nil
}

// Usage returns what l counts of this process now: its virtual size for
// AddressSpace; for Cgroup, the usage of the cgroup that sets the limit
// less its file cache (active_file and inactive_file of memory.stat). It
// allocates; the Watchdog samples through open files instead.
func (s System) Usage(l Limit) (int64, error) {
	m, err := s.newMeter(l)
	if err != nil {
		return 0, err
	}
	defer m.close()
	var buf [8192]byte
	return m.read(buf[:])
}
