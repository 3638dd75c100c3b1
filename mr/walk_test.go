//go:build unix

package mr_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
)

// walkTree makes a tree of regular files, a hidden file, nested
// directories, a FIFO and symbolic links to each kind, and returns its
// root.
//
//	root/.hidden            1 byte
//	root/a.txt              3 bytes
//	root/b/c.txt            4 bytes
//	root/b/d/e.txt          5 bytes
//	root/b.txt              2 bytes (after b/: WalkDir order is by name)
//	root/p                  FIFO
//	root/to-dev  -> /dev/null
//	root/to-dir  -> b       (not followed)
//	root/to-fifo -> p
//	root/to-file -> a.txt
//	root/to-root -> .       (not followed: no loop)
func walkTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, size := range map[string]int{".hidden": 1, "a.txt": 3, "b/c.txt": 4, "b/d/e.txt": 5, "b.txt": 2} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "p"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"to-dev": "/dev/null", "to-dir": "b", "to-fifo": "p", "to-file": "a.txt", "to-root": "."} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestListFiles(t *testing.T) {
	root := walkTree(t)
	j := func(name string) string { return filepath.Join(root, name) }
	outside := t.TempDir()
	linkRoot := filepath.Join(outside, "link-to-root")
	if err := os.Symlink(root, linkRoot); err != nil {
		t.Fatal(err)
	}
	dangling := t.TempDir()
	for name, target := range map[string]string{"a.txt": "", "gone": "no-such-file", "z.txt": ""} {
		p := filepath.Join(dangling, name)
		var err error
		if target == "" {
			err = os.WriteFile(p, []byte("x"), 0o644)
		} else {
			err = os.Symlink(target, p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	missing := j("missing")
	tree := []mr.File{{j(".hidden"), 1}, {j("a.txt"), 3}, {j("b/c.txt"), 4}, {j("b/d/e.txt"), 5}, {j("b.txt"), 2}, {j("to-file"), 3}}

	for _, c := range []struct {
		name  string
		paths []string
		files []mr.File
		skips []mr.Skip // with SkipUnreadable
		err   string    // the error's text without SkipUnreadable, "" for none
		errAt string    // ListError.Path
		is    error     // what the error wraps
	}{
		{name: "tree", paths: []string{root}, files: tree},
		{name: "link to a directory as input", paths: []string{linkRoot}, files: []mr.File{
			{linkRoot + "/.hidden", 1}, {linkRoot + "/a.txt", 3}, {linkRoot + "/b/c.txt", 4},
			{linkRoot + "/b/d/e.txt", 5}, {linkRoot + "/b.txt", 2}, {linkRoot + "/to-file", 3}}},
		{name: "order as given", paths: []string{j("b.txt"), j("b"), j("to-file")}, files: []mr.File{
			{j("b.txt"), 2}, {j("b/c.txt"), 4}, {j("b/d/e.txt"), 5}, {j("to-file"), 3}}},
		{name: "duplicates kept", paths: []string{j("a.txt"), j("a.txt")}, files: []mr.File{{j("a.txt"), 3}, {j("a.txt"), 3}}},
		{name: "no paths"},
		{name: "FIFO as input", paths: []string{j("a.txt"), j("p"), j("b.txt")},
			files: []mr.File{{j("a.txt"), 3}, {j("b.txt"), 2}},
			skips: []mr.Skip{{j("p"), "a named pipe (FIFO), not a regular file"}},
			err:   j("p") + ": a named pipe (FIFO), not a regular file", errAt: j("p"), is: mr.ErrNotRegular},
		{name: "link to a device as input", paths: []string{j("to-dev")},
			skips: []mr.Skip{{j("to-dev"), "a character device, not a regular file"}},
			err:   j("to-dev") + ": a character device, not a regular file", errAt: j("to-dev"), is: mr.ErrNotRegular},
		{name: "missing input", paths: []string{missing, j("a.txt")},
			files: []mr.File{{j("a.txt"), 3}},
			skips: []mr.Skip{{missing, "stat " + missing + ": no such file or directory"}},
			err:   "stat " + missing + ": no such file or directory", errAt: missing, is: fs.ErrNotExist},
		{name: "dangling link in a directory", paths: []string{dangling},
			files: []mr.File{{dangling + "/a.txt", 1}, {dangling + "/z.txt", 1}},
			skips: []mr.Skip{{dangling + "/gone", "stat " + dangling + "/gone: no such file or directory"}},
			err:   "stat " + dangling + "/gone: no such file or directory", errAt: dangling + "/gone", is: fs.ErrNotExist},
	} {
		t.Run(c.name, func(t *testing.T) {
			files, skips, err := mr.ListFiles(context.Background(), c.paths, mr.ListOptions{})
			if c.err == "" {
				if err != nil || !slices.Equal(files, c.files) || skips != nil {
					t.Fatalf("ListFiles(%q) = %v, %v, %v; want %v", c.paths, files, skips, err, c.files)
				}
			} else {
				var le *mr.ListError
				switch {
				case err == nil || err.Error() != c.err:
					t.Errorf("ListFiles(%q) = %v, %v; want error %q", c.paths, files, err, c.err)
				case !errors.As(err, &le) || le.Path != c.errAt || !errors.Is(err, c.is):
					t.Errorf("ListFiles(%q) = %#v; want a *ListError at %s wrapping %v", c.paths, err, c.errAt, c.is)
				case files != nil || skips != nil:
					t.Errorf("ListFiles(%q) failed but returned %v, %v", c.paths, files, skips)
				}
			}
			files, skips, err = mr.ListFiles(context.Background(), c.paths, mr.ListOptions{SkipUnreadable: true})
			if err != nil || !slices.Equal(files, c.files) || !slices.Equal(skips, c.skips) {
				t.Errorf("ListFiles(%q, SkipUnreadable) = %v, %v, %v; want %v, %v", c.paths, files, skips, err, c.files, c.skips)
			}
		})
	}
}

// TestListFilesMatchesWalkDir: on a tree of regular files and directories
// only, ListFiles lists what filepath.WalkDir visits, in its order.
func TestListFilesMatchesWalkDir(t *testing.T) {
	root := t.TempDir()
	for i := range 40 {
		// Names that sort differently as paths and as WalkDir visits
		// them: "x/y" comes before "x.z" in a walk, after it as a string.
		p := filepath.Join(root, fmt.Sprintf("d%d", i%3), fmt.Sprintf("x%d", i%4), fmt.Sprintf("f%d", i))
		if i%5 == 0 {
			p = filepath.Join(root, fmt.Sprintf("d%d", i%3), fmt.Sprintf("x%d.z", i%4))
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want []mr.File
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		want = append(want, mr.File{Path: path, Size: fi.Size()})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := mr.ListFiles(context.Background(), []string{root}, mr.ListOptions{})
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("ListFiles = %v, %v\nwant %v", got, err, want)
	}
}

// TestListFilesCancelled: a done context is returned as it is, never
// collected as a Skip.
func TestListFilesCancelled(t *testing.T) {
	root := walkTree(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, opts := range []mr.ListOptions{{}, {SkipUnreadable: true}} {
		files, skips, err := mr.ListFiles(ctx, []string{root}, opts)
		if err != context.Canceled || files != nil || skips != nil {
			t.Errorf("ListFiles(cancelled, %+v) = %v, %v, %v; want context.Canceled", opts, files, skips, err)
		}
	}
}

// TestListFilesUnreadableDirectory: a directory that cannot be read is an
// error naming it, or a Skip. Root reads every directory, so the test
// runs only as another user.
func TestListFilesUnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads directories whatever their mode")
	}
	root := walkTree(t)
	locked := filepath.Join(root, "b", "d")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	_, _, err := mr.ListFiles(context.Background(), []string{root}, mr.ListOptions{})
	var le *mr.ListError
	if !errors.As(err, &le) || le.Path != locked || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("ListFiles with an unreadable directory = %v; want a *ListError at %s", err, locked)
	}
	files, skips, err := mr.ListFiles(context.Background(), []string{root}, mr.ListOptions{SkipUnreadable: true})
	if err != nil || len(skips) != 1 || skips[0].Path != locked || len(files) != 5 {
		t.Errorf("ListFiles(SkipUnreadable) with an unreadable directory = %v, %v, %v; want 5 files and %s skipped", files, skips, err, locked)
	}
}

// TestAllListFiles: the collective listing gives every rank what ListFiles
// gives one, and a path rank 0 cannot list fails every rank with
// ListFiles' own error, naming the path.
func TestAllListFiles(t *testing.T) {
	root := walkTree(t)
	missing := filepath.Join(root, "missing")
	for _, ranks := range []int{1, 3} {
		for _, tc := range []struct {
			paths []string
			opts  mr.ListOptions
		}{
			{[]string{root}, mr.ListOptions{}},
			{[]string{filepath.Join(root, "b"), filepath.Join(root, "a.txt"), missing}, mr.ListOptions{SkipUnreadable: true}},
			{[]string{root, missing}, mr.ListOptions{}},
			{[]string{filepath.Join(root, "p")}, mr.ListOptions{}},
		} {
			wantFiles, wantSkips, wantErr := mr.ListFiles(context.Background(), tc.paths, tc.opts)
			err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
				files, skips, err := mr.AllListFiles(ctx, r, tc.paths, tc.opts)
				if wantErr != nil {
					var le *mr.ListError
					var nr *mr.NotRegularError
					if err == nil || err.Error() != wantErr.Error() || errors.As(wantErr, &le) != errors.As(err, &le) || errors.As(wantErr, &nr) != errors.As(err, &nr) {
						return fmt.Errorf("rank %d: error %v, want %v", r.ID(), err, wantErr)
					}
					return nil
				}
				if err != nil {
					return fmt.Errorf("rank %d: %w", r.ID(), err)
				}
				if !slices.Equal(files, wantFiles) || !slices.Equal(skips, wantSkips) {
					return fmt.Errorf("rank %d: %v %v, want %v %v", r.ID(), files, skips, wantFiles, wantSkips)
				}
				return nil
			})
			if err != nil {
				t.Errorf("%d ranks, %v: %v", ranks, tc.paths, err)
			}
		}
	}
}

// TestBroadcastValue: every rank gets root's value, whatever its own.
func TestBroadcastValue(t *testing.T) {
	type v struct {
		Name  string
		Sizes map[string]int64
	}
	for _, root := range []int{0, 2} {
		err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
			mine := v{Name: fmt.Sprint("rank ", r.ID()), Sizes: map[string]int64{"id": int64(r.ID())}}
			got, err := mr.BroadcastValue(ctx, r, mine, root)
			if err != nil {
				return err
			}
			if got.Name != fmt.Sprint("rank ", root) || got.Sizes["id"] != int64(root) {
				return fmt.Errorf("rank %d got %+v from root %d", r.ID(), got, root)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		_, err := mr.BroadcastValue(ctx, r, 1, 2)
		if err == nil || !strings.Contains(err.Error(), "root 2") {
			return fmt.Errorf("root 2 of 2 ranks: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// TestFilesSkipUnreadable: a dangling link in a directory fails Files and
// AllFiles, naming it, at every rank count; with SkipUnreadable they
// return the other files' splits and the link as a Skip, on every rank.
func TestFilesSkipUnreadable(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	z := filepath.Join(dir, "z.txt")
	gone := filepath.Join(dir, "gone")
	for _, p := range []string{a, z} {
		if err := os.WriteFile(p, []byte("line one\nline two\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("no-such-file", gone); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	wantSkips := []mr.Skip{
		{Path: gone, Reason: "stat " + gone + ": no such file or directory"},
		{Path: missing, Reason: "stat " + missing + ": no such file or directory"},
	}
	wantSplits := []mr.Split{{Path: a, Len: 10}, {Path: a, Off: 10, Len: 8}, {Path: z, Len: 10}, {Path: z, Off: 10, Len: 8}}
	check := func(in mr.Input[mr.Split], skips []mr.Skip, err error) error {
		if err != nil {
			return err
		}
		var got []mr.Split
		for i := range in.Len() {
			s, err := in.At(context.Background(), i)
			if err != nil {
				return err
			}
			got = append(got, s)
		}
		if !slices.Equal(got, wantSplits) || !slices.Equal(skips, wantSkips) {
			return fmt.Errorf("splits %v, skips %v; want %v, %v", got, skips, wantSplits, wantSkips)
		}
		return nil
	}
	opts := mr.FileOptions{SplitBytes: 10}
	if _, _, err := mr.Files(context.Background(), opts, missing, dir); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Files with a missing input = %v; want an error naming it", err)
	}
	_, _, err := mr.Files(context.Background(), opts, dir)
	if want := "mr: stat " + gone + ": no such file or directory"; err == nil || err.Error() != want || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Files with a dangling link = %v; want %q", err, want)
	}
	skip := mr.FileOptions{SplitBytes: 10, SkipUnreadable: true}
	if err := check(mr.Files(context.Background(), skip, missing, dir)); err != nil {
		t.Errorf("Files(SkipUnreadable): %v", err)
	}
	for _, ranks := range []int{1, 2, 4} {
		err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
			_, _, err := mr.AllFiles(ctx, r, opts, dir)
			if err == nil || !strings.Contains(err.Error(), gone) {
				return fmt.Errorf("rank %d: AllFiles with a dangling link = %v; want an error naming it", r.ID(), err)
			}
			if err := check(mr.AllFiles(ctx, r, skip, missing, dir)); err != nil {
				return fmt.Errorf("rank %d: AllFiles(SkipUnreadable): %w", r.ID(), err)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%d ranks: %v", ranks, err)
		}
	}
}
