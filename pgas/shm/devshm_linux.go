package shm

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The job's file is reserved whole when it is created: every page of it is
// allocated on the file system (fallocate) before a rank starts. A sparse
// file would take its pages as the ranks first touch them, and on a tmpfs
// that has filled up in the meantime (another job, a program writing to
// /dev/shm) that touch is a SIGBUS, which Go turns into a fatal error with
// a dump of every goroutine and no word of /dev/shm. With the pages
// reserved, a /dev/shm without room for the job fails Launch with one line
// instead, before any rank starts, and a job that started cannot be hurt
// by what fills /dev/shm later. The price is that the job's whole file is
// memory from the start (ranks times the segment capacity, plus a page or
// more of control area), where a sparse file costs only the pages used.

// reserveChunk is how much of the file one fallocate call reserves. A
// signal interrupts fallocate on a tmpfs with EINTR and undoes the call's
// work, so the calls are kept short and an interrupted one is repeated.
const reserveChunk = 64 << 20

// reserve allocates the pages of [0, size) of f, extending f to size if it
// is shorter. It returns the error of the first fallocate call that fails
// for another reason than a signal: unix.ENOSPC when the file system has
// no room, unix.EOPNOTSUPP when it cannot reserve.
func reserve(f *os.File, size int64) error {
	fd := int(f.Fd())
	for off := int64(0); off < size; {
		n := min(reserveChunk, size-off)
		err := unix.Fallocate(fd, 0, off, n)
		switch {
		case err == nil:
			off += n
		case errors.Is(err, unix.EINTR):
			// Interrupted by a signal: this chunk was undone; again.
		default:
			return err
		}
	}
	return nil
}

// reserveJob reserves the pages of f, the file of a job of ranks segments
// of capacity bytes in dir, size bytes long. A file system without room is
// a noRoomError, with the room left once f's own pages are freed again; one
// that cannot reserve (EOPNOTSUPP) leaves f sparse, as it was.
func reserveJob(f *os.File, dir string, size int64, ranks int, capacity int64) error {
	switch err := reserve(f, size); {
	case err == nil, errors.Is(err, unix.EOPNOTSUPP):
		return nil
	case errors.Is(err, unix.ENOSPC):
		// Something took the room since create's statfs.
		f.Truncate(0) // give back what this call reserved before saying what is free
		free, ferr := freeBytes(dir)
		if ferr != nil {
			free = 0
		}
		return noRoomError(dir, size, free, ranks, capacity)
	default:
		return fmt.Errorf("shm: reserve %s in %s for the job's segments (%d ranks of %s): %w",
			sizeText(size), dir, ranks, sizeText(capacity), err)
	}
}

// freeBytes is the room left in the file system of dir for an ordinary
// user's files.
func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("shm: %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// noRoomError is the error of a job whose file does not fit in dir: one
// line naming the directory, what the job needs and what is free.
func noRoomError(dir string, need, free int64, ranks int, capacity int64) error {
	return fmt.Errorf("shm: %s is too full for the job: its segments need %s (%d ranks of %s), %s is free (df %s; free space there, or run fewer ranks or smaller segments: mrrun -np, --segment-bytes)",
		dir, sizeText(need), ranks, sizeText(capacity), sizeText(free), dir)
}

// sizeText writes n bytes for a person: "512 B", "16 MiB", "1.5 GiB".
func sizeText(n int64) string {
	const units = "KMGTPE"
	if n < 1024 && n > -1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n)/1024, 0
	for (v >= 1023.95 || v <= -1023.95) && u < len(units)-1 { // what would print as 1024.0
		v /= 1024
		u++
	}
	s := fmt.Sprintf("%.1f", v)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s + " " + units[u:u+1] + "iB"
}
