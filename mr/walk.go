package mr

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pgasmr/pgasmr/pgas"
)

// File is a regular file that ListFiles found: its path and its size when
// it was listed.
type File struct {
	Path string
	Size int64
}

// Skip is an input path that was not read, and why.
type Skip struct {
	Path   string
	Reason string // the error that made it unreadable, without a package prefix
}

// ListOptions says how ListFiles treats what it cannot list. The zero value
// fails at the first such path.
type ListOptions struct {
	// SkipUnreadable collects the paths that cannot be listed, and inputs
	// that are neither a directory nor a regular file, as Skips instead of
	// failing. The context's end is never skipped.
	SkipUnreadable bool
}

// ListError is the error of ListFiles about one path that cannot be
// listed. Its text is Err's, which names the path (an *fs.PathError, or a
// *NotRegularError for an input that is neither a directory nor a regular
// file); Path says which path it is, for callers that prefix it.
type ListError struct {
	Path string // the input, or the entry under it, that failed
	Err  error
}

func (e *ListError) Error() string { return e.Err.Error() }

func (e *ListError) Unwrap() error { return e.Err }

// ListFiles expands input paths into the regular files they name: the
// one directory walker that every app and mrrun use.
//
// Order: the paths in the order given; a directory's files in the order of
// filepath.WalkDir (depth first, each directory's entries in lexical order
// of their names). Nothing is sorted across paths and nothing is dropped
// as a duplicate: a caller that wants one sorted list sorts it.
//
// Rules, the same for every app:
//   - An input path is checked with StatInput, symbolic links followed:
//     a regular file is listed as given, a directory (or a link to one) is
//     walked, anything else (a FIFO, a device, a socket) is a
//     *NotRegularError, found without opening it.
//   - Inside a directory, regular files and symbolic links to regular
//     files are listed; subdirectories are walked, but symbolic links to
//     directories are not followed; entries that are neither (FIFOs,
//     devices, sockets, links to them) are passed over without a word,
//     as grep -r and find -type f do. Hidden files (names starting with
//     '.') are listed like any other.
//   - A path that cannot be stat'ed or a directory that cannot be read (a
//     dangling link, a missing input, a directory without permission) is
//     a *ListError naming it, or with opts.SkipUnreadable a Skip; a
//     directory that cannot be read is then passed over whole.
//
// ctx is checked before each entry; once it is done ListFiles returns
// ctx.Err() as it is. The files are not opened.
func ListFiles(ctx context.Context, paths []string, opts ListOptions) ([]File, []Skip, error) {
	var files []File
	var skips []Skip
	fail := func(path string, err error) error {
		if !opts.SkipUnreadable {
			return &ListError{Path: path, Err: err}
		}
		reason := err.Error()
		if nr := (*NotRegularError)(nil); errors.As(err, &nr) {
			reason = nr.Reason() // the Skip's Path names it
		}
		skips = append(skips, Skip{Path: path, Reason: reason})
		return nil
	}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		fi, err := StatInput(p)
		if err != nil {
			if err := fail(p, err); err != nil {
				return nil, nil, err
			}
			continue
		}
		if !fi.IsDir() {
			files = append(files, File{p, fi.Size()})
			continue
		}
		root := p
		if li, err := os.Lstat(p); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			root = p + string(filepath.Separator) // WalkDir does not follow a symbolic link at its root
		}
		var ctxErr error
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if ctxErr = ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			if err != nil {
				return fail(path, err)
			}
			switch {
			case d.IsDir():
				return nil
			case d.Type().IsRegular():
				info, err := d.Info()
				if err == nil {
					err = checkSize(path, info)
				}
				if err != nil {
					return fail(path, err)
				}
				files = append(files, File{path, info.Size()})
			case d.Type()&fs.ModeSymlink != 0:
				fi, err := StatRegular(path)
				switch {
				case errors.Is(err, ErrNotRegular):
					// A directory (not followed), a FIFO, a device.
				case err != nil:
					return fail(path, err)
				default:
					files = append(files, File{path, fi.Size()})
				}
			}
			return nil // devices, sockets, pipes: not files
		})
		if ctxErr != nil {
			return nil, nil, ctxErr
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return files, skips, nil
}

// AllListFiles is ListFiles as a collective: rank 0 walks the paths and
// every rank gets its list, so a job stats its input once, not once per
// rank (at 64 in-process ranks every rank walking a 400-file corpus cost
// a quarter of a second of processor time), and every rank sees the same
// files even if the tree changes while the job starts.
//
// If rank 0 cannot list the paths, it returns ListFiles' error and every
// other rank lists them itself, so that each returns ListFiles' own error
// (a *ListError or *NotRegularError, the context's error); a rank whose
// own listing succeeds then returns an error that gives rank 0's.
func AllListFiles(ctx context.Context, r *pgas.Rank, paths []string, opts ListOptions) ([]File, []Skip, error) {
	type listing struct {
		Files []File
		Skips []Skip
	}
	got, err := fromRoot(ctx, r, func() (listing, error) {
		files, skips, err := ListFiles(ctx, paths, opts)
		return listing{files, skips}, err
	})
	return got.Files, got.Skips, err
}
