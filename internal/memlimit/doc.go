// Package memlimit finds the memory limits on this process and stops a job
// with one line of error before it crosses them, instead of letting the Go
// runtime die with "fatal error: out of memory" and a goroutine dump (a
// runtime throw always prints every goroutine; nothing turns that off).
//
//	ls, err := memlimit.Limits() // nil: no limit
//	w, err := memlimit.System{}.Watch(ls, memlimit.Options{
//		SetGoLimit: true,
//		Exceeded:   func(e *memlimit.ExceededError) { cancel(e) },
//	})
//	defer w.Stop()
//
// # Limits
//
// Two limits are read: RLIMIT_AS (prlimit --as, ulimit -v), and the
// cgroup's: memory.max up the process's cgroup v2 hierarchy, or the cgroup
// v1 memory controller's memory.limit_in_bytes ("max" and values from 2^60
// are no limit). The cgroup is found from /proc/self/cgroup and the
// mounts of /proc/self/mountinfo. Each limit is measured in what it
// counts:
//
//   - RLIMIT_AS limits virtual address space, not resident memory: the
//     process's virtual size (/proc/self/statm) counts against it. A Go
//     program reserves address space at start (about 1.1 GiB for the page
//     allocator's indexes and heap arena maps on linux/amd64), each heap
//     arena is 64 MiB of it, and so are shared segments the process maps
//     (/dev/shm, mrrun's --transport shm). In a cgo build (the net
//     package's resolver links it) glibc also reserves a 64 MiB malloc
//     arena per thread that calls malloc, and an 8 MiB stack per thread:
//     under a limit close to what the process needs at start the runtime
//     can fail to start, before any of this runs (MALLOC_ARENA_MAX=2, or a
//     build without cgo, makes that room).
//   - A cgroup limit counts the memory charged to the cgroup, by every
//     process in it: the watchdog reads the cgroup's usage (memory.current,
//     v1 memory.usage_in_bytes) less its file cache, which the kernel
//     reclaims before it kills.
//
// When both apply, Limits puts first the one with the least room left: the
// effective limit, for messages.
//
// # Rules
//
// Each limit of L bytes keeps a margin for what maps memory in steps: 64
// MiB for RLIMIT_AS (one Go heap arena: the heap grows its address space
// that much at a time), 16 MiB for a cgroup. Its trigger is 90% of L, and
// at least two margins below L. A Watchdog samples every limit's usage
// every 25 ms (a pread of a /proc or cgroup file and a runtime/metrics
// read, no allocation). When a usage is over the trigger it runs a GC, if
// none ran since the usage was about this high, and subtracts what the Go
// heap then has free (and, for RLIMIT_AS, released but still mapped): if
// what is left is still over the trigger, the process is about to cross
// the limit and the watchdog calls Options.Exceeded with an
// *ExceededError. A usage within two margins of L fires at once, garbage
// or not (a Go heap may keep growing its address space while it has free
// pages); if the usage gets within one margin after Exceeded,
// Options.Critical is the last word before the runtime crashes.
//
// With Options.SetGoLimit, Go's memory limit (the GC's target, see
// runtime/debug.SetMemoryLimit) is kept at 7/8 of what the trigger leaves
// the Go runtime once everything else the limit counts is subtracted
// (address space reserved outside the Go heap, C arenas, stacks and shared
// segments for RLIMIT_AS; other processes for a cgroup), recomputed at
// every sample and never under 16 MiB. So the GC works harder as the
// process nears the trigger, and the watchdog only fires for live memory.
// A GOMEMLIMIT the user set, or a Go memory limit the program set, is left
// alone.
//
// Check tests a planned allocation against the limits: a single
// allocation larger than the room left jumps over a limit between two
// samples, and only a check before it can turn it into an error.
//
// A Watchdog's methods may be called concurrently; Exceeded and Critical
// run on its goroutine. The error path does not allocate beyond the
// error itself.
package memlimit
