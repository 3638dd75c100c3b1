package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func manifest(t *testing.T, dir string, ranks int) (Manifest, []string) {
	t.Helper()
	var paths []string
	for _, n := range []string{"a.txt", "b.txt"} {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(p, []byte("words "+n), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		paths = append(paths, p)
	}
	m, err := NewManifest("wordcount", "opts", ranks, paths)
	if err != nil {
		t.Fatal(err)
	}
	return m, paths
}

func TestPrepare(t *testing.T) {
	in := t.TempDir()
	m, paths := manifest(t, in, 2)
	dir := filepath.Join(t.TempDir(), "ck")

	resumed, started, err := Prepare(dir, m)
	if err != nil || resumed || started != "" {
		t.Fatalf("new dir: %v %q %v", resumed, started, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir made with %v, %v; want 0700", fi.Mode(), err)
	}
	resumed, started, err = Prepare(dir, m)
	if err != nil || !resumed || started != "" {
		t.Fatalf("same job: %v %q %v, want resumed", resumed, started, err)
	}

	for _, tc := range []struct {
		name string
		m    func() Manifest
		why  string
	}{
		{"ranks", func() Manifest { m2 := m; m2.Ranks = 3; return m2 }, "made with 2 ranks, this run has 3"},
		{"app", func() Manifest { m2 := m; m2.App = "spamcount"; return m2 }, "made by wordcount"},
		{"options", func() Manifest { m2 := m; m2.Options = "other"; return m2 }, "options were opts"},
		{"order", func() Manifest {
			m2 := m
			m2.Inputs = []Input{m.Inputs[1], m.Inputs[0]}
			return m2
		}, "another order"},
		{"gone", func() Manifest { m2 := m; m2.Inputs = m.Inputs[:1]; return m2 }, "b.txt\" is gone"},
		{"modified", func() Manifest {
			future := time.Now().Add(time.Hour)
			os.Chtimes(paths[0], future, future)
			m2, err := NewManifest("wordcount", "opts", 2, paths)
			if err != nil {
				t.Fatal(err)
			}
			return m2
		}, "a.txt\" was modified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ck")
			if _, _, err := Prepare(dir, m); err != nil {
				t.Fatal(err)
			}
			m2 := tc.m()
			// A state of the old job: cleared with the rest.
			s := NewSaver(dir, 0, m.Key(), State{})
			if err := s.Save([]int64{1}, nil, func() func(string) error {
				return func(p string) error { return os.WriteFile(p, []byte("run"), 0o600) }
			}); err != nil {
				t.Fatal(err)
			}
			resumed, started, err := Prepare(dir, m2)
			if err != nil || resumed || !strings.Contains(started, tc.why) || !strings.HasPrefix(started, "checkpoint "+dir+": starting over: ") {
				t.Fatalf("Prepare = %v %q %v, want started over because %q", resumed, started, err, tc.why)
			}
			names, _ := list(dir)
			if len(names) != 1 || names[0] != ManifestName {
				t.Fatalf("after starting over the dir holds %q", names)
			}
			if _, ok, err := Load(dir, 0, m.Key()); ok || err != nil {
				t.Fatalf("old state loads after starting over: %v %v", ok, err)
			}
		})
	}
}

func TestPrepareRefuses(t *testing.T) {
	in := t.TempDir()
	m, _ := manifest(t, in, 2)

	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "thesis.tex"), []byte("x"), 0o600)
	if _, _, err := Prepare(foreign, m); err == nil || !strings.Contains(err.Error(), "thesis.tex") {
		t.Fatalf("dir of other files: %v", err)
	}
	if _, err := os.Stat(filepath.Join(foreign, "thesis.tex")); err != nil {
		t.Fatal("the other file went")
	}

	target := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(target, link)
	if _, _, err := Prepare(link, m); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("symlink: %v", err)
	}

	open := t.TempDir()
	os.Chmod(open, 0o777)
	if _, _, err := Prepare(open, m); err == nil || !strings.Contains(err.Error(), "others can write") {
		t.Fatalf("world-writable dir: %v", err)
	}

	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	if _, _, err := Prepare(file, m); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("file: %v", err)
	}

	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, ManifestName), []byte("{\"Format\": 1, \"Junk\": 2}"), 0o600)
	if _, started, err := Prepare(bad, m); err != nil || !strings.Contains(started, "manifest is unreadable") {
		t.Fatalf("unreadable manifest: %q %v, want started over", started, err)
	}
}

// TestSaveLoad saves snapshots, kills a save between its run file and its
// state (the run file of the next generation is left), and checks that
// Load gives the last committed state and clears the leftover.
func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	key := "k1"
	if _, ok, err := Load(dir, 0, key); ok || err != nil {
		t.Fatalf("empty dir: %v %v", ok, err)
	}
	s := NewSaver(dir, 0, key, State{})
	write := func(body string) func() func(string) error {
		return func() func(string) error {
			return func(p string) error { return os.WriteFile(p, []byte(body), 0o600) }
		}
	}
	if err := s.Save([]int64{0, 2}, []byte("side1"), write("run1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Save([]int64{0, 2, 5}, []byte("side2"), write("run2")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rank-0.1.run")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the first generation's run file stayed after the second committed")
	}
	// A save killed after its run file: generation 3's file, no state.
	os.WriteFile(filepath.Join(dir, "rank-0.3.run"), []byte("partial"), 0o600)
	os.WriteFile(filepath.Join(dir, "rank-0.json.tmp123"), []byte("{"), 0o600)

	got, ok, err := Load(dir, 0, key)
	if err != nil || !ok || got.Gen != 2 || len(got.Done) != 3 || string(got.Side) != "side2" {
		t.Fatalf("Load = %+v %v %v", got, ok, err)
	}
	if b, _ := os.ReadFile(got.RunPath(dir)); string(b) != "run2" {
		t.Fatalf("run file holds %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "rank-0.3.run")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the killed save's run file stayed")
	}
	if _, ok, _ := Load(dir, 0, "other key"); ok {
		t.Fatal("a state of another job loaded")
	}
	if _, ok, _ := Load(dir, 1, key); ok {
		t.Fatal("rank 1 loaded rank 0's state")
	}

	// A state naming a run file that is gone is an error, not an empty
	// snapshot.
	os.Remove(got.RunPath(dir))
	if _, _, err := Load(dir, 0, key); err == nil || !strings.Contains(err.Error(), "rank-0.json") {
		t.Fatalf("missing run file: %v", err)
	}
	// A failed save leaves the committed state.
	s2 := NewSaver(dir, 1, key, State{})
	if err := s2.Save([]int64{1}, nil, func() func(string) error { return func(string) error { return errors.New("disk full") } }); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("failed save: %v", err)
	}
	if _, ok, _ := Load(dir, 1, key); ok {
		t.Fatal("a failed first save left a state")
	}
}

func TestDue(t *testing.T) {
	s := NewSaver(t.TempDir(), 0, "k", State{})
	s.Every = time.Hour
	if s.Due() {
		t.Fatal("due before Every")
	}
	s.Every, s.cost, s.Ratio = 0, time.Hour, 10
	if s.Due() {
		t.Fatal("due before Ratio times the last save's cost")
	}
	s.cost = 0
	if !s.Due() {
		t.Fatal("not due")
	}
}

func TestRemove(t *testing.T) {
	in := t.TempDir()
	m, _ := manifest(t, in, 1)
	dir := filepath.Join(t.TempDir(), "ck")
	if _, _, err := Prepare(dir, m); err != nil {
		t.Fatal(err)
	}
	s := NewSaver(dir, 0, m.Key(), State{})
	if err := s.Save([]int64{0}, nil, func() func(string) error { return func(p string) error { return os.WriteFile(p, nil, 0o600) } }); err != nil {
		t.Fatal(err)
	}
	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dir left: %v", err)
	}
	if err := Remove(dir); err != nil {
		t.Fatalf("removing a missing dir: %v", err)
	}
	// Another's file stays, and so does the dir.
	if _, _, err := Prepare(dir, m); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "keep"), nil, 0o600)
	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if names, _ := list(dir); len(names) != 1 || names[0] != "keep" {
		t.Fatalf("after Remove the dir holds %q", names)
	}
}
