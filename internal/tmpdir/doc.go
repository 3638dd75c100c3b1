// Package tmpdir makes a process's temporary directories so that a later
// process can prove, from a directory's name alone, that the process that
// made it is dead, and remove what it left behind (a job killed with
// SIGKILL runs no deferred cleanup):
//
//	dir, err := tmpdir.Make("", "pgasmr-spill-") // in os.TempDir()
//	defer os.RemoveAll(dir)
//	...
//	removed, err := tmpdir.CleanStale("", "pgasmr-spill-") // at the next start
//
// A name is prefix + "<pid>-<start>-<ns>-<random>": the process id, its
// start time (clock ticks since boot, field 22 of /proc/<pid>/stat) and
// the inode of its pid namespace (/proc/<pid>/ns/pid), so that a pid the
// kernel has reused for another process, or the same pid in another
// container sharing the directory, is not taken for the maker. The start
// time and namespace are 0 where /proc does not give them; a directory is
// then judged by its pid alone.
//
// CleanStale removes a directory only when it can prove its maker dead:
// the pid names no process, or a zombie, or a process that started at
// another time. A directory of another pid namespace, of a live process,
// or with a name it cannot parse is left alone. This is the rule package
// pgas/shm applies to its segment files.
//
// RemoveOwn removes the directories a process made, for one about to exit
// without its deferred cleanup (a forced exit), while its goroutines may
// still be writing there: from then on Make refuses to make another in
// the same place.
//
// The functions may be called concurrently.
package tmpdir
