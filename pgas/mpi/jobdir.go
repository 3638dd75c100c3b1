//go:build unix

package mpi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// OpenMPI's shared-memory files (the vader BTL's segment of every rank, and
// the one-sided components' window segments while a window is made) live
// in /dev/shm until MPI_Finalize removes them, or mpirun does at the end
// of the job; when mpirun is killed with SIGKILL nobody does. A rank of
// this package puts them in a directory of the job's own,
// /dev/shm/pgasmr-ompi-<uid>-<job>, that every rank of the job on the node
// holds a shared lock on (flock) for as long as it lives: the kernel drops
// the locks of dead processes, so a directory nobody holds belongs to a
// job that is over, and the next launch removes it.

// shmDirPrefix begins the name of every job's directory of this user.
func shmDirPrefix() string { return fmt.Sprintf("pgasmr-ompi-%d-", os.Geteuid()) }

// ompiShmVars are OpenMPI's parameters naming the directory of its
// shared-memory files: the vader BTL's (btl_sm in OpenMPI 5), and those
// of the one-sided components, which create a node's window segment there
// and remove it once every rank has mapped it.
var ompiShmVars = []string{
	"OMPI_MCA_btl_vader_backing_directory",
	"OMPI_MCA_btl_sm_backing_directory",
	"OMPI_MCA_osc_rdma_backing_directory",
	"OMPI_MCA_osc_sm_backing_directory",
}

// ompiJobName is what names the job alike in all its ranks: the PMIx
// namespace (OpenMPI's mpirun and Slurm's srun set it), or OpenMPI's job
// id; "" if neither is set.
func ompiJobName() string {
	for _, v := range []string{"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"} {
		if s := os.Getenv(v); s != "" {
			return strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
					return r
				}
				return '_'
			}, s)
		}
	}
	return ""
}

// setupOMPIShmDir is called before MPI_Init under OpenMPI: unless the
// user chose where OpenMPI's shared-memory files go (one of ompiShmVars is
// set), or there is no /dev/shm to write to, or no job name, it joins the
// job's directory in /dev/shm, points ompiShmVars at it, and removes the
// directories of jobs that are over. It returns the directory, or nil.
func setupOMPIShmDir() *jobDir {
	for _, v := range ompiShmVars {
		if _, set := os.LookupEnv(v); set {
			return nil
		}
	}
	const base = "/dev/shm"
	job := ompiJobName()
	if job == "" || syscall.Access(base, 2 /* W_OK */) != nil {
		return nil
	}
	d, err := openJobDir(filepath.Join(base, shmDirPrefix()+job))
	if err != nil {
		// OpenMPI's default, /dev/shm itself, still works.
		fmt.Fprintf(os.Stderr, "pgasmr: mpi: %v: OpenMPI's shared-memory files stay in %s\n", err, base)
		return nil
	}
	for _, v := range ompiShmVars {
		os.Setenv(v, d.path)
	}
	removeStaleJobDirs(base, shmDirPrefix(), filepath.Base(d.path))
	return d
}

// jobDir is a directory that the processes of one job share, each holding
// a shared lock on it while it lives.
type jobDir struct {
	path string
	f    *os.File // the directory, locked (LOCK_SH)
}

// openJobDir makes the directory path (mode 0700), or finds it made by
// another process of the job, and holds a shared lock on it. A process
// removing the directory of a job that is over (removeStaleJobDirs) holds
// an exclusive lock meanwhile: a directory found removed once locked is
// made again. The directory must belong to this user and let nobody else
// in.
func openJobDir(path string) (*jobDir, error) {
	for range 100 {
		if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if errors.Is(err, syscall.ENOENT) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		f := os.NewFile(uintptr(fd), path)
		if err := flock(f, syscall.LOCK_SH); err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "flock", Path: path, Err: err}
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
		}
		if !samePath(path, &st) {
			f.Close() // removed, or removed and made again, before the lock
			continue
		}
		if int(st.Uid) != os.Geteuid() || st.Mode&0o077 != 0 {
			f.Close()
			return nil, fmt.Errorf("%s belongs to uid %d with mode %#o, not to this user alone", path, st.Uid, st.Mode&0o777)
		}
		return &jobDir{path: path, f: f}, nil
	}
	return nil, fmt.Errorf("%s: removed as often as it was made", path)
}

// release drops d's lock; if no other process of the job holds one, the
// job is over on this node and release removes the directory. Nil d does
// nothing.
func (d *jobDir) release() {
	if d == nil || d.f == nil {
		return
	}
	// Linux drops a shared lock before it tries for the exclusive one, so
	// of two processes releasing at once one gets it; if neither did, the
	// next launch removes the directory.
	if flock(d.f, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		var st syscall.Stat_t
		if syscall.Fstat(int(d.f.Fd()), &st) == nil && samePath(d.path, &st) {
			os.RemoveAll(d.path)
		}
	}
	d.f.Close()
	d.f = nil
}

// removeStaleJobDirs removes the directories in base whose names begin
// with prefix, other than keep, that belong to this user and that no
// process holds a lock on: their jobs are over. It returns the paths it
// removed.
func removeStaleJobDirs(base, prefix, keep string) []string {
	ents, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || name == keep || !e.IsDir() {
			continue
		}
		path := filepath.Join(base, name)
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		f := os.NewFile(uintptr(fd), path)
		var st syscall.Stat_t
		// Locked exclusively, the directory stays the one at path: a
		// process of its job would have to lock it to use it, and
		// another remover to remove it.
		if syscall.Fstat(fd, &st) == nil && int(st.Uid) == os.Geteuid() &&
			flock(f, syscall.LOCK_EX|syscall.LOCK_NB) == nil && samePath(path, &st) {
			if os.RemoveAll(path) == nil {
				removed = append(removed, path)
			}
		}
		f.Close()
	}
	return removed
}

// samePath reports whether path is still the directory st describes.
func samePath(path string, st *syscall.Stat_t) bool {
	var now syscall.Stat_t
	return st.Nlink > 0 && syscall.Lstat(path, &now) == nil && now.Dev == st.Dev && now.Ino == st.Ino
}

// flock is flock(2), retried when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// OpenMPI's mpirun keeps the job's session directory,
// /tmp/ompi.HOST.UID/pid.PID (PID: mpirun's), with its PMIx store's
// shared memory, until it ends; killed with SIGKILL, it leaves it. No rank
// can move it, but every rank of this package marks it as a pgasmr job's
// with a file it holds a shared lock on; a launch removes the marked
// session directories whose mpirun no longer runs and whose ranks are all
// gone (nobody holds the lock).

// ompiSessionMark names the mark in a session directory.
const ompiSessionMark = "pgasmr-ranks.lock"

// markOMPISession marks mpirun's session directory of this job
// (OMPI_MCA_orte_jobfam_session_dir, a pid.PID in
// OMPI_MCA_orte_top_session_dir) and removes those of pgasmr jobs that are
// over. It returns the mark, locked, or nil when there is none.
func markOMPISession() *os.File {
	dir, top := os.Getenv("OMPI_MCA_orte_jobfam_session_dir"), os.Getenv("OMPI_MCA_orte_top_session_dir")
	if dir == "" || top == "" || filepath.Dir(filepath.Clean(dir)) != filepath.Clean(top) || !strings.HasPrefix(filepath.Base(dir), "pid.") {
		return nil // not mpirun's node (an orted's jf.N), or not OpenMPI 4's layout
	}
	f, err := os.OpenFile(filepath.Join(dir, ompiSessionMark), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil
	}
	if flock(f, syscall.LOCK_SH) != nil {
		f.Close()
		return nil
	}
	removeStaleSessions(filepath.Clean(top), filepath.Base(dir))
	return f
}

// removeStaleSessions removes the session directories pid.PID in top,
// other than keep, of pgasmr jobs that are over: process PID (their
// mpirun) does not run, and their mark is there and nobody holds a lock on
// it. It returns the paths it removed.
func removeStaleSessions(top, keep string) []string {
	ents, err := os.ReadDir(top)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		name := e.Name()
		pid, err := strconv.Atoi(strings.TrimPrefix(name, "pid."))
		if !strings.HasPrefix(name, "pid.") || name == keep || err != nil || pid <= 0 || !e.IsDir() {
			continue
		}
		if syscall.Kill(pid, 0) != syscall.ESRCH {
			continue // mpirun runs, or may
		}
		path := filepath.Join(top, name)
		f, err := os.OpenFile(filepath.Join(path, ompiSessionMark), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			continue // not a pgasmr job's
		}
		if flock(f, syscall.LOCK_EX|syscall.LOCK_NB) == nil && os.RemoveAll(path) == nil {
			removed = append(removed, path)
		}
		f.Close()
	}
	return removed
}
