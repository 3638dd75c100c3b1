package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSameOutputEverywhere builds this program and mrrun, and checks that
// the program prints the same bytes in one process with 1 and 3 ranks (on
// any root) and as 2 and 4 processes under mrrun exec on the shm
// transport.
func TestSameOutputEverywhere(t *testing.T) {
	dir := t.TempDir()
	prog, mrrun := filepath.Join(dir, "embed"), filepath.Join(dir, "mrrun")
	for bin, pkg := range map[string]string{prog: ".", mrrun: "../../cmd/mrrun"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	files, err := filepath.Glob("../../testdata/sample/d00/d00/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample files: %v", err)
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %q: %v\n%s", filepath.Base(name), args, err, errb.String())
		}
		return out.String()
	}
	want := run(prog, append([]string{"-np", "1"}, files...)...)
	if !strings.Contains(want, "distinct words") || strings.Count(want, "\n") != 11 {
		t.Fatalf("unexpected output:\n%s", want)
	}
	for _, c := range [][]string{
		append([]string{prog, "-np", "3"}, files...),
		append([]string{prog, "-np", "3", "-mode", "root=2"}, files...),
		append([]string{mrrun, "exec", "-np", "2", "--", prog}, files...),
		append([]string{mrrun, "exec", "--transport", "shm", "-np", "4", "--", prog}, files...),
	} {
		if got := run(c[0], c[1:]...); got != want {
			t.Errorf("%q:\n%s\nwant\n%s", c, got, want)
		}
	}
	// A rank that fails fails the job: a missing file is an error on every
	// rank, reported once by mrrun.
	cmd := exec.Command(mrrun, "exec", "-np", "2", "--", prog, filepath.Join(dir, "missing"))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(errb.String(), "mrrun: ") {
		t.Errorf("missing input under exec: %v, stderr %q", err, errb.String())
	}
	if _, err := os.Stat(prog); err != nil {
		t.Fatal(err)
	}
}
