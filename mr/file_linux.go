package mr

import "golang.org/x/sys/unix"

// sizeless reports whether path is on a file system whose files stat as
// empty whatever they hold: procfs or sysfs.
func sizeless(path string) bool {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return false
	}
	return st.Type == unix.PROC_SUPER_MAGIC || st.Type == unix.SYSFS_MAGIC
}
