package wordcount

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/internal/checkpoint"
	"github.com/pgasmr/pgasmr/mr"
)

// interrupted runs a checkpointed count at ranks that is cancelled after
// the saves-th snapshot any rank commits, and returns how many chunks the
// ranks' states then list.
func interrupted(t *testing.T, ranks int, paths []string, o Options, saves int64) int {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("stopped by the test")
	var n atomic.Int64
	afterSave = func() {
		if n.Add(1) == saves {
			cancel(stop)
		}
	}
	defer func() { afterSave = nil }()
	_, err := pgasMode(ranks)(ctx, paths, o)
	if err == nil {
		t.Fatalf("the count ended before its %d-th save (%d saves)", saves, n.Load())
	}
	if !errors.Is(err, stop) && !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted count: %v", err)
	}
	return interruptedDone(t, ranks, o.Checkpoint)
}

// interruptedDone is how many chunks the states of ranks in dir list.
func interruptedDone(t *testing.T, ranks int, dir string) int {
	t.Helper()
	done := 0
	for r := range ranks {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("rank-%d.json", r)))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var s checkpoint.State
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		done += len(s.Done)
	}
	return done
}

// TestCheckpointResume interrupts checkpointed counts part-way, in several
// modes and rank counts, and checks that the count run again resumes
// and gives Seq's result, and that a changed input, option or rank count
// starts the checkpoint over with a line saying why.
func TestCheckpointResume(t *testing.T) {
	saveAlways = true
	defer func() { saveAlways = false }()
	corpus := t.TempDir()
	if err := Generate(corpus, 600<<10, 12, 7); err != nil {
		t.Fatal(err)
	}
	paths := []string{corpus}
	const chunk = 16 << 10
	nChunks := 0
	{
		cs, _, err := prepare(context.Background(), nil, paths, Options{ChunkBytes: chunk})
		if err != nil {
			t.Fatal(err)
		}
		nChunks = len(cs)
	}
	seq, err := Seq(context.Background(), paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := render(t, seq, "tsv")

	for _, c := range []config{
		{1, Options{}},
		{2, Options{}},
		{3, Options{Options: mr.Options{Dist: distrib.Cyclic, Map: mr.MapElement}}},
		{2, Options{Options: mr.Options{Dist: distrib.Balanced, Map: mr.MapArray}, SkipUnreadable: true}},
	} {
		t.Run(c.String(), func(t *testing.T) {
			o := c.o
			o.ChunkBytes = chunk
			o.Checkpoint = filepath.Join(t.TempDir(), "ck")
			var notes []string
			var mu sync.Mutex
			o.CheckpointNote = func(line string) { mu.Lock(); notes = append(notes, line); mu.Unlock() }
			done := interrupted(t, c.ranks, paths, o, int64(c.ranks)*5)
			if done == 0 || done >= nChunks {
				t.Fatalf("interrupted count saved %d of %d chunks", done, nChunks)
			}
			res, err := pgasMode(c.ranks)(context.Background(), paths, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(t, res, "tsv"); got != want {
				t.Fatalf("resumed count differs from Seq's:\n%.300s\nwant\n%.300s", got, want)
			}
			if len(notes) != 1 || !strings.Contains(notes[0], "resuming") {
				t.Fatalf("notes %q, want one saying it resumes", notes)
			}
			// The checkpoint now holds every chunk: a run maps nothing.
			if done := interruptedDone(t, c.ranks, o.Checkpoint); done != nChunks {
				t.Fatalf("finished count's checkpoint holds %d of %d chunks", done, nChunks)
			}
			res, err = pgasMode(c.ranks)(context.Background(), paths, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(t, res, "tsv"); got != want {
				t.Fatal("count from a complete checkpoint differs from Seq's")
			}
			if err := RemoveCheckpoint(o.Checkpoint); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(o.Checkpoint); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("checkpoint directory left after RemoveCheckpoint: %v", err)
			}
		})
	}
}

// TestCheckpointStartsOver: a checkpoint of another count (other options,
// rank count, or a changed input) is started over with one line saying
// why, and the result is the new count's.
func TestCheckpointStartsOver(t *testing.T) {
	saveAlways = true
	defer func() { saveAlways = false }()
	corpus := t.TempDir()
	if err := Generate(corpus, 300<<10, 6, 3); err != nil {
		t.Fatal(err)
	}
	paths := []string{corpus}
	base := Options{ChunkBytes: 16 << 10}
	for _, tc := range []struct {
		name   string
		ranks  int
		change func(o *Options) int // returns the rank count of the rerun
		why    string
	}{
		{"ranks", 2, func(o *Options) int { return 3 }, "made with 2 ranks, this run has 3"},
		{"options", 2, func(o *Options) int { o.Dist = distrib.Cyclic; return 2 }, "its options were"},
		{"chunk", 2, func(o *Options) int { o.ChunkBytes = 8 << 10; return 2 }, "its options were"},
		{"input", 2, func(o *Options) int {
			var f string
			filepath.WalkDir(corpus, func(p string, d iofs.DirEntry, err error) error {
				if err == nil && f == "" && d.Type().IsRegular() {
					f = p
				}
				return err
			})
			app, err := os.OpenFile(f, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			app.WriteString(" zebra zebra\n")
			app.Close()
			return 2
		}, "changed size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			o.Checkpoint = filepath.Join(t.TempDir(), "ck")
			if done := interrupted(t, tc.ranks, paths, o, 3); done == 0 {
				t.Fatal("nothing saved")
			}
			var notes []string
			var mu sync.Mutex
			o.CheckpointNote = func(line string) { mu.Lock(); notes = append(notes, line); mu.Unlock() }
			ranks := tc.change(&o)
			res, err := pgasMode(ranks)(context.Background(), paths, o)
			if err != nil {
				t.Fatal(err)
			}
			seq, err := Seq(context.Background(), paths, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := render(t, res, "tsv"), render(t, seq, "tsv"); got != want {
				t.Fatal("count after starting over differs from Seq's")
			}
			if len(notes) != 1 || !strings.Contains(notes[0], "starting over") || !strings.Contains(notes[0], tc.why) {
				t.Fatalf("notes %q, want one line starting over because %q", notes, tc.why)
			}
		})
	}
}

// TestCheckpointDamaged: a state whose run file is missing or changed is
// an error naming the file, not a count that silently lacks its words;
// a directory holding other files is refused untouched.
func TestCheckpointDamaged(t *testing.T) {
	saveAlways = true
	defer func() { saveAlways = false }()
	corpus := t.TempDir()
	if err := Generate(corpus, 200<<10, 4, 5); err != nil {
		t.Fatal(err)
	}
	paths := []string{corpus}
	o := Options{ChunkBytes: 16 << 10}
	runFile := func(dir string) string {
		fs, _ := filepath.Glob(filepath.Join(dir, "rank-0.*.run"))
		if len(fs) != 1 {
			t.Fatalf("rank 0's run files: %q, want one", fs)
		}
		return fs[0]
	}
	t.Run("changed", func(t *testing.T) {
		o := o
		o.Checkpoint = filepath.Join(t.TempDir(), "ck")
		interrupted(t, 2, paths, o, 4)
		f := runFile(o.Checkpoint)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x55
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = pgasMode(2)(context.Background(), paths, o)
		if err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "remove the directory") {
			t.Fatalf("count over a changed run file: %v, want an error naming %s", err, f)
		}
	})
	t.Run("missing", func(t *testing.T) {
		o := o
		o.Checkpoint = filepath.Join(t.TempDir(), "ck")
		interrupted(t, 2, paths, o, 4)
		f := runFile(o.Checkpoint)
		os.Remove(f)
		_, err := pgasMode(2)(context.Background(), paths, o)
		if err == nil || !strings.Contains(err.Error(), "rank-0.json") {
			t.Fatalf("count with a missing run file: %v, want an error naming rank 0's state", err)
		}
	})
	t.Run("foreign", func(t *testing.T) {
		o := o
		o.Checkpoint = t.TempDir()
		mine := filepath.Join(o.Checkpoint, "notes.txt")
		if err := os.WriteFile(mine, []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := pgasMode(2)(context.Background(), paths, o)
		if err == nil || !strings.Contains(err.Error(), "notes.txt") {
			t.Fatalf("count into a directory of other files: %v, want an error naming notes.txt", err)
		}
		if b, err := os.ReadFile(mine); err != nil || string(b) != "mine" {
			t.Fatalf("the directory's own file was touched: %q, %v", b, err)
		}
	})
	t.Run("inside an input", func(t *testing.T) {
		o := o
		for _, dir := range []string{filepath.Join(corpus, "ck"), corpus, corpus + "/./"} {
			o.Checkpoint = dir
			_, err := pgasMode(2)(context.Background(), paths, o)
			if err == nil || !strings.Contains(err.Error(), "inside input") {
				t.Fatalf("checkpoint %s in the input %s: %v, want an error", dir, corpus, err)
			}
		}
		if _, err := os.Stat(filepath.Join(corpus, "ck")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the refused checkpoint was made: %v", err)
		}
	})
	t.Run("baselines", func(t *testing.T) {
		o := o
		o.Checkpoint = t.TempDir()
		if _, err := Seq(context.Background(), paths, o); err == nil {
			t.Fatal("Seq took a checkpoint directory")
		}
		if _, err := Goroutines(context.Background(), paths, o); err == nil {
			t.Fatal("Goroutines took a checkpoint directory")
		}
	})
}

// BenchmarkCheckpoint is what keeping a checkpoint costs a count of a
// 32 MiB corpus at 2 ranks, against the same count without it.
func BenchmarkCheckpoint(b *testing.B) {
	corpus := b.TempDir()
	if err := Generate(corpus, 32<<20, 32, 1); err != nil {
		b.Fatal(err)
	}
	for _, ck := range []bool{false, true} {
		b.Run(fmt.Sprintf("checkpoint=%v", ck), func(b *testing.B) {
			b.SetBytes(32 << 20)
			for b.Loop() {
				o := Options{}
				if ck {
					o.Checkpoint = filepath.Join(b.TempDir(), "ck")
				}
				if _, err := pgasMode(2)(context.Background(), []string{corpus}, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
