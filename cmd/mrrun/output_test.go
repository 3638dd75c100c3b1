//go:build unix

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/pgasmr/pgasmr/apps/wordcount"
)

// TestOutputPlantedLink: -o through a symbolic link that another user
// planted in a sticky, world-writable directory (/tmp) is refused before
// the job, and the file it names keeps its bytes and mode; a link of the
// caller's own there is followed, and the file it names keeps its mode.
func TestOutputPlantedLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the link another owner")
	}
	tmp := t.TempDir()
	if err := os.Chmod(tmp, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, "x")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	args := []string{"-np", "2", "-q", "-o", link, "wordcount", testInput(t, "wordcount")}
	r := mrrun(t, args...).want(t, 2)
	checkOneLine(t, args, r.stderr, "protected_symlinks")
	if b, err := os.ReadFile(secret); err != nil || string(b) != "root's" {
		t.Errorf("the link's target now holds %q (%v)", b, err)
	}
	if fi, _ := os.Stat(secret); fi.Mode().Perm() != 0o600 {
		t.Errorf("the link's target's mode is now %v", fi.Mode())
	}
	// The caller's own link is followed; the file keeps its mode.
	if err := os.Lchown(link, 0, 0); err != nil {
		t.Fatal(err)
	}
	mrrun(t, args...).want(t, 0)
	if fi, err := os.Stat(secret); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() < 100 {
		t.Errorf("the caller's link: the target is %v, %d bytes (%v); want the result, mode 0600", fi.Mode(), fi.Size(), err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is now %v (%v)", fi.Mode(), err)
	}
}

// TestOutputUmask: new output files (-o, --png, gen) get 0666 less the
// umask; a replaced file keeps its mode.
func TestOutputUmask(t *testing.T) {
	old := unix.Umask(0o077)
	defer unix.Umask(old)
	dir := t.TempDir()
	out, png := filepath.Join(dir, "out.txt"), filepath.Join(dir, "h.png")
	mrrun(t, "-np", "2", "-q", "-o", out, "--png", png, "histogram", testInput(t, "histogram")).want(t, 0)
	img := filepath.Join(dir, "img.bmp")
	mrrun(t, "gen", "histogram", "--size", "10000", "--seed", "1", img).want(t, 0)
	corpus := filepath.Join(dir, "corpus")
	mrrun(t, "gen", "wordcount", "--size", "10000", "--files", "3", "--seed", "1", corpus).want(t, 0)
	for _, p := range []string{out, png, img, corpus} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v under umask 077, want %v", filepath.Base(p), fi.Mode().Perm(), want)
		}
	}
	unix.Umask(0o022)
	if err := os.Chmod(out, 0o640); err != nil {
		t.Fatal(err)
	}
	mrrun(t, "-np", "2", "-q", "-o", out, "histogram", testInput(t, "histogram")).want(t, 0)
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o640 {
		t.Errorf("a replaced file's mode is now %v, want its 0640", fi.Mode().Perm())
	}
}

// TestOutputRefused: an output that would overwrite an input, -o and
// --png naming one file, a directory that is missing or read-only, and a
// TMPDIR that does not exist are refused at once, with one line, before
// the job, and leave nothing.
func TestOutputRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("some words here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	same := filepath.Join(dir, "same")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", in, "wordcount", in}, "is the input"},
		{[]string{"-o", in, "wordcount", dir}, "is the input"},
		{[]string{"-o", filepath.Join(dir, "none", "out.txt"), "wordcount", in}, "no such file or directory"},
		{[]string{"-o", same, "--png", same, "histogram", testInput(t, "histogram")}, "the same file"},
	} {
		args := append([]string{"-np", "2", "-q"}, c.args...)
		r := mrrun(t, args...).want(t, 2)
		checkOneLine(t, args, r.stderr, c.want)
	}
	if b, _ := os.ReadFile(in); string(b) != "some words here\n" {
		t.Errorf("the input now holds %q", b)
	}
	if _, err := os.Stat(same); err == nil {
		t.Errorf("-o and --png of one file wrote it")
	}
	if os.Geteuid() != 0 { // root writes where the mode forbids
		if err := os.Chmod(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		args := []string{"-np", "2", "-q", "-o", filepath.Join(ro, "out.txt"), "wordcount", in}
		checkOneLine(t, args, mrrun(t, args...).want(t, 2).stderr, "permission denied")
	}
	t.Setenv("TMPDIR", filepath.Join(dir, "nonexistent"))
	args := []string{"-np", "2", "-q", "wordcount", in}
	checkOneLine(t, args, mrrun(t, args...).want(t, 2).stderr, "TMPDIR=")
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %s, want in.txt and ro only", strings.Join(names, " "))
	}
}

// TestOutputStaleTemp: the temporary file of a writer killed before its
// rename (SIGKILL runs no cleanup) is removed by the next run writing the
// same output, once its name proves its maker dead; a live process's stays.
func TestOutputStaleTemp(t *testing.T) {
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Skip("no pid namespace to name:", err)
	}
	ns := strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]")
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	stale := filepath.Join(dir, fmt.Sprintf(".out.txt.tmp-%d-0-%s-123", gone.Process.Pid, ns))
	live := filepath.Join(dir, fmt.Sprintf(".out.txt.tmp-%d-0-%s-456", os.Getpid(), ns))
	for _, p := range []string{stale, live} {
		if err := os.WriteFile(p, []byte("half a result"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mrrun(t, "-np", "2", "-q", "-o", out, "wordcount", testInput(t, "wordcount")).want(t, 0)
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("the dead writer's %s is still there", filepath.Base(stale))
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's %s was removed: %v", filepath.Base(live), err)
	}
}

// TestOutputReaderGone: a reader that goes after the first line (mrrun
// ... | head -1) ends mrrun quietly with status 141, and the files of a
// result past the memory budget go too.
func TestOutputReaderGone(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a corpus")
	}
	in, spill := t.TempDir(), t.TempDir()
	if err := wordcount.Generate(in, 16<<20, 4, 3); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, "-np", "2", "-q", "--memory", "2MiB", "--tmp", spill, "wordcount", in)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "word") {
		t.Fatalf("first line %q: %v", line, err)
	}
	stdout.Close()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 141 || stderr.Len() != 0 {
		t.Errorf("exit %v, stderr %q; want status 141 and nothing said", err, stderr.String())
	}
	if entries, _ := os.ReadDir(spill); len(entries) != 0 {
		t.Errorf("--tmp holds %d entries after the reader went, want none", len(entries))
	}
}

// TestLaunchedInproc: mrrun started by a launcher as one of several
// processes (mpirun -np 2 mrrun wordcount ...) without --transport mpi
// would run the whole job in every process: it refuses, saying what to add.
func TestLaunchedInproc(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	args := []string{"-np", "2", "-q", "wordcount", testInput(t, "wordcount")}
	r := mrrun(t, args...).want(t, 2)
	checkOneLine(t, args, r.stderr, "add --transport mpi")
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing", r.stdout)
	}
}
