package ranktest

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestLines(t *testing.T) {
	got := Lines("BODYOK 0\nRESULT 12\nxRESULT 3\nRESULT 4\nRESULT", "RESULT ")
	if want := []string{"12", "4"}; !slices.Equal(got, want) {
		t.Errorf("Lines = %q; want %q", got, want)
	}
}

func TestArgInts(t *testing.T) {
	if got, want := ArgInts("2,-1,30"), []int64{2, -1, 30}; !slices.Equal(got, want) {
		t.Errorf("ArgInts = %v; want %v", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("ArgInts(\"1,x\") did not panic")
		}
	}()
	ArgInts("1,x")
}

// TestJobProcs: a child process marked with a job variable is found while
// it runs and not after it has exited.
func TestJobProcs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	job := strconv.Itoa(os.Getpid()) + "-" + t.Name()
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), "RANKTEST_JOB="+job)
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	// Until the child has exec'd, /proc shows the parent's environment:
	// give it a moment.
	got := JobProcs("RANKTEST_JOB", job)
	for deadline := time.Now().Add(5 * time.Second); len(got) == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		got = JobProcs("RANKTEST_JOB", job)
	}
	if !slices.Equal(got, []int{cmd.Process.Pid}) {
		t.Errorf("JobProcs = %v; want [%d]", got, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if got := JobProcsAfter("RANKTEST_JOB", job, time.Second); len(got) != 0 {
		t.Errorf("JobProcsAfter = %v after the process exited; want none", got)
	}
}
