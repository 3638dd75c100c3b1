package memlimit

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/pgasmr/pgasmr/internal/size"
)

// DefaultBudget is what a job's intermediate data may hold by default
// (mrrun --memory): half the memory the process can have, the least of
// the machine's physical memory and every cgroup limit, less a process's
// fixed address-space reservations under RLIMIT_AS (asReserve), so
// that the rest of the job (its input buffers, its result, the runtime)
// has the other half. It returns the budget and a phrase that says where
// it comes from, for --stats: "half of 23.4 GiB of physical memory".
// Where nothing can be read it returns 0 (no bound) and why.
func DefaultBudget() (int64, string) {
	phys, err := Physical()
	if err != nil {
		return 0, fmt.Sprintf("no bound: %v", err)
	}
	ls, _ := Limits() // no limits readable: the physical memory bounds
	return budgetOf(phys, ls)
}

// ParseBudget parses a memory budget as mrrun's --memory and a job's
// -memory take it: "auto" (DefaultBudget), a size (1GiB, 256MB, ...; see
// package size) or 0 for no bound. It returns the bytes and what they
// come from, for --stats.
func ParseBudget(s string) (bytes int64, from string, err error) {
	if s == "auto" {
		bytes, from = DefaultBudget()
		return bytes, from, nil
	}
	n, err := size.Parse(s)
	if errors.Is(err, size.ErrTooBig) {
		return 0, "", fmt.Errorf("too big: at most 4 EiB (0 for no bound)")
	}
	if err != nil || n < 0 {
		return 0, "", fmt.Errorf("want a size (k, MB, MiB, ... suffixes), 0 for no bound, or auto")
	}
	if n == 0 {
		return 0, "no bound (--memory 0)", nil
	}
	if phys, err := Physical(); err == nil && n > phys {
		return 0, "", fmt.Errorf("too big: more than the %s of memory this machine has (0 for no bound)", size.String(phys))
	}
	return n, "--memory", nil
}

// asReserve is what a Go process holds of RLIMIT_AS whatever its job
// does: the runtime's address space reservations (about 1.1 GiB on
// linux/amd64, see the package doc) and a heap arena.
const asReserve = 1<<30 + 256<<20

// budgetOf is DefaultBudget's rule, for physical memory phys and limits
// ls.
func budgetOf(phys int64, ls []Limit) (int64, string) {
	room, from := phys, "physical memory"
	for _, l := range ls {
		b := l.Bytes
		if l.Kind == AddressSpace {
			b -= asReserve
		}
		if b < room {
			room, from = max(b, 0), "the "+l.String()+" limit"
		}
	}
	return room / 2, "half of " + string(appendSize(nil, room, false)) + " of " + from
}

// Physical returns the machine's physical memory.
func Physical() (int64, error) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0, fmt.Errorf("memlimit: sysinfo: %w", err)
	}
	return int64(si.Totalram) * int64(si.Unit), nil
}

// GoLimit keeps Go's memory limit (debug.SetMemoryLimit, the collector's
// goal as the heap nears it) at limit bytes or below until restore is
// called, so that garbage does not take a process whose live data keeps
// to a budget (pgas.Config.MemoryBytes) past it. Limits may be set from
// several places at once (every pgas.Run of a process): the least active
// one applies, and the limit found before the first is restored when the
// last stops. A GOMEMLIMIT the user set is left alone, and so is a lower
// limit in force.
func GoLimit(limit int64) (restore func()) {
	if limit <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	g := &theGoLimit
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.limits) == 0 {
		g.base = debug.SetMemoryLimit(-1)
	}
	g.limits[limit]++
	g.apply()
	return sync.OnceFunc(func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.limits[limit]--; g.limits[limit] == 0 {
			delete(g.limits, limit)
		}
		if len(g.limits) == 0 {
			debug.SetMemoryLimit(g.base)
			return
		}
		g.apply()
	})
}

var theGoLimit = goLimits{limits: map[int64]int{}}

// goLimits are the active GoLimit calls.
type goLimits struct {
	mu     sync.Mutex
	base   int64         // the limit before the first
	limits map[int64]int // active limits, counted
}

// apply sets the least active limit, or base if that is lower.
func (g *goLimits) apply() {
	least := g.base
	for l := range g.limits {
		least = min(least, l)
	}
	debug.SetMemoryLimit(least)
}
