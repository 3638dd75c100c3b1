package memlimit

import (
	"fmt"

	"golang.org/x/sys/unix"
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
