package tmpdir

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// proc is what /proc says about a live process.
type proc struct {
	start  int64  // clock ticks since boot; 0: unknown
	ns     uint64 // pid namespace inode; 0: unknown
	zombie bool
}

// inspect reports whether process pid exists and what /proc says of it.
// A process that exists but whose /proc entry cannot be read (gone in
// between, or hidden) has zero fields.
func inspect(pid int) (p proc, exists bool) {
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return p, false
	}
	dir := "/proc/" + strconv.Itoa(pid)
	if b, err := os.ReadFile(dir + "/stat"); err == nil {
		// The command name (field 2) is in parentheses and may hold
		// spaces; f[0] is field 3 (state), field 22 (start time) is f[19].
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 {
			f := strings.Fields(string(b[i+1:]))
			if len(f) >= 20 {
				p.zombie = f[0] == "Z" || f[0] == "X"
				if t, err := strconv.ParseInt(f[19], 10, 64); err == nil && t > 0 {
					p.start = t
				}
			}
		}
	}
	if l, err := os.Readlink(dir + "/ns/pid"); err == nil { // "pid:[4026531836]"
		if s, ok := strings.CutPrefix(l, "pid:["); ok {
			if n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				p.ns = n
			}
		}
	}
	return p, true
}
