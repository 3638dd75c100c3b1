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

// Saver saves one rank's snapshots. It belongs to one goroutine.
type Saver struct {
	dir  string
	prev State
	last time.Time     // when the last save ended (or the saver began)
	cost time.Duration // what the last save took
	// Every is the least time between saves; a save is due once both
	// Every and Ratio times the last save's cost have passed.
	Every time.Duration
	Ratio int
	saves int
}

// DefaultEvery and DefaultRatio are a Saver's defaults: a snapshot at
// most every quarter second, and no sooner than ten times what the last
// one took, so that saving costs at most about a tenth of the map.
const (
	DefaultEvery = 250 * time.Millisecond
	DefaultRatio = 10
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

// Saves is the number of snapshots this saver wrote.
func (s *Saver) Saves() int { return s.saves }

// Save commits a snapshot: done (ascending) are every task finished so
// far, side the app's side result for them, and writeRun writes their
// combined output to the path it is given (a new file, which it must
// sync: reduce.Store.WriteFile does). On an error the previous snapshot
// stays the committed one.
func (s *Saver) Save(done []int64, side []byte, writeRun func(path string) error) error {
	t0 := time.Now()
	next := s.prev
	next.Gen++
	next.Done, next.Side = done, side
	next.Run = fmt.Sprintf("rank-%d.%d.run", next.Rank, next.Gen)
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
	s.saves++
	s.last = time.Now()
	s.cost = s.last.Sub(t0)
	return nil
}
