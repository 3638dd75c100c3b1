//go:build unix

package mpi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// TestJobDir: the processes of a job share its directory, each holding a
// lock on it; the last to release it removes it, and until then it
// stays.
func TestJobDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), shmDirPrefix()+"job")
	a, err := openJobDir(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Fatalf("openJobDir made %v (%v); want a directory of mode 0700", st, err)
	}
	b, err := openJobDir(path) // another rank of the job
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "vader_segment.x.0"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	a.release()
	if !exists(path) {
		t.Fatal("the first release removed the directory another process holds")
	}
	b.release()
	if exists(path) {
		t.Error("the last release left the directory")
	}
	b.release() // twice: nothing
}

// TestJobDirNotOurs: a directory that lets others in is not used.
func TestJobDirNotOurs(t *testing.T) {
	path := filepath.Join(t.TempDir(), shmDirPrefix()+"open")
	if err := os.Mkdir(path, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	if d, err := openJobDir(path); err == nil {
		d.release()
		t.Fatal("openJobDir used a directory of mode 0777")
	}
}

// TestRemoveStaleJobDirs: of the directories of this user's jobs, those
// that no process holds go, with what they hold; the one kept, a held
// one, and whatever else is there stay.
func TestRemoveStaleJobDirs(t *testing.T) {
	base := t.TempDir()
	p := shmDirPrefix()
	mk := func(name string) string {
		path := filepath.Join(base, name)
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(path, "vader_segment.x.0"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	dead1, dead2 := mk(p+"dead1"), mk(p+"dead2")
	keep := mk(p + "mine")
	live, err := openJobDir(filepath.Join(base, p+"live"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.release()
	other := mk("pgasmr-ompi-other")
	file := filepath.Join(base, p+"file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	removed := removeStaleJobDirs(base, p, filepath.Base(keep))
	slices.Sort(removed)
	if want := []string{dead1, dead2}; !slices.Equal(removed, want) {
		t.Errorf("removed %q; want %q", removed, want)
	}
	for _, path := range []string{dead1, dead2} {
		if exists(path) {
			t.Errorf("%s is left", path)
		}
	}
	for _, path := range []string{keep, live.path, other, file} {
		if !exists(path) {
			t.Errorf("%s was removed", path)
		}
	}
	// Held directories are joined, not removed.
	again, err := openJobDir(live.path)
	if err != nil {
		t.Fatal(err)
	}
	again.release()
	if !exists(live.path) {
		t.Error("a release removed a directory another holder has")
	}
}

// TestOMPIJobName: the job's name comes from the PMIx namespace, else
// OpenMPI's job id, with anything but letters, digits, '.', '_' and '-'
// replaced.
func TestOMPIJobName(t *testing.T) {
	t.Setenv("PMIX_NAMESPACE", "prterun-vm-12@1/x")
	t.Setenv("OMPI_MCA_ess_base_jobid", "123")
	if got, want := ompiJobName(), "prterun-vm-12_1_x"; got != want {
		t.Errorf("ompiJobName() = %q; want %q", got, want)
	}
	t.Setenv("PMIX_NAMESPACE", "")
	if got, want := ompiJobName(), "123"; got != want {
		t.Errorf("ompiJobName() without PMIX_NAMESPACE = %q; want %q", got, want)
	}
	t.Setenv("OMPI_MCA_ess_base_jobid", "")
	if got := ompiJobName(); got != "" {
		t.Errorf("ompiJobName() without either = %q; want \"\"", got)
	}
}

// TestRemoveStaleSessions: of the session directories pid.PID, those of
// pgasmr jobs (marked) whose mpirun (PID) is gone and whose mark nobody
// holds go; the kept one, a running mpirun's, an unmarked one and one
// whose ranks still hold the mark stay.
func TestRemoveStaleSessions(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := cmd.Process.Pid // a process that no longer runs
	top := t.TempDir()
	mk := func(name string, mark bool) string {
		path := filepath.Join(top, name)
		if err := os.MkdirAll(filepath.Join(path, "1", "0"), 0o700); err != nil {
			t.Fatal(err)
		}
		if mark {
			if err := os.WriteFile(filepath.Join(path, ompiSessionMark), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}
	stale := mk(fmt.Sprintf("pid.%d", gone), true)
	keep := mk("pid.1", true)                               // this job's (and pid 1 runs)
	running := mk(fmt.Sprintf("pid.%d", os.Getpid()), true) // mpirun runs
	unmarked := mk(fmt.Sprintf("pid.%d", gone+1000000), false)
	held := mk(fmt.Sprintf("pid.%d", gone+2000000), true)
	f, err := os.Open(filepath.Join(held, ompiSessionMark))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := flock(f, syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}

	removed := removeStaleSessions(top, filepath.Base(keep))
	if want := []string{stale}; !slices.Equal(removed, want) {
		t.Errorf("removed %q; want %q", removed, want)
	}
	if exists(stale) {
		t.Errorf("%s is left", stale)
	}
	for _, path := range []string{keep, running, unmarked, held} {
		if !exists(path) {
			t.Errorf("%s was removed", path)
		}
	}
}
