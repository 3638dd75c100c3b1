package reduce

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/pgasmr/pgasmr/internal/tmpdir"
)

// spillPrefix begins the name of every job's spill directory.
const spillPrefix = "pgasmr-spill-"

// RemoveSpills removes this process's spill directories in dir
// (os.TempDir() if ""), with their files: for a process about to exit
// without returning through its jobs' defers (Spill.Close), such as
// mrrun's forced exit after an interrupt, or at the end of a job whose
// failure left a Spill unclosed. A job of the process that is still
// spilling fails: from this call on, a Spill of the process with this dir
// can make no directory there (tmpdir.RemoveOwn).
func RemoveSpills(dir string) error { return tmpdir.RemoveOwn(dir, spillPrefix) }

// MakeJobDir makes a directory in dir (os.TempDir() if "") named as this
// process's spill directories are, for the spill directories of the other
// processes of one job: a launcher gives it to its ranks as their
// Spill.Dir, and removes it, with whatever they left in it, once they have
// all exited (killed ones included). RemoveSpills and CleanStale take it
// for a spill directory of the process that made it, so that it goes
// with its maker too. Like a job's first spill, it removes the stale
// spill directories in dir first (CleanStale).
func MakeJobDir(dir string) (string, error) {
	tmpdir.CleanStale(dir, spillPrefix) // best effort, as in Spill.dir
	p, err := tmpdir.Make(dir, spillPrefix)
	if err != nil {
		return "", fmt.Errorf("reduce: job spill directory: %w", err)
	}
	return p, nil
}

// ErrSpillClosed is returned by a store that spills after its Spill was
// closed.
var ErrSpillClosed = errors.New("reduce: spill closed")

// Spill is where the stores of one job (every rank the process hosts)
// write the pairs they cannot hold (Store.SetSpill): one directory,
// made in Dir at the first spill and named for the job's process
// (package internal/tmpdir: its pid, start time and pid namespace), so
// that a later job can prove it stale (CleanStale) if this one is killed.
// The zero value spills into os.TempDir(). Close removes the directory;
// run it on every exit path (defer it where the job starts).
//
// A Spill may be shared by stores on different goroutines; it must not
// be copied after first use.
type Spill struct {
	// Dir is the directory the job's directory is made in; "" means
	// os.TempDir().
	Dir string

	mu struct {
		sync.Mutex
		path   string // the job's directory, once made
		closed bool
	}
	seq   atomic.Int64 // file names
	files atomic.Int64 // files written
	bytes atomic.Int64 // bytes written

	// wrap, if not nil, wraps the writer of every file (tests inject
	// write failures through it).
	wrap func(io.Writer) io.Writer
}

// Path returns the job's spill directory, or "" if no store has spilled
// yet (or the Spill is closed).
func (sp *Spill) Path() string {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.mu.path
}

// Written returns the files written and their bytes since the Spill was
// made, merges of spilled files included.
func (sp *Spill) Written() (files, bytes int64) { return sp.files.Load(), sp.bytes.Load() }

// Close removes the job's spill directory and what it holds, and makes
// later spills fail with ErrSpillClosed. Readers still open on its files
// (Store.DrainStream) then fail. It may be called more than once.
func (sp *Spill) Close() error {
	sp.mu.Lock()
	path := sp.mu.path
	sp.mu.path, sp.mu.closed = "", true
	sp.mu.Unlock()
	if path == "" {
		return nil
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("reduce: remove spill directory: %w", err)
	}
	return nil
}

// dir returns the job's directory, made at the first call. Making it
// first removes the stale directories of dead jobs in Dir.
func (sp *Spill) dir() (string, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	switch {
	case sp.mu.closed:
		return "", ErrSpillClosed
	case sp.mu.path != "":
		return sp.mu.path, nil
	}
	parent := sp.Dir
	if parent == "" {
		parent = os.TempDir()
	}
	// Best effort: a directory we cannot remove is not ours to worry
	// about, and must not stop this job (pgas/shm's Launch does the same).
	tmpdir.CleanStale(parent, spillPrefix)
	p, err := tmpdir.Make(parent, spillPrefix)
	if err != nil {
		return "", fmt.Errorf("spill directory in %s: %w", parent, err)
	}
	sp.mu.path = p
	return p, nil
}

// CleanStale removes the spill directories in dir (os.TempDir() if "")
// of jobs whose process is provably dead (killed before Spill.Close ran):
// the pid in the name names no process, a zombie, or a process that
// started at another time. It never removes a live process's directory,
// nor one of another pid namespace. It returns the paths it removed. The
// first spill of a job runs it on its Spill's Dir.
func CleanStale(dir string) ([]string, error) {
	removed, err := tmpdir.CleanStale(dir, spillPrefix)
	if err != nil {
		return removed, fmt.Errorf("reduce: %w", err)
	}
	return removed, nil
}

// The parts of a store, spilled apart so that the values of a key combine
// in the order they would without spilling (Drain: the emitted ones, then
// the runs', then the added pairs'), for every associative combiner.
const (
	partEmitted = iota // the container
	partRuns           // AddRun
	partLoose          // AddPairs
	nParts
)

// The estimate's constants: a held key's slot in its container (a map
// entry, an index and a value slot), and a kept value's tag.
const (
	entryBytes = 32
	tagBytes   = int64(unsafe.Sizeof(Tag{}))
)

// spillFanIn is the most files of one level a part holds: that many are
// merged into one file of the next level (a variable for tests).
var spillFanIn = 64

// spilling is a store's spill state.
type spilling struct {
	sp     *Spill
	budget int64
	mem    [nParts]int64     // estimated bytes of each part in memory
	files  [nParts][]runFile // spilled runs of each part, oldest first
	failed bool              // a spill failed: pairs stay in memory
	buf    []byte            // scratch encodings
}

// SetSpill makes the store write its pairs to sp's directory whenever
// their estimated size passes budget bytes, and Drain merge them back; a
// nil sp or a budget ≤ 0 stops further spills (runs spilled already are
// still drained). Pairs held already count. It replaces the emit
// function Emitter returns: call it before handing that out.
//
// The estimate is cheap and deterministic, the same for the same pairs
// on every run: a held key counts the size of its encoding with the
// store's key codec (Fixed, or the length of its encoding) plus 32 bytes
// for its slot in the container, and a value its encoding's size, plus
// 24 bytes for its tag if all values are kept. A combined key counts the
// first value it was emitted with (a value that grows as it combines,
// such as a concatenation, is counted short). It does not count the
// container's own overhead (a map's empty slots), nor an array store's
// slots, which are allocated for its whole key range and not given back
// by spilling.
//
// When a pair, or a run or pairs added whole, takes the estimate past the
// budget, the store writes each part it holds (the emitted pairs, the
// runs, the pairs added whole) as one sorted run, combined as Drain
// combines it, to a file of its own, and empties that part. An error
// (the directory cannot be made, a write fails) names the directory or
// file and the budget; Emit records it (Err), AddRun and AddPairs return
// it, and the store keeps every pair it could not write in memory and
// spills no more.
func (s *Store[K, V]) SetSpill(sp *Spill, budget int64) {
	if sp == nil || budget <= 0 {
		s.sp.sp, s.sp.budget = nil, 0
		s.emit = s.raw
		return
	}
	s.sp.sp, s.sp.budget, s.sp.failed = sp, budget, false
	s.sp.mem = s.estimate()
	s.emit = s.c.charged(s.charge)
}

// Spilling reports whether the store spills past a budget (SetSpill).
func (s *Store[K, V]) Spilling() bool { return s.sp.sp != nil }

// SpillBudget returns the store's budget of bytes in memory (SetSpill), or
// 0 if it does not spill.
func (s *Store[K, V]) SpillBudget() int64 { return s.sp.budget }

// SpillTo returns the Spill the store writes to (SetSpill), or nil.
func (s *Store[K, V]) SpillTo() *Spill { return s.sp.sp }

// Spilled returns the runs the store has spilled and not yet drained,
// and their bytes.
func (s *Store[K, V]) Spilled() (files int, bytes int64) {
	for _, fs := range s.sp.files {
		for _, f := range fs {
			files++
			bytes += f.bytes
		}
	}
	return files, bytes
}

// spilled reports whether the store has spilled runs to drain.
func (s *Store[K, V]) spilled() bool {
	for _, fs := range s.sp.files {
		if len(fs) > 0 {
			return true
		}
	}
	return false
}

func (s *Store[K, V]) keyBytes(k K) int64 {
	if n := s.kc.Fixed(); n > 0 {
		return int64(n)
	}
	s.sp.buf = s.kc.Append(s.sp.buf[:0], k)
	return int64(len(s.sp.buf))
}

func (s *Store[K, V]) valBytes(v V) int64 {
	if n := s.vc.Fixed(); n > 0 {
		return int64(n)
	}
	s.sp.buf = s.vc.Append(s.sp.buf[:0], v)
	return int64(len(s.sp.buf))
}

// runBytes is the estimate of e's pairs.
func (s *Store[K, V]) runBytes(e Run[K, V]) int64 {
	var n int64
	if kf, vf := s.kc.Fixed(), s.vc.Fixed(); kf > 0 && vf > 0 && e.Off == nil {
		return int64(len(e.Keys)) * (int64(kf+vf) + entryBytes)
	}
	for i, k := range e.Keys {
		n += s.keyBytes(k) + entryBytes
		if e.Off == nil {
			n += s.valBytes(e.Vals[i])
		}
	}
	if e.Off != nil {
		for _, v := range e.Vals {
			n += s.valBytes(v) + tagBytes
		}
	}
	return n
}

// estimate is the estimate of every part, computed afresh.
func (s *Store[K, V]) estimate() [nParts]int64 {
	var m [nParts]int64
	if s.c.keys() > 0 {
		m[partEmitted] = s.runBytes(s.c.pairs())
	}
	for _, e := range s.runs {
		m[partRuns] += s.runBytes(e)
	}
	for _, e := range s.loose {
		m[partLoose] += s.runBytes(e)
	}
	return m
}

// charge counts a pair the container took: a new key (fresh), or, if all
// values are kept, another value; and spills if it passes the budget.
func (s *Store[K, V]) charge(k K, v V, fresh bool) {
	n := s.valBytes(v)
	if s.comb.KeepsAll() {
		n += tagBytes
	}
	if fresh {
		n += s.keyBytes(k) + entryBytes
	}
	s.sp.mem[partEmitted] += n
	if s.overBudget() {
		s.spill() // records its error
	}
}

func (s *Store[K, V]) overBudget() bool {
	return s.sp.sp != nil && !s.sp.failed && s.sp.mem[0]+s.sp.mem[1]+s.sp.mem[2] > s.sp.budget
}

// partReaders appends readers of the pairs part p of the store holds in
// memory, sorted and combined, to srcs.
func (s *Store[K, V]) partReaders(srcs []RunReader[K, V], p int) []RunReader[K, V] {
	switch p {
	case partEmitted:
		if s.c.keys() > 0 {
			srcs = append(srcs, ReadRun(s.c.sorted()))
		}
	case partRuns:
		for _, e := range s.runs {
			srcs = append(srcs, ReadRun(e))
		}
	case partLoose:
		for _, e := range s.loose {
			srcs = append(srcs, ReadRun(s.SortCombined(e)))
		}
	}
	return srcs
}

// spill writes every part the store holds to a file of its own and
// empties it. On an error it keeps what it could not write, spills no
// more, and records and returns the error.
func (s *Store[K, V]) spill() error {
	for p := range nParts {
		var srcs []RunReader[K, V]
		srcs = s.partReaders(srcs, p)
		if len(srcs) == 0 {
			continue
		}
		if err := s.spillPart(p, s.MergeReaders(srcs...)); err != nil {
			s.sp.failed = true
			if s.err == nil {
				s.err = err
			}
			return err
		}
	}
	return nil
}

// spillPart writes part p's pairs, which src yields, to a new file,
// empties the part, and merges its files if there are spillFanIn of a
// level.
func (s *Store[K, V]) spillPart(p int, src RunReader[K, V]) error {
	f, err := s.writeFile(src)
	if err != nil {
		return err
	}
	switch p {
	case partEmitted:
		s.c.reset()
	case partRuns:
		s.runs = nil
	case partLoose:
		s.loose, s.held = nil, 0
	}
	s.sp.mem[p] = 0
	s.sp.files[p] = append(s.sp.files[p], f)
	return s.compact(p)
}

// writeFile writes what src yields to a new file in the spill directory.
// An error names the file (or the directory) and the store's budget, and
// leaves no file behind.
func (s *Store[K, V]) writeFile(src RunReader[K, V]) (runFile, error) {
	sp := s.sp.sp
	dir, err := sp.dir()
	if err != nil {
		return runFile{}, fmt.Errorf("reduce: spilling a store over its budget of %d bytes: %w", s.sp.budget, err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%06d.run", sp.seq.Add(1)))
	f, err := writeRun(path, sp.wrap, src, s.kc, s.vc, s.comb.KeepsAll())
	if err != nil {
		err = fmt.Errorf("reduce: spilling a store over its budget of %d bytes to %s: %w", s.sp.budget, path, err)
		if rmErr := os.Remove(path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			err = errors.Join(err, rmErr)
		}
		return runFile{}, err
	}
	sp.files.Add(1)
	sp.bytes.Add(f.bytes)
	return f, nil
}

// compact merges the last spillFanIn files of part p into one while they
// are of one level: every file a merge of consecutive ones, so values
// still combine in order, and at most spillFanIn-1 files a level.
func (s *Store[K, V]) compact(p int) error {
	for {
		fs := s.sp.files[p]
		n := len(fs)
		if n < spillFanIn || fs[n-spillFanIn].level != fs[n-1].level {
			return nil
		}
		tail := fs[n-spillFanIn:]
		srcs := make([]RunReader[K, V], 0, len(tail))
		for _, f := range tail {
			r, err := openRun(s, f.path, false) // removed once the merge is written
			if err != nil {
				return errors.Join(err, closeAll(srcs))
			}
			srcs = append(srcs, r)
		}
		merged := s.MergeReaders(srcs...)
		f, err := s.writeFile(merged)
		err = errors.Join(err, merged.Close())
		if err != nil {
			return err
		}
		f.level = tail[0].level + 1
		var rmErr []error
		for _, old := range tail {
			if err := os.Remove(old.path); err != nil {
				rmErr = append(rmErr, fmt.Errorf("reduce: remove merged spill file: %w", err))
			}
		}
		s.sp.files[p] = append(fs[:n-spillFanIn], f)
		if err := errors.Join(rmErr...); err != nil {
			return err
		}
	}
}

func closeAll[K, V any](rs []RunReader[K, V]) error {
	var errs []error
	for _, r := range rs {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// removeSpilled removes the store's spilled files and forgets them.
func (s *Store[K, V]) removeSpilled() {
	for p := range s.sp.files {
		for _, f := range s.sp.files[p] {
			// A file left behind goes with its directory at Spill.Close,
			// which reports what it cannot remove.
			os.Remove(f.path)
		}
		s.sp.files[p] = nil
	}
	s.sp.mem = [nParts]int64{}
}

// DrainStream empties the store and returns a reader of its pairs in
// Drain's order, combined as Drain combines them: a k-way merge of the
// spilled runs with the pairs in memory, without materialising them. The
// reader owns the spilled files: it removes each once read, and the rest
// at Close. A store that has not spilled returns a reader of Drain's run.
// An error opening a spilled file names it; the store is empty after it
// too, and its files removed.
func (s *Store[K, V]) DrainStream() (RunReader[K, V], error) {
	if !s.spilled() {
		return ReadRun(s.Drain()), nil
	}
	srcs, err := s.readers(true)
	if err != nil {
		s.Reset()
		return nil, err
	}
	for p := range s.sp.files {
		s.sp.files[p] = nil // the readers' now
	}
	s.Reset()
	return s.MergeReaders(srcs...), nil
}

// Stream returns a reader of the store's pairs in Drain's order, combined
// as Drain combines them, and leaves the store as it is: its spilled runs
// are read from their files, which stay, so that the pairs can be read
// again. The store must not change until the reader is closed. An error
// opening a spilled file names it.
func (s *Store[K, V]) Stream() (RunReader[K, V], error) {
	srcs, err := s.readers(false)
	if err != nil {
		return nil, err
	}
	return s.MergeReaders(srcs...), nil
}

// readers returns a reader of every part of the store, in Drain's
// combining order: each part's spilled files (removed once read if
// remove), then its pairs in memory. On an error it closes those it
// opened.
func (s *Store[K, V]) readers(remove bool) ([]RunReader[K, V], error) {
	var srcs []RunReader[K, V]
	for p := range nParts {
		for _, f := range s.sp.files[p] {
			r, err := openRun(s, f.path, remove)
			if err != nil {
				return nil, errors.Join(err, closeAll(srcs))
			}
			srcs = append(srcs, r)
		}
		srcs = s.partReaders(srcs, p)
	}
	return srcs, nil
}

// drainSpilled is Drain for a store that has spilled.
func (s *Store[K, V]) drainSpilled() Run[K, V] {
	r, err := s.DrainStream()
	if err != nil {
		s.err = err
		return Run[K, V]{}
	}
	e, err := s.ReadAll(r)
	if err != nil {
		s.err = err
	}
	return e
}

// drainCombinedSpilled is DrainCombined for a store that has spilled:
// the pairs in memory, then each spilled run's.
func (s *Store[K, V]) drainCombinedSpilled() Run[K, V] {
	e := concat(append(append([]Run[K, V]{s.c.pairs()}, s.runs...), s.loose...))
	files := s.sp.files
	s.sp.files = [nParts][]runFile{}
	s.Reset()
	var errs []error
	for _, fs := range files {
		for _, f := range fs {
			if len(errs) > 0 {
				os.Remove(f.path) // the drain has failed: see removeSpilled
				continue
			}
			r, err := openRun(s, f.path, true)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for r.Next() {
				e.Keys = append(e.Keys, r.Key())
				e.Vals = append(e.Vals, r.Values()[0])
			}
			if err := errors.Join(r.Err(), r.Close()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		s.err = err
	}
	return e
}
