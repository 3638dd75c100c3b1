package tmpdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ErrRemoved is returned by Make for a prefix whose directories in parent
// this process has removed with RemoveOwn: it is on its way out.
var ErrRemoved = errors.New("this process has removed its directories here (it is exiting)")

// own holds, by parent and prefix, the directories Make has made for this
// process, and whether RemoveOwn has removed them (then Make makes no
// more there). Make holds the lock while it checks and makes, so that no
// directory is made behind RemoveOwn's back.
var own struct {
	sync.Mutex
	made    map[[2]string][]string
	removed map[[2]string]bool
}

// removedKey is the key of parent and prefix in own's maps.
func removedKey(parent, prefix string) [2]string {
	if abs, err := filepath.Abs(parent); err == nil {
		parent = abs
	}
	return [2]string{filepath.Clean(parent), prefix}
}

// owner is what a directory's name says about the process that made it.
type owner struct {
	pid   int
	start int64  // clock ticks since boot; 0: unknown
	ns    uint64 // pid namespace inode; 0: unknown
}

// self is this process.
func self() owner {
	pid := os.Getpid()
	p, _ := inspect(pid) // unknown fields stay 0
	return owner{pid: pid, start: p.start, ns: p.ns}
}

// Make creates a new directory in parent (os.TempDir() if "") with mode
// 0700, named prefix + "<pid>-<start>-<ns>-<random>" for this process, and
// returns its path. The caller removes it (os.RemoveAll) when done. Once
// RemoveOwn has run for parent and prefix, Make fails with ErrRemoved.
func Make(parent, prefix string) (string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	key := removedKey(parent, prefix)
	own.Lock()
	defer own.Unlock()
	if own.removed[key] {
		return "", fmt.Errorf("tmpdir: %s: %w", parent, ErrRemoved)
	}
	o := self()
	dir, err := os.MkdirTemp(parent, fmt.Sprintf("%s%d-%d-%d-*", prefix, o.pid, o.start, o.ns))
	if err != nil {
		return "", fmt.Errorf("tmpdir: %w", err)
	}
	if own.made == nil {
		own.made = map[[2]string][]string{}
	}
	ds := own.made[key]
	if len(ds) >= pruneAt && len(ds)&(len(ds)-1) == 0 {
		// A long-lived process makes and removes many: forget those gone.
		ds = slices.DeleteFunc(ds, func(d string) bool {
			_, err := os.Lstat(d)
			return errors.Is(err, fs.ErrNotExist)
		})
	}
	own.made[key] = append(ds, dir)
	return dir, nil
}

// pruneAt is how many directories of a parent and prefix Make remembers
// before it forgets those that are gone (and again at every power of two).
const pruneAt = 64

// CreateFile creates a new file in parent (os.TempDir() if "") with mode
// 0600, named as Make names a directory, open for reading and writing:
// a temporary file that CleanStale can remove once its maker is dead (an
// output written through a file renamed at the end, whose writer was
// killed before the rename).
func CreateFile(parent, prefix string) (*os.File, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	o := self()
	f, err := os.CreateTemp(parent, fmt.Sprintf("%s%d-%d-%d-*", prefix, o.pid, o.start, o.ns))
	if err != nil {
		return nil, fmt.Errorf("tmpdir: %w", err)
	}
	return f, nil
}

// parse reads the owner out of a name Make gave, or reports false.
func parse(name, prefix string) (owner, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return owner{}, false
	}
	f := strings.Split(rest, "-")
	if len(f) != 4 {
		return owner{}, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseInt(f[1], 10, 64)
	ns, err3 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 || start < 0 || f[3] == "" {
		return owner{}, false
	}
	return owner{pid: pid, start: start, ns: ns}, true
}

// dead reports whether o's process is provably gone, as seen from me.
func (o owner) dead(me owner) bool {
	if o.ns != me.ns {
		return false // another pid namespace: its pids are not ours to look up
	}
	if o.pid == me.pid {
		return o.start != me.start && o.start != 0 && me.start != 0
	}
	p, exists := inspect(o.pid)
	switch {
	case !exists:
		return true
	case p.zombie:
		return true // exited; only its parent has not reaped it yet
	case o.start != 0 && p.start != 0 && p.start != o.start:
		return true // the pid was reused
	}
	return false
}

// CleanStale removes the directories and files in parent (os.TempDir() if
// "") that Make or CreateFile named with prefix for a process that is
// provably dead (see the package doc), with what they hold, and returns
// their paths. Errors (a
// directory it may not remove) are joined; the others are still removed.
func CleanStale(parent, prefix string) ([]string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		return nil, fmt.Errorf("tmpdir: clean stale directories: %w", err)
	}
	me := self()
	var removed []string
	var errs []error
	for _, e := range ents {
		o, ok := parse(e.Name(), prefix)
		if !ok || !(e.IsDir() || e.Type().IsRegular()) || !o.dead(me) {
			continue
		}
		path := filepath.Join(parent, e.Name())
		if err := os.RemoveAll(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("tmpdir: remove stale directory: %w", err))
			continue
		}
		removed = append(removed, path)
	}
	return removed, errors.Join(errs...)
}

// RemoveOwn removes, with what they hold, the directories in parent
// (os.TempDir() if "") that Make made with prefix for this process: what
// a process leaves when it exits without returning through the defers
// that remove them (mrrun's forced exit after an interrupt that the job
// does not answer in time, or at a memory limit), or that a job failing
// half-way did not remove. Other processes' directories stay.
//
// The goroutines of a job may still be writing there: from the moment
// RemoveOwn is called, Make of prefix in parent fails in this process
// (ErrRemoved), and a directory in which a file appeared while it was
// being removed is removed again, a few times. A file written into a
// directory after it has gone fails (the directory does not exist).
func RemoveOwn(parent, prefix string) error {
	if parent == "" {
		parent = os.TempDir()
	}
	key := removedKey(parent, prefix)
	own.Lock()
	if own.removed == nil {
		own.removed = map[[2]string]bool{}
	}
	own.removed[key] = true
	dirs := own.made[key]
	delete(own.made, key)
	own.Unlock()
	var errs []error
	for _, d := range dirs {
		var err error
		for range removeTries {
			if err = os.RemoveAll(d); err == nil {
				break
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("tmpdir: %w", err))
		}
	}
	return errors.Join(errs...)
}

// removeTries is how many times RemoveOwn removes a directory that its
// process's goroutines keep writing into.
const removeTries = 5
