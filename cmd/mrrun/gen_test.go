package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/apps/histogram"
)

// tree reads every regular file under dir, by path relative to dir.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func treeBytes(files map[string][]byte) (n int64) {
	for _, b := range files {
		n += int64(len(b))
	}
	return n
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestGen generates a small input for every app, checks its size, and
// runs the app on it.
func TestGen(t *testing.T) {
	dir := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, name) }
	width, height := histogram.SizeFor(300_000)
	for _, tc := range []struct {
		name    string
		gen     []string // mrrun gen arguments, OUTPUT last
		summary string   // what stderr says
		check   func(t *testing.T, out string)
		run     []string // mrrun arguments before the input
	}{
		{"wordcount", []string{"wordcount", "--size", "200kB", "--files", "7", "--seed", "3", in("corpus")},
			"gen: wrote 7 files (", func(t *testing.T, out string) {
				files := tree(t, out)
				// Each file ends with its first complete line at or past its share.
				if n := treeBytes(files); len(files) != 7 || n < 200_000 || n > 201_000 {
					t.Errorf("%d files, %d bytes; want 7 files, about 200000 bytes", len(files), n)
				}
			}, []string{"wordcount", "--top", "5"}},
		{"spamcount", []string{"spamcount", "--messages", "40", in("mail")},
			"gen: wrote 40 messages (", func(t *testing.T, out string) {
				files := tree(t, out)
				if len(files) != 40 || files["000039.eml"] == nil {
					t.Errorf("%d files; want 40, 000000.eml to 000039.eml", len(files))
				}
			}, []string{"spamcount"}},
		{"histogram", []string{"histogram", "--size", "300kB", in("img.bmp")},
			"gen: wrote a 4096×25 image (307254 bytes) to ", func(t *testing.T, out string) {
				want := 54 + int64(height)*int64((3*width+3)&^3)
				if n := fileSize(t, out); n != want || n < 300_000 {
					t.Errorf("%d bytes, want %d (%d×%d)", n, want, width, height)
				}
			}, []string{"histogram"}},
		{"linreg int8", []string{"linreg", "--points", "5000", in("pts.bin")},
			"gen: wrote 5000 points (10000 bytes, int8) to ", func(t *testing.T, out string) {
				if n := fileSize(t, out); n != 10_000 {
					t.Errorf("%d bytes, want 10000", n)
				}
			}, []string{"linreg"}},
		{"linreg f64 by size", []string{"linreg", "--input-format", "f64", "--size", "1KiB", in("pts.f64")},
			"gen: wrote 64 points (1024 bytes, f64) to ", func(t *testing.T, out string) {
				if n := fileSize(t, out); n != 1024 {
					t.Errorf("%d bytes, want 1024", n)
				}
			}, []string{"linreg", "--input-format", "f64"}},
		{"linreg csv", []string{"linreg", "--input-format", "csv", "--points", "300", in("pts.csv")},
			"gen: wrote 300 points (", func(t *testing.T, out string) {
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if n := bytes.Count(b, []byte("\n")); n != 300 {
					t.Errorf("%d lines, want 300", n)
				}
			}, []string{"linreg", "--input-format", "csv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.gen[len(tc.gen)-1]
			r := mrrun(t, append([]string{"gen"}, tc.gen...)...).want(t, 0)
			if !strings.HasPrefix(r.stderr, tc.summary) || !strings.HasSuffix(r.stderr, " to "+out+"\n") || r.stdout != "" {
				t.Errorf("stdout %q, stderr %q; want stderr %q... to %s", r.stdout, r.stderr, tc.summary, out)
			}
			tc.check(t, out)
			r = mrrun(t, append(append([]string{"-np", "2"}, tc.run...), out)...).want(t, 0)
			if r.stdout == "" {
				t.Errorf("mrrun %s on the generated input printed nothing", tc.name)
			}
		})
	}
	// Nothing else was left in dir (no temporary files or directories).
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got, want := strings.Join(names, " "), "corpus img.bmp mail pts.bin pts.csv pts.f64"; got != want {
		t.Errorf("directory holds %s; want %s", got, want)
	}
}

// TestGenDeterministic checks that a seed gives the same bytes, and another
// seed others.
func TestGenDeterministic(t *testing.T) {
	for _, tc := range []struct {
		app  string
		args []string
		dir  bool
	}{
		{"wordcount", []string{"--size", "50kB", "--files", "3"}, true},
		{"spamcount", []string{"--messages", "10"}, true},
		{"histogram", []string{"--size", "20kB"}, false},
		{"linreg", []string{"--points", "1000", "--input-format", "csv"}, false},
	} {
		t.Run(tc.app, func(t *testing.T) {
			read := func(seed string) map[string][]byte {
				out := filepath.Join(t.TempDir(), "out")
				mrrun(t, append(append([]string{"gen", tc.app, "-q", "--seed", seed}, tc.args...), out)...).want(t, 0)
				if tc.dir {
					return tree(t, out)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				return map[string][]byte{"": b}
			}
			a, b, c := read("7"), read("7"), read("8")
			if !equalTrees(a, b) {
				t.Errorf("two runs with seed 7 differ")
			}
			if equalTrees(a, c) {
				t.Errorf("seeds 7 and 8 give the same output")
			}
		})
	}
}

func equalTrees(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

func TestGenUsage(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file.bin")
	if err := os.WriteFile(file, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{}, "no app given"},
		{[]string{"nope", out}, `unknown app "nope"`},
		{[]string{"wordcount"}, "no OUTPUT given"},
		{[]string{"wordcount", out, out + "2"}, "one OUTPUT wanted"},
		{[]string{"wordcount", "--size", "12XB", out}, `--size: size "12XB"`},
		{[]string{"wordcount", "--size", "-1MB", out}, "--size"},
		{[]string{"wordcount", "--files", "0", out}, "--files 0"},
		{[]string{"histogram", "--files", "3", out}, "--files does not apply to histogram"},
		{[]string{"histogram", "--messages", "3", out}, "--messages does not apply to histogram"},
		{[]string{"spamcount", "--size", "1MB", out}, "--size does not apply to spamcount"},
		{[]string{"wordcount", "--points", "3", out}, "--points does not apply to wordcount"},
		{[]string{"wordcount", "--input-format", "f64", out}, "--input-format does not apply to wordcount"},
		{[]string{"linreg", "--size", "1MB", "--points", "10", out}, "not both"},
		{[]string{"linreg", "--size", "1MB", "--input-format", "csv", out}, "--size needs fixed-size records"},
		{[]string{"linreg", "--input-format", "i16", out}, `--input-format "i16"`},
		{[]string{"linreg", "--points", "-1", out}, "--points -1"},
		{[]string{"spamcount", "--messages", "-1", out}, "--messages -1"},
		{[]string{"wordcount", "--bogus", out}, "unknown flag: --bogus"},
		{[]string{"wordcount", full}, "is not empty (--force"},
		{[]string{"spamcount", full}, "is not empty (--force"},
		{[]string{"histogram", file}, "exists (--force"},
		{[]string{"histogram", full}, "is a directory"},
		{[]string{"spamcount", file}, "is not a directory"},
	} {
		r := mrrun(t, append([]string{"gen"}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || !strings.HasPrefix(r.stderr, "mrrun: gen") {
			t.Errorf("mrrun gen %q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was created by a usage error", out)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "mine\n" {
		t.Errorf("%s was changed: %q, %v", file, b, err)
	}

	// --force writes into a non-empty directory, keeping what else is
	// there, and replaces a file.
	mrrun(t, "gen", "spamcount", "-q", "--force", "--messages", "3", full).want(t, 0)
	if files := tree(t, full); len(files) != 4 || string(files["keep.txt"]) != "mine\n" {
		t.Errorf("after --force, %s holds %d files (keep.txt %q); want keep.txt and 3 messages", full, len(files), files["keep.txt"])
	}
	mrrun(t, "gen", "linreg", "-q", "--force", "--points", "10", file).want(t, 0)
	if n := fileSize(t, file); n != 20 {
		t.Errorf("after --force, %s has %d bytes; want 20", file, n)
	}
}

func TestGenHelp(t *testing.T) {
	for _, args := range [][]string{{"gen", "--help"}, {"gen", "-h"}, {"gen", "wordcount", "--help"}} {
		r := mrrun(t, args...).want(t, 0)
		for _, want := range []string{"Usage: mrrun gen APP [flags] OUTPUT", "mrrun gen wordcount --size 1GiB --files 5000 --seed 1 corpus/", "--messages", "--force"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("mrrun %q: no %q in\n%s", args, want, r.stdout)
			}
		}
	}
}

// TestGenInterrupt interrupts generations midway: the exit status is 130
// and nothing is left behind, neither the output nor a temporary file.
func TestGenInterrupt(t *testing.T) {
	for _, tc := range []struct{ app, size, out string }{
		{"wordcount", "2GB", "corpus"}, // 200 files of 10 MB: interrupted in its first
		{"histogram", "2GB", "img.bmp"},
	} {
		t.Run(tc.app, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(binPath, "gen", tc.app, "--size", tc.size, filepath.Join(dir, tc.out))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if tc.app == "wordcount" {
				cmd.Args = append(cmd.Args[:len(cmd.Args)-1], "--files", "200", cmd.Args[len(cmd.Args)-1])
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait for the temporary output to hold some data.
			deadline := time.Now().Add(30 * time.Second)
			for treeBytes(tree(t, dir)) < 1<<20 {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("no data generated after 30s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 30s after SIGINT")
			}
			if code := cmd.ProcessState.ExitCode(); code != 130 || stderr.String() != "mrrun: interrupted\n" {
				t.Errorf("exit %d, stderr %q; want 130, mrrun: interrupted", code, stderr.String())
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}
}
