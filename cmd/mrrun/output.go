package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// outputTarget is where an output file (-o, --png, a profile, a generated
// input) goes, found before anything is written: the file a path names,
// the mode it gets and who owns it.
type outputTarget struct {
	path   string      // the file to replace or create: a symbolic link followed
	exists bool        // path is a regular file now
	direct bool        // path is a device or a named pipe: written in place, never replaced
	mode   fs.FileMode // an existing file's permissions, else 0666 less the umask
	uid    int         // an existing file's owner (-1: a new file)
	gid    int
}

// resolveOutput finds where path's output goes, as careful Unix tools do:
//   - a symbolic link is followed, so that the file it names is replaced
//     and the link kept, unless it sits in a sticky, world-writable
//     directory (/tmp) and neither the caller nor the directory's owner
//     owns it: the kernel's protected_symlinks rule, which a program that
//     resolves the link itself would bypass (another user's link in /tmp
//     must not make root replace the file it names);
//   - an existing file keeps its permissions (and, when root replaces it,
//     its owner); a new file gets 0666 less the umask;
//   - the directory must exist and be writable now, before a job whose
//     result would otherwise be lost at its end.
func resolveOutput(path string) (outputTarget, error) {
	t := outputTarget{path: path, uid: -1, gid: -1}
	if li, err := os.Lstat(path); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if err := followable(path, li); err != nil {
			return t, err
		}
		if target, err := filepath.EvalSymlinks(path); err == nil {
			t.path = target
		}
	}
	fi, err := os.Stat(t.path)
	switch {
	case err == nil && fi.IsDir():
		return t, fmt.Errorf("%s is a directory", t.path)
	case err == nil && !fi.Mode().IsRegular():
		t.direct = true
		return t, nil
	case err == nil:
		t.exists, t.mode = true, fi.Mode().Perm()
		t.uid, t.gid = owner(fi)
	case errors.Is(err, fs.ErrNotExist):
		t.mode = 0o666 &^ umask()
	default:
		return t, err
	}
	dir := filepath.Dir(t.path)
	if err := writableDir(dir); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == dir {
			err = pe.Err // the path is said once
		}
		return t, fmt.Errorf("directory %s: %w", dir, err)
	}
	return t, nil
}

// followable refuses a symbolic link that the kernel's protected_symlinks
// rule would not let the caller follow: one in a sticky, world-writable
// directory owned by neither the caller nor the directory's owner.
func followable(path string, link fs.FileInfo) error {
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if di.Mode()&fs.ModeSticky == 0 || di.Mode().Perm()&0o002 == 0 {
		return nil
	}
	luid, _ := owner(link)
	duid, _ := owner(di)
	if luid < 0 || luid == os.Geteuid() || luid == duid {
		return nil
	}
	return fmt.Errorf("%s is a symbolic link of user %d in the sticky, world-writable directory %s: not followed (the kernel's protected_symlinks rule); remove it, or name the file it points to", path, luid, dir)
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	ai, err := os.Stat(a)
	if err != nil {
		return false
	}
	bi, err := os.Stat(b)
	return err == nil && os.SameFile(ai, bi)
}
