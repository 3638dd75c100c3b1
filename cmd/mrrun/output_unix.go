//go:build unix

package main

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// owner returns the uid and gid of the file fi describes, or -1, -1.
func owner(fi fs.FileInfo) (int, int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return -1, -1
}

// umask returns the process's file mode creation mask: from
// /proc/self/status where Linux gives it, else by setting and restoring
// it.
func umask() fs.FileMode {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return fs.FileMode(m)
				}
			}
		}
	}
	m := unix.Umask(0)
	unix.Umask(m)
	return fs.FileMode(m)
}

// writableDir reports why dir cannot take a new file: missing, not a
// directory, not writable (a read-only file system too).
func writableDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return syscall.ENOTDIR
	}
	return unix.Access(dir, unix.W_OK|unix.X_OK)
}

// chown gives f the owner uid, gid when this process may (root).
func chown(f *os.File, uid, gid int) error {
	if uid < 0 || os.Geteuid() != 0 {
		return nil
	}
	return f.Chown(uid, gid)
}
