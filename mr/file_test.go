//go:build unix

package mr_test

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/mr"
)

// TestStatRegular checks what StatRegular and StatInput accept and the
// text of what they refuse; neither may block on a FIFO, which opening
// would.
func TestStatRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(file, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	toFile, toFIFO, toDir := link("to-file", file), link("to-fifo", fifo), link("to-dir", dir)
	missing := filepath.Join(dir, "missing")

	for _, c := range []struct {
		path        string
		regular     string // StatRegular's error, "" for none
		input       string // StatInput's error
		notExisting bool   // errors.Is(err, fs.ErrNotExist) instead of a text
	}{
		{path: file},
		{path: toFile},
		{path: fifo, regular: fifo + ": a named pipe (FIFO), not a regular file", input: fifo + ": a named pipe (FIFO), not a regular file"},
		{path: toFIFO, regular: toFIFO + ": a named pipe (FIFO), not a regular file", input: toFIFO + ": a named pipe (FIFO), not a regular file"},
		{path: sock, regular: sock + ": a socket, not a regular file", input: sock + ": a socket, not a regular file"},
		{path: "/dev/null", regular: "/dev/null: a character device, not a regular file", input: "/dev/null: a character device, not a regular file"},
		{path: dir, regular: dir + ": a directory, not a regular file"},
		{path: toDir, regular: toDir + ": a directory, not a regular file"},
		{path: missing, notExisting: true},
	} {
		for _, f := range []struct {
			name string
			stat func(string) (fs.FileInfo, error)
			want string
		}{{"StatRegular", mr.StatRegular, c.regular}, {"StatInput", mr.StatInput, c.input}} {
			done := make(chan error, 1)
			go func() {
				_, err := f.stat(c.path)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("%s(%s) still blocked after 5 s", f.name, c.path)
			}
			switch {
			case c.notExisting:
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s(%s) = %v; want an error wrapping fs.ErrNotExist", f.name, c.path, err)
				}
			case f.want == "":
				if err != nil {
					t.Errorf("%s(%s) = %v; want no error", f.name, c.path, err)
				}
			case err == nil || err.Error() != f.want || !errors.Is(err, mr.ErrNotRegular):
				t.Errorf("%s(%s) = %v; want %q wrapping mr.ErrNotRegular", f.name, c.path, err, f.want)
			}
		}
	}

	// Files refuses a FIFO without opening it, naming it.
	done := make(chan error, 1)
	go func() {
		_, err := fileSplits([]string{file, fifo}, 4)
		done <- err
	}()
	select {
	case err := <-done:
		want := "mr: " + fifo + ": a named pipe (FIFO), not a regular file"
		if err == nil || err.Error() != want || !errors.Is(err, mr.ErrNotRegular) {
			t.Errorf("Files with a FIFO = %v; want %q", err, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Files with a FIFO still blocked after 5 s")
	}
}
