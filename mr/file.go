package mr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by the error of an input path that names
// something other than a regular file (or, for StatInput, a directory).
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError is the error of an input path that names something that
// cannot be read as a regular file: a named pipe, a device, a socket, or a
// directory where a file is wanted. Its text names the path and what it
// is, without a package prefix (like *fs.PathError): for example
// "in/p: a named pipe (FIFO), not a regular file". It wraps ErrNotRegular.
type NotRegularError struct {
	Path string
	Mode fs.FileMode // the type bits of what Path names, symbolic links followed
}

func (e *NotRegularError) Error() string { return e.Path + ": " + e.Reason() }

// Reason is the error's text without the path: what Path names, then
// ", not a regular file".
func (e *NotRegularError) Reason() string {
	var what string
	switch t := e.Mode.Type(); {
	case t&fs.ModeDir != 0:
		what = "a directory"
	case t&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		what = "a socket"
	case t&fs.ModeCharDevice != 0:
		what = "a character device"
	case t&fs.ModeDevice != 0:
		what = "a block device"
	default:
		what = fmt.Sprintf("a file of type %v", t)
	}
	return what + ", not a regular file"
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// StatRegular returns the FileInfo of path, symbolic links followed, if it
// names a regular file. It never opens path, so a named pipe or a device
// is reported at once (opening a FIFO blocks until a writer comes): as a
// *NotRegularError. A path that cannot be stat'ed gives os.Stat's
// *fs.PathError.
//
// Every app checks its input files with it (or StatInput) before opening
// them. A file that is replaced by a FIFO between the check and the open
// is not caught.
func StatRegular(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode().Type()}
	}
	if err := checkSize(path, fi); err != nil {
		return nil, err
	}
	return fi, nil
}

// ErrSizeUnknown is wrapped by the error of a file whose size stat does
// not give: a file of /proc or /sys, which stat says is empty and which
// holds what a read makes. Read by its size it would count as empty, a
// silently wrong result; it is refused.
var ErrSizeUnknown = errors.New("a /proc or /sys file, whose size stat gives as 0 whatever it holds: copy it to a regular file first")

// checkSize returns an *fs.PathError wrapping ErrSizeUnknown if fi, the
// FileInfo of path, says 0 bytes and path is on a file system whose files
// have no size (procfs, sysfs).
func checkSize(path string, fi fs.FileInfo) error {
	if fi.Size() == 0 && sizeless(path) {
		return &fs.PathError{Op: "read", Path: path, Err: ErrSizeUnknown}
	}
	return nil
}

// StatInput is StatRegular for a path given as an input that may also be
// a directory to walk: it returns the FileInfo of a directory or a regular
// file (symbolic links followed) and a *NotRegularError for anything else.
//
// What a walk finds inside a directory follows a different rule: entries
// that are neither directories nor regular files (after following
// symbolic links) are skipped without a word, as grep -r and find -type f
// do; every app walks that way.
func StatInput(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode().Type()}
	}
	if fi.Mode().IsRegular() {
		if err := checkSize(path, fi); err != nil {
			return nil, err
		}
	}
	return fi, nil
}
