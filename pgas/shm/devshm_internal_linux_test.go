//go:build linux

package shm

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// allocated is how many bytes of the file at path have pages.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// TestDevShmCreateReserves: the job's file in /dev/shm has all its pages
// when Launch starts the ranks; it is not sparse.
func TestDevShmCreateReserves(t *testing.T) {
	const ranks, capacity = 2, 1 << 20
	name := segName(os.Getpid(), "devshm-reserves")
	path := filepath.Join(Dir, name)
	m, err := create(Dir, name, ranks, capacity)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	defer m.unmap()
	size := fileBytes(ranks, capacity)
	if got := allocated(t, path); got < size {
		t.Errorf("%s has %d of its %d bytes allocated; want all reserved", path, got, size)
	}
}

// TestDevShmReserveChunks: a file longer than one fallocate call is
// reserved whole.
func TestDevShmReserveChunks(t *testing.T) {
	f, err := os.CreateTemp(Dir, "devshm-chunks-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	size := int64(reserveChunk + pageBytes)
	if err := reserve(f, size); err != nil {
		t.Fatalf("reserve %d bytes: %v", size, err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if got := allocated(t, f.Name()); fi.Size() != size || got < size {
		t.Errorf("file is %d bytes with %d allocated; want %d and all of it", fi.Size(), got, size)
	}
}

// TestDevShmReserveNoRoom: when the room statfs saw before the file was
// made is gone by the time its pages are reserved, reserveJob's error is
// the one line create gives up front, with what is free once the file's
// own pages are given back, and the file keeps none.
func TestDevShmReserveNoRoom(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(4<<20)); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })

	const ranks, capacity = 2, 4 << 20
	size := fileBytes(ranks, capacity)
	path := filepath.Join(dir, segName(os.Getpid(), "devshm-noroom"))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	err = reserveJob(f, dir, size, ranks, capacity)
	if err == nil {
		t.Fatalf("reserveJob of %d bytes in a 4 MiB tmpfs succeeded", size)
	}
	msg := err.Error()
	for _, want := range []string{dir + " is too full", "need 8 MiB (2 ranks of 4 MiB)", "4 MiB is free", "df " + dir} {
		if !strings.Contains(msg, want) {
			t.Errorf("reserveJob = %q; want it to say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("reserveJob's error is more than one line: %q", msg)
	}
	if got := allocated(t, path); got != 0 {
		t.Errorf("the file keeps %d bytes after reserveJob failed", got)
	}

	// create says the same before it makes the file, and leaves none.
	if _, err := create(dir, segName(os.Getpid(), "devshm-noroom2"), ranks, capacity); err == nil || err.Error() != msg {
		t.Errorf("create = %v; want %q", err, msg)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%s holds %d files after create failed; want only the first", dir, len(ents))
	}
}

func TestDevShmSizeText(t *testing.T) {
	for n, want := range map[int64]string{
		0:                     "0 B",
		1023:                  "1023 B",
		1024:                  "1 KiB",
		1536:                  "1.5 KiB",
		16 << 20:              "16 MiB",
		32<<20 + 4096:         "32 MiB",
		3<<30 + 300<<20:       "3.3 GiB",
		1 << 40:               "1 TiB",
		1<<62 + 1<<61 + 1<<60: "7 EiB",
		-(5 << 20):            "-5 MiB",
		1<<20 - 1:             "1 MiB",
		int64(4096) * 262_144: "1 GiB",
	} {
		if got := sizeText(n); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
	}
}
