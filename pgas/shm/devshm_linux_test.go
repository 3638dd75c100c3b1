//go:build linux

package shm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas/internal/ranktest"
	"github.com/pgasmr/pgasmr/pgas/shm"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// The tests of a small or full /dev/shm (issue 35) run their launcher in a
// process of its own, a copy of the test binary in a mount namespace of
// its own (which Go makes private, so that nothing it mounts reaches the
// host), with a small tmpfs mounted on /dev/shm: TestDevShmHelper, run by
// devshmLaunch with envDevShmScenario set, mounts it, launches the job,
// and prints what happened as one "DEVSHMRESULT <json>" line. The ranks,
// its children, share its /dev/shm. The package needs no hook to point it
// at another directory.
const (
	envDevShmScenario = "DEVSHMTEST_SCENARIO"  // what TestDevShmHelper does
	envDevShmParentNS = "DEVSHMTEST_PARENT_NS" // the mount namespace it must not be in
)

func init() { bodies["devshmtouch"] = devshmTouchBody }

// devshmTouchBody opens a job on the whole segment. With arg "fill", rank
// 0 first fills /dev/shm with a file of its own until the file system says
// it is full, and prints "FILLED <bytes written> <bytes then free>". Then,
// after a barrier, every rank writes a byte to every page of its own
// segment and puts 8 bytes into every page of the next rank's: pages
// nobody had touched, which a sparse job file would have to find room
// for in the full /dev/shm. Each checks what it and its neighbour wrote.
func devshmTouchBody(ctx context.Context, tr *shm.Transport, arg string) error {
	eps, err := tr.Open(ctx, transport.Job{Ranks: tr.Size(), SegmentBytes: tr.SegmentBytes(), SyncTimeout: time.Minute})
	if err != nil {
		return err
	}
	ep := eps[0]
	defer ep.Close()
	rank, size := ep.Rank(), ep.Size()
	if rank == 0 && arg == "fill" {
		n, free, err := fillDir(shm.Dir)
		if err != nil {
			ep.Fail(err)
			return err
		}
		fmt.Printf("FILLED %d %d\n", n, free)
	}
	if err := ep.Barrier(ctx); err != nil {
		return err
	}
	const page = 4096
	seg := ep.Segment()
	next, prev := (rank+1)%size, (rank+size-1)%size
	mark := func(r int) []byte { return []byte(fmt.Sprintf("r%07d", r)) }
	for off := 0; off < len(seg); off += page {
		seg[off] = byte(rank + 1)
	}
	for off := int64(8); off+8 <= int64(len(seg)); off += page {
		if err := ep.Put(ctx, next, off, mark(rank)); err != nil {
			return err
		}
	}
	if err := ep.Barrier(ctx); err != nil {
		return err
	}
	for off := 0; off+16 <= len(seg); off += page {
		if seg[off] != byte(rank+1) || !bytes.Equal(seg[off+8:off+16], mark(prev)) {
			return fmt.Errorf("page at %d holds %q, want %d and %q", off, seg[off:off+16], rank+1, mark(prev))
		}
	}
	return ep.Barrier(ctx)
}

// fillDir writes a file in dir until the file system has no room left,
// and returns how much it wrote and how much statfs then says is free.
func fillDir(dir string) (written, free int64, err error) {
	f, err := os.Create(filepath.Join(dir, "devshm-filler"))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	buf := bytes.Repeat([]byte{0xAB}, 64<<10)
	for {
		n, err := f.Write(buf)
		written += int64(n)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			return written, 0, err
		}
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return written, 0, err
	}
	return written, int64(st.Bavail) * int64(st.Bsize), nil
}

// devshmScenario is a job TestDevShmHelper runs.
type devshmScenario struct {
	TmpfsBytes   int64  // the size of the tmpfs mounted on /dev/shm
	PrefillBytes int64  // what is written to /dev/shm before the launch
	Ranks        int    // the job's ranks
	SegmentBytes int64  // their segments' capacity
	Arg          string // devshmTouchBody's arg
}

// devshmResult is what TestDevShmHelper saw.
type devshmResult struct {
	Err            string   // Launch's error, "" if none
	Stdout, Stderr string   // the ranks'
	Started        []int    // the pids of the ranks that started
	Running        []int    // those still running after Launch returned
	Files          []string // the job files left in /dev/shm after Launch returned
	Took           string   // how long Launch took
	Problem        string   // why the helper could not do its work
}

// TestDevShmHelper is not a test: it is the launcher process of the
// /dev/shm tests, and skips unless devshmLaunch started it.
func TestDevShmHelper(t *testing.T) {
	spec := os.Getenv(envDevShmScenario)
	if spec == "" {
		t.Skip("the launcher process of the /dev/shm tests, started by them")
	}
	res := runDevShmScenario(spec)
	b, _ := json.Marshal(res)
	fmt.Printf("DEVSHMRESULT %s\n", b)
}

func runDevShmScenario(spec string) (res devshmResult) {
	var sc devshmScenario
	if err := json.Unmarshal([]byte(spec), &sc); err != nil {
		res.Problem = err.Error()
		return res
	}
	// Never mount over the host's /dev/shm: this process must be in a
	// mount namespace of its own.
	if ns, _ := os.Readlink("/proc/self/ns/mnt"); ns == "" || ns == os.Getenv(envDevShmParentNS) {
		res.Problem = fmt.Sprintf("not in a mount namespace of its own (%q)", ns)
		return res
	}
	if err := syscall.Mount("tmpfs", shm.Dir, "tmpfs", 0, "size="+strconv.FormatInt(sc.TmpfsBytes, 10)); err != nil {
		res.Problem = fmt.Sprintf("mount tmpfs on %s: %v", shm.Dir, err)
		return res
	}
	if sc.PrefillBytes > 0 {
		if err := os.WriteFile(filepath.Join(shm.Dir, "devshm-prefill"), make([]byte, sc.PrefillBytes), 0o600); err != nil {
			res.Problem = err.Error()
			return res
		}
	}
	// A guard against a hang, not a measure: the job takes a second or two.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	job := "devshm-" + strconv.Itoa(os.Getpid())
	var stdout, stderr bytes.Buffer
	start := time.Now()
	err := shm.Launch(ctx, shm.LaunchOptions{
		Ranks:        sc.Ranks,
		Argv:         []string{os.Args[0], "-test.run=^$"},
		Env:          rankEnv("devshmtouch", sc.Arg),
		Stdout:       &stdout,
		Stderr:       &stderr,
		SegmentBytes: sc.SegmentBytes,
		JobID:        job,
		KillGrace:    time.Second,
		Started:      func(_, pid int) { res.Started = append(res.Started, pid) },
	})
	res.Took = time.Since(start).String()
	if err != nil {
		res.Err = err.Error()
	}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	for _, pid := range res.Started {
		if syscall.Kill(pid, 0) == nil && !ranktest.Zombie(pid) {
			res.Running = append(res.Running, pid)
		}
	}
	res.Files = jobFiles(job)
	return res
}

// devshmLaunch runs sc in a TestDevShmHelper process with a tmpfs of its
// own on /dev/shm. It skips t where that cannot be done: not root, or no
// mount namespaces.
func devshmLaunch(t *testing.T, sc devshmScenario) devshmResult {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs on /dev/shm in a mount namespace needs root")
	}
	ns, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Skipf("no mount namespaces: %v", err)
	}
	spec, _ := json.Marshal(sc)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDevShmHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), envDevShmScenario+"="+string(spec), envDevShmParentNS+"="+ns)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) || errors.Is(err, syscall.EPERM) {
			t.Skipf("cannot start a process in a mount namespace of its own: %v", err)
		}
		t.Fatalf("launcher process: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	lines := ranktest.Lines(stdout.String(), "DEVSHMRESULT ")
	if len(lines) != 1 {
		t.Fatalf("launcher process printed no result\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	var res devshmResult
	if err := json.Unmarshal([]byte(lines[0]), &res); err != nil {
		t.Fatalf("launcher process result %q: %v", lines[0], err)
	}
	if res.Problem != "" {
		t.Fatalf("launcher process: %s", res.Problem)
	}
	t.Logf("Launch took %s; error: %v", res.Took, res.Err)
	return res
}

// checkDevShmAfter checks what every /dev/shm test wants: no rank left
// running, no job file left, and no fault or goroutine dump in the ranks'
// stderr.
func checkDevShmAfter(t *testing.T, res devshmResult) {
	t.Helper()
	if len(res.Running) > 0 {
		t.Errorf("ranks %v still run after Launch returned", res.Running)
	}
	if len(res.Files) > 0 {
		t.Errorf("job files %v are left in /dev/shm", res.Files)
	}
	for _, bad := range []string{"SIGBUS", "goroutine ", "fatal error", "unexpected fault address"} {
		if strings.Contains(res.Stderr, bad) {
			t.Errorf("the ranks' stderr holds %q:\n%s", bad, res.Stderr)
			break
		}
	}
}

// wantNoRoomLine checks that a launch on a /dev/shm without room for the
// job failed with one line naming /dev/shm and the size the job needs,
// and that no rank was started.
func wantNoRoomLine(t *testing.T, res devshmResult, need string) {
	t.Helper()
	if res.Err == "" {
		t.Fatalf("Launch succeeded on a /dev/shm without room for the job")
	}
	if strings.Contains(res.Err, "\n") {
		t.Errorf("Launch's error is more than one line:\n%s", res.Err)
	}
	for _, want := range []string{shm.Dir, "need " + need, "free"} {
		if !strings.Contains(res.Err, want) {
			t.Errorf("Launch = %q; want it to say %q", res.Err, want)
		}
	}
	if len(res.Started) > 0 {
		t.Errorf("Launch started ranks %v for a job that has no room", res.Started)
	}
}

// TestDevShmFullDuringJob is issue 35's crash: /dev/shm fills up while a
// job runs, and then the ranks touch pages of their segments for the first
// time. With a sparse job file, that is a SIGBUS and a goroutine dump in
// the rank that touches first; with the file's pages reserved at launch,
// the job does not notice.
func TestDevShmFullDuringJob(t *testing.T) {
	// 2 ranks of 4 MiB: an 8 MiB (and a page) file in 16 MiB.
	res := devshmLaunch(t, devshmScenario{TmpfsBytes: 16 << 20, Ranks: 2, SegmentBytes: 4 << 20, Arg: "fill"})
	filled := ranktest.Lines(res.Stdout, "FILLED ")
	if res.Err != "" || len(filled) != 1 {
		t.Fatalf("Launch = %s; want success, and rank 0 to have filled /dev/shm (FILLED lines %q)\nstderr:\n%s", res.Err, filled, res.Stderr)
	}
	var written, free int64
	if _, err := fmt.Sscan(filled[0], &written, &free); err != nil || written <= 0 || free >= 64<<10 {
		t.Errorf("rank 0 wrote %d bytes to /dev/shm and left %d free; want it full", written, free)
	}
	ranktest.CheckBodiesOK(t, "Launch", nil, res.Stdout, 2)
	checkDevShmAfter(t, res)
}

// TestDevShmNoRoomAtLaunch: a job whose file does not fit in /dev/shm is
// refused by Launch with one line that names /dev/shm and the size the
// job needs, before any rank starts: on a /dev/shm too small for it, and
// on one that other files have filled.
func TestDevShmNoRoomAtLaunch(t *testing.T) {
	for _, tc := range []struct {
		name string
		sc   devshmScenario
	}{
		{"small", devshmScenario{TmpfsBytes: 4 << 20, Ranks: 2, SegmentBytes: 4 << 20}},
		{"filled", devshmScenario{TmpfsBytes: 16 << 20, PrefillBytes: 10 << 20, Ranks: 2, SegmentBytes: 4 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := devshmLaunch(t, tc.sc)
			wantNoRoomLine(t, res, "8 MiB")
			checkDevShmAfter(t, res)
		})
	}
}
