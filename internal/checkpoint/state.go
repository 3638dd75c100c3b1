package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// State is one rank's saved progress.
type State struct {
	Key  string  // the manifest's Key it was saved under
	Rank int     // the rank that saved it
	Gen  int64   // its generation: 1 for the first save, and so on
	Done []int64 // the tasks finished, ascending
	Side []byte  // the app's side result for those tasks
	Run  string  // its run file's name in the directory ("" for none)
}

// RunPath is the path of s's run file in dir, or "" if it has none.
func (s State) RunPath(dir string) string {
	if s.Run == "" {
		return ""
	}
	return filepath.Join(dir, s.Run)
}

func statePath(dir string, rank int) string {
	return filepath.Join(dir, fmt.Sprintf("rank-%d.json", rank))
}

// Load returns rank's state in dir, if it has one saved under key; ok is
// false when it has none or one of another job (which Saver's first save
// replaces). A state that cannot be read, or whose run file is missing,
// is an error that names the file: a checkpoint that was damaged is not
// silently half-used.
func Load(dir string, rank int, key string) (s State, ok bool, err error) {
	path := statePath(dir, rank)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, false, nil
	}
	if err != nil {
		return State{}, false, fmt.Errorf("checkpoint: %w", err)
	}
	if err := strictJSON(b, &s); err != nil {
		return State{}, false, fmt.Errorf("checkpoint %s: unreadable (%v); remove the directory to start over", path, err)
	}
	if s.Key != key || s.Rank != rank {
		return State{}, false, nil
	}
	if !slices.IsSorted(s.Done) {
		return State{}, false, fmt.Errorf("checkpoint %s: its tasks are not in order; remove the directory to start over", path)
	}
	if s.Run != "" {
		if filepath.Base(s.Run) != s.Run {
			return State{}, false, fmt.Errorf("checkpoint %s: run file %q is not in the directory", path, s.Run)
		}
		if _, err := os.Stat(s.RunPath(dir)); err != nil {
			return State{}, false, fmt.Errorf("checkpoint %s: its run file: %w; remove the directory to start over", path, err)
		}
	}
	// Run files of older generations that a killed save left.
	if old, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("rank-%d.*.run", rank))); len(old) > 0 {
		for _, f := range old {
			if filepath.Base(f) != s.Run {
				os.Remove(f)
			}
		}
	}
	return s, true, nil
}

// Saver saves one rank's snapshots. Taking a snapshot (the caller's
// copy of its state) is done on the caller's goroutine; writing it, syncing
// it and committing it go on in the background while the caller maps on,
// one save at a time. A Saver belongs to one goroutine.
type Saver struct {
	dir  string
	prev State         // the last committed state
	last time.Time     // when the last snapshot was taken (or the saver began)
	cost time.Duration // what taking the last snapshot took
	// Every is the least time between snapshots; one is due once both
	// Every and Ratio times what taking the last one took have passed.
	Every time.Duration
	Ratio int
	busy  chan error // the running save's result; nil when none runs
}

// DefaultEvery and DefaultRatio are a Saver's defaults: a snapshot at
// most every half second, and no sooner than twenty times what taking the
// last one took, so that snapshots cost the map at most about a twentieth of
// its time (the writing, which waits on the disk, goes on beside it).
const (
	DefaultEvery = 500 * time.Millisecond
	DefaultRatio = 20
)

// NewSaver returns the saver of rank in dir under key, whose last state
// was prev (Load's, or the zero State).
func NewSaver(dir string, rank int, key string, prev State) *Saver {
	prev.Key, prev.Rank = key, rank
	return &Saver{dir: dir, prev: prev, last: time.Now(), Every: DefaultEvery, Ratio: DefaultRatio}
}

// Due reports whether a snapshot is due.
func (s *Saver) Due() bool {
	since := time.Since(s.last)
	return since >= s.Every && since >= time.Duration(s.Ratio)*s.cost
}

// Save takes a snapshot and commits it before it returns: Start, then
// Wait.
func (s *Saver) Save(done []int64, side []byte, snapshot func() (writeRun func(path string) error)) error {
	if err := s.Start(done, side, snapshot); err != nil {
		return err
	}
	return s.Wait()
}

// Start waits for the save that runs, if any, then takes a snapshot and
// starts committing it in the background: done (ascending, which Start
// keeps) are every task finished so far, side the app's side result for
// them, and snapshot, called at once, copies the tasks' combined output
// and returns what writes that copy to the path it is given (a new file,
// which it must sync: reduce.Store.WriteFile does). It returns the
// previous save's error, if it failed; Wait returns this one's. On an
// error the last committed snapshot stays the committed one.
func (s *Saver) Start(done []int64, side []byte, snapshot func() (writeRun func(path string) error)) error {
	if err := s.Wait(); err != nil {
		return err
	}
	t0 := time.Now()
	writeRun := snapshot()
	s.last = time.Now()
	s.cost = s.last.Sub(t0)
	next := s.prev
	next.Gen++
	next.Done, next.Side = done, side
	next.Run = fmt.Sprintf("rank-%d.%d.run", next.Rank, next.Gen)
	s.busy = make(chan error, 1)
	go func() { s.busy <- s.commit(next, writeRun) }()
	return nil
}

// Wait waits for the save that runs, if any, and returns its error.
func (s *Saver) Wait() error {
	if s.busy == nil {
		return nil
	}
	err := <-s.busy
	s.busy = nil
	return err
}

// commit writes next's run file, then its state (the commit), then
// removes the run file of the state it replaces. It runs on the save's
// goroutine: it touches s.prev, which Start and Wait read
// only once it is done.
func (s *Saver) commit(next State, writeRun func(path string) error) error {
	path := next.RunPath(s.dir)
	os.Remove(path) // a killed save's leftover of the same generation
	if err := writeRun(path); err != nil {
		os.Remove(path)
		return fmt.Errorf("checkpoint: saving rank %d's tasks: %w", next.Rank, err)
	}
	b, err := json.Marshal(next)
	if err == nil {
		err = writeAtomic(statePath(s.dir, next.Rank), b)
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	if old := s.prev.RunPath(s.dir); old != "" {
		os.Remove(old) // the committed state no longer names it
	}
	s.prev = next
	return nil
}
