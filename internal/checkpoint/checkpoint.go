// Package checkpoint keeps the finished map tasks of a job in a directory,
// so that the same job run again after a failure (a killed process, a
// node that went away, a time limit, Ctrl-C) redoes only the rest.
//
// A checkpoint directory holds:
//
//	pgasmr-checkpoint.json  the manifest: the app, its options, the rank
//	                        count and the inputs' identity (path, size,
//	                        modification time), written by the root
//	rank-N.json             rank N's state: the tasks it has finished, the
//	                        app's side result (its file statuses) and the
//	                        name of its run file, tied to the manifest by
//	                        its digest (Manifest.Key)
//	rank-N.G.run            the map output of those tasks, in the spill
//	                        format (reduce.Store.WriteFile), generation G
//
// A rank's state is a snapshot: its run file holds the combined output
// of every task its state lists, and nothing else. A rank replaces both
// together: the new run file is written and synced first, then the state
// that names it is written beside it and renamed over the old state
// (rename is the commit), then the old run file goes. A process killed
// at any point leaves the last committed state whole.
//
// The root calls Prepare before any rank reads its state: it makes the
// directory, or clears a checkpoint made for another job and says why.
// Each rank then reads its own state (Load), skips the tasks it lists,
// and saves a new snapshot when one is due (Saver): after a time that
// grows with what the last save cost, so that saving costs about a twentieth
// of the map's time at most, and at the end of its map. Remove deletes
// the checkpoint once the job's result is safe.
//
// The package knows nothing of MapReduce: the app writes its run with
// the store it maps into, through the callback Saver.Save gives a path.
package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Format is the version of the directory's layout; a checkpoint of another
// format is started over.
const Format = 1

// ManifestName is the manifest's file name in a checkpoint directory.
const ManifestName = "pgasmr-checkpoint.json"

// Manifest is what a checkpoint is valid for: the same app, options,
// rank count and inputs.
type Manifest struct {
	Format  int
	App     string
	Options string // the options that shape the map, as text
	Ranks   int
	Inputs  []Input
}

// Input is one input file's identity.
type Input struct {
	Path    string
	Size    int64
	ModTime time.Time
}

// NewManifest returns the manifest of app with options and ranks over the
// files paths (in the job's order), stating each file for its size and
// modification time. An error names the file.
func NewManifest(app, options string, ranks int, paths []string) (Manifest, error) {
	m := Manifest{Format: Format, App: app, Options: options, Ranks: ranks, Inputs: make([]Input, len(paths))}
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return Manifest{}, fmt.Errorf("checkpoint: %w", err)
		}
		m.Inputs[i] = Input{Path: p, Size: fi.Size(), ModTime: fi.ModTime().UTC()}
	}
	return m, nil
}

// Key is the manifest's digest: a rank's state holds the key of the
// manifest it was saved under, and counts only under the same one.
func (m Manifest) Key() string {
	b, _ := json.Marshal(m) // plain fields: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// differs names the first way m (the checkpoint's) differs from now (this
// run's), or returns "" when they are the same job.
func (m Manifest) differs(now Manifest) string {
	switch {
	case m.Format != now.Format:
		return fmt.Sprintf("it is of format %d, this mrrun writes format %d", m.Format, now.Format)
	case m.App != now.App:
		return fmt.Sprintf("it was made by %s, this run is %s", m.App, now.App)
	case m.Ranks != now.Ranks:
		return fmt.Sprintf("it was made with %d ranks, this run has %d", m.Ranks, now.Ranks)
	case m.Options != now.Options:
		return fmt.Sprintf("its options were %s, this run's are %s", m.Options, now.Options)
	}
	old := make(map[string]Input, len(m.Inputs))
	for _, in := range m.Inputs {
		old[in.Path] = in
	}
	for _, in := range now.Inputs {
		o, ok := old[in.Path]
		switch {
		case !ok:
			return fmt.Sprintf("input %s is new", strconv.Quote(in.Path))
		case o.Size != in.Size:
			return fmt.Sprintf("input %s changed size (%d bytes, now %d)", strconv.Quote(in.Path), o.Size, in.Size)
		case !o.ModTime.Equal(in.ModTime):
			return fmt.Sprintf("input %s was modified (%s, now %s)", strconv.Quote(in.Path),
				o.ModTime.Format(time.RFC3339Nano), in.ModTime.Format(time.RFC3339Nano))
		}
		delete(old, in.Path)
	}
	for _, in := range m.Inputs {
		if _, ok := old[in.Path]; ok {
			return fmt.Sprintf("input %s is gone", strconv.Quote(in.Path))
		}
	}
	if m.Key() != now.Key() { // the same inputs in another order
		return "its inputs were listed in another order"
	}
	return ""
}

// Prepare readies dir for the job of manifest m, on the root before any
// rank calls Load. A missing dir is made (0700). A dir holding a
// checkpoint of the same job is kept, and resumed is true. One holding a
// checkpoint of another job is cleared, and started says why in one
// line. A dir that is not a directory, is a symbolic link, belongs to
// another user or holds files that are not a checkpoint's is an error
// that names it: nothing there is removed.
func Prepare(dir string, m Manifest) (resumed bool, started string, err error) {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(dir, 0o700); err != nil {
			return false, "", fmt.Errorf("checkpoint: %w", err)
		}
		return false, "", writeManifest(dir, m)
	case err != nil:
		return false, "", fmt.Errorf("checkpoint: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return false, "", fmt.Errorf("checkpoint %s: is a symbolic link; name the directory itself", dir)
	case !fi.IsDir():
		return false, "", fmt.Errorf("checkpoint %s: not a directory", dir)
	}
	if err := checkOwner(dir, fi); err != nil {
		return false, "", err
	}
	names, err := list(dir)
	if err != nil {
		return false, "", err
	}
	if len(names) == 0 {
		return false, "", writeManifest(dir, m)
	}
	for _, n := range names {
		if !ours(n) {
			return false, "", fmt.Errorf("checkpoint %s: holds %s, which is not a checkpoint's file; name an empty or new directory", dir, strconv.Quote(n))
		}
	}
	why := ""
	if old, err := readManifest(dir); err != nil {
		why = err.Error()
	} else if why = old.differs(m); why == "" {
		return true, "", removeTemps(dir, names)
	}
	started = fmt.Sprintf("checkpoint %s: starting over: %s", dir, why)
	if err := removeNames(dir, names); err != nil {
		return false, "", err
	}
	return false, started, writeManifest(dir, m)
}

// checkOwner refuses a directory another user owns, or that others can
// write: its files are trusted on resume.
func checkOwner(dir string, fi fs.FileInfo) error {
	if uid, ok := ownerOf(fi); ok && uid != os.Geteuid() {
		return fmt.Errorf("checkpoint %s: belongs to user %d, not to this user (%d)", dir, uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("checkpoint %s: others can write to it (mode %v); chmod go-w it or name another directory", dir, fi.Mode().Perm())
	}
	return nil
}

// ours reports whether name is one of the files a checkpoint holds
// (temporary ones included).
func ours(name string) bool {
	if name == ManifestName || strings.HasPrefix(name, ManifestName+".tmp") {
		return true
	}
	return strings.HasPrefix(name, "rank-") && (strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".run") || strings.Contains(name, ".tmp"))
}

func list(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name()
	}
	return names, nil
}

func removeNames(dir string, names []string) error {
	var errs []error
	for _, n := range names {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("checkpoint: %w", err))
		}
	}
	return errors.Join(errs...)
}

// removeTemps removes the temporary files of a process killed while it
// saved.
func removeTemps(dir string, names []string) error {
	return removeNames(dir, slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !strings.Contains(n, ".tmp") }))
}

func readManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return m, errors.New("it has no manifest")
		}
		return m, err
	}
	if err := strictJSON(b, &m); err != nil {
		return m, fmt.Errorf("its manifest is unreadable (%v)", err)
	}
	return m, nil
}

func writeManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return writeAtomic(filepath.Join(dir, ManifestName), append(b, '\n'))
}

// strictJSON decodes b into v, refusing unknown fields and trailing data.
func strictJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the value")
	}
	return nil
}

// writeAtomic writes b to path through a synced temporary file renamed
// over it, then syncs the directory: after a crash path holds the old
// bytes or the new ones.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("checkpoint: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("checkpoint: sync %s: %w", dir, err)
	}
	return nil
}

// Remove deletes dir's checkpoint files, and dir itself if nothing else
// is left in it: the job's result is safe. A missing dir is no error.
func Remove(dir string) error {
	names, err := list(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := removeNames(dir, slices.DeleteFunc(names, func(n string) bool { return !ours(n) })); err != nil {
		return err
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		if left, _ := list(dir); len(left) > 0 {
			return nil // another's files: the directory stays
		}
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}
