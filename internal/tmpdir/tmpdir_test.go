package tmpdir

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const prefix = "tmpdirtest-"

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$") // this test binary: it exists everywhere
	if p, err := exec.LookPath("true"); err == nil {
		cmd = exec.Command(p)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("run a child: %v", err)
	}
	return cmd.Process.Pid
}

func TestMakeName(t *testing.T) {
	parent := t.TempDir()
	dir, err := Make(parent, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != parent {
		t.Errorf("Make(%q) = %q; want a directory in it", parent, dir)
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("Stat(%q) = %v, %v; want a directory of mode 0700", dir, fi, err)
	}
	o, ok := parse(filepath.Base(dir), prefix)
	if !ok || o != self() {
		t.Errorf("parse(%q) = %+v, %v; want %+v", filepath.Base(dir), o, ok, self())
	}
	if runtime.GOOS == "linux" && (o.start == 0 || o.ns == 0) {
		t.Errorf("on linux the name %q should hold the start time and namespace", dir)
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		want owner
		ok   bool
	}{
		{prefix + "12-34-56-789", owner{12, 34, 56}, true},
		{prefix + "12-0-0-x", owner{12, 0, 0}, true},
		{prefix + "12-34-56", owner{}, false},
		{prefix + "12-34-56-", owner{}, false},
		{prefix + "0-34-56-1", owner{}, false},
		{prefix + "x-34-56-1", owner{}, false},
		{prefix + "12-34-56-7-8", owner{}, false},
		{"other-12-34-56-789", owner{}, false},
	} {
		if got, ok := parse(tc.name, prefix); got != tc.want || ok != tc.ok {
			t.Errorf("parse(%q) = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestCleanStale removes the directories of a reaped child and of this pid
// with another start time, and keeps this process's, a live child's,
// another namespace's, and names it does not know.
func TestCleanStale(t *testing.T) {
	parent := t.TempDir()
	me := self()
	live, err := Make(parent, prefix)
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Skipf("no sleep to run: %v", err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	cp, _ := inspect(child.Process.Pid)
	mk := func(pid int, start int64, ns uint64) string {
		p := filepath.Join(parent, fmt.Sprintf("%s%d-%d-%d-1", prefix, pid, start, ns))
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "sub", "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dead := mk(deadPID(t), me.start, me.ns)
	keep := []string{
		live,
		mk(child.Process.Pid, cp.start, me.ns),
		mk(deadPID(t), me.start, me.ns+1),          // another namespace: unprovable
		filepath.Join(parent, prefix+"not-a-name"), // not ours
		filepath.Join(parent, fmt.Sprintf("%s%d-1-1", prefix, deadPID(t))), // too few fields
	}
	for _, p := range keep[3:] {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{dead}
	if runtime.GOOS == "linux" {
		want = append(want, mk(me.pid, me.start+1, me.ns))   // this pid, reused
		keep = append(keep, mk(child.Process.Pid, 0, me.ns)) // unknown start: the pid decides
	}
	got, err := CleanStale(parent, prefix)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("CleanStale = %q; want %q", got, want)
	}
	for _, p := range want {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

func TestCleanStaleZombie(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("zombies are told by /proc")
	}
	parent := t.TempDir()
	child := exec.Command("true")
	if err := child.Start(); err != nil {
		t.Skipf("no true to run: %v", err)
	}
	defer child.Wait()
	// Not waited for: once it exits it is a zombie until Wait.
	for {
		p, ok := inspect(child.Process.Pid)
		if !ok {
			t.Fatal("the child was reaped before Wait")
		}
		if p.zombie {
			break
		}
		time.Sleep(time.Millisecond)
	}
	me := self()
	p := filepath.Join(parent, fmt.Sprintf("%s%d-%d-%d-1", prefix, child.Process.Pid, 0, me.ns))
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	got, err := CleanStale(parent, prefix)
	if err != nil || !slices.Equal(got, []string{p}) {
		t.Errorf("CleanStale = %q, %v; want [%q]", got, err, p)
	}
}

func TestCleanStaleMissingParent(t *testing.T) {
	if _, err := CleanStale(filepath.Join(t.TempDir(), "absent"), prefix); err == nil {
		t.Error("CleanStale of a missing directory: no error")
	}
}

// TestRemoveOwn removes this process's directories of the prefix, with
// their contents, and nothing else.
func TestRemoveOwn(t *testing.T) {
	parent := t.TempDir()
	me := self()
	var mine []string
	for range 2 {
		d, err := Make(parent, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		mine = append(mine, d)
	}
	keep := []string{
		filepath.Join(parent, fmt.Sprintf("%s%d-%d-%d-1", prefix, me.pid+1, me.start, me.ns)), // another pid
		filepath.Join(parent, fmt.Sprintf("other-%d-%d-%d-1", me.pid, me.start, me.ns)),       // another prefix
	}
	for _, d := range keep {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveOwn(parent, prefix); err != nil {
		t.Fatal(err)
	}
	for _, d := range mine {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s: still there (%v)", d, err)
		}
	}
	for _, d := range keep {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: removed (%v)", d, err)
		}
	}
}

// TestRemoveOwnStopsMake: once RemoveOwn has run for a parent and prefix,
// Make of them fails in this process (the process is exiting: a job still
// running must not make a directory behind the removal), and other
// parents and prefixes are not affected.
func TestRemoveOwnStopsMake(t *testing.T) {
	parent, other := t.TempDir(), t.TempDir()
	if err := RemoveOwn(parent, prefix); err != nil {
		t.Fatal(err)
	}
	if d, err := Make(parent, prefix); !errors.Is(err, ErrRemoved) {
		t.Errorf("Make after RemoveOwn = %q, %v; want ErrRemoved", d, err)
	}
	// The same directory by another name.
	if d, err := Make(parent+"/.", prefix); !errors.Is(err, ErrRemoved) {
		t.Errorf("Make(%q) after RemoveOwn = %q, %v; want ErrRemoved", parent+"/.", d, err)
	}
	for _, c := range [][2]string{{other, prefix}, {parent, "other-"}} {
		if _, err := Make(c[0], c[1]); err != nil {
			t.Errorf("Make(%q, %q): %v", c[0], c[1], err)
		}
	}
}

// TestRemoveOwnRacing removes this process's directories while goroutines
// keep making directories and writing files into them, as the ranks of a
// job that mrrun's forced exit leaves running do: once RemoveOwn has
// returned and the writers have stopped, nothing of this process's is
// left.
func TestRemoveOwnRacing(t *testing.T) {
	parent := t.TempDir()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var made atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := ""
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if dir == "" || i%20 == 0 {
					d, err := Make(parent, prefix)
					if err != nil {
						dir = ""
						time.Sleep(50 * time.Microsecond)
						continue
					}
					dir = d
					made.Add(1)
				}
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d-%06d.run", w, i)), []byte("x"), 0o600)
				time.Sleep(20 * time.Microsecond)
			}
		}()
	}
	for made.Load() < 20 {
		time.Sleep(time.Millisecond)
	}
	err := RemoveOwn(parent, prefix)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Errorf("RemoveOwn: %v", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) > 0 {
		t.Errorf("left behind: %d entries, the first %s", len(ents), ents[0].Name())
	}
}

// TestMakeForgets: a process that makes and removes many directories
// (a server running job after job) is not remembered every one of them,
// and RemoveOwn still removes those it has not removed itself.
func TestMakeForgets(t *testing.T) {
	parent := t.TempDir()
	var live []string
	for i := range 300 {
		d, err := Make(parent, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 {
			live = append(live, d)
		} else if err := os.Remove(d); err != nil {
			t.Fatal(err)
		}
	}
	own.Lock()
	n := len(own.made[removedKey(parent, prefix)])
	own.Unlock()
	if n > 2*pruneAt {
		t.Errorf("Make remembers %d directories of %d made, %d of them there", n, 300, len(live))
	}
	if err := RemoveOwn(parent, prefix); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) > 0 {
		t.Errorf("left behind: %d entries, the first %s", len(ents), ents[0].Name())
	}
}
