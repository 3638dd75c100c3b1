package wordcount

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/pgasmr/pgasmr/mr"
)

// headBytes is how much of a file's start is searched for a NUL byte.
const headBytes = 8 << 10

// blockBytes is the read size of the streaming tokenizer; the context is
// checked once per block.
const blockBytes = 1 << 20

type file struct {
	path string
	size int64
}

// Skip is an input file that was not counted.
type Skip struct {
	Path   string
	Reason string // "binary", or the error that made it unreadable
}

// list expands paths into the regular files under them, sorted by path
// without duplicates. A path that cannot be listed, or that is neither a
// directory nor a regular file (a FIFO, a device: refused before it is
// opened, see mr.StatInput), is an error naming it, or with skip a Skip.
// Inside a directory, entries that are neither (symbolic links followed)
// are passed over, as every app does; links to directories are not
// followed.
func list(paths []string, skip bool) ([]file, []Skip, error) {
	var files []file
	var skipped []Skip
	fail := func(path string, err error) error {
		var nr *mr.NotRegularError
		switch {
		case !skip && errors.As(err, &nr):
			return fmt.Errorf("wordcount: %w", nr) // it names the path
		case !skip:
			return fmt.Errorf("wordcount: input %s: %w", path, err)
		case errors.As(err, &nr):
			skipped = append(skipped, Skip{Path: path, Reason: nr.Reason()})
		default:
			skipped = append(skipped, Skip{Path: path, Reason: err.Error()})
		}
		return nil
	}
	for _, p := range paths {
		fi, err := mr.StatInput(p)
		if err != nil {
			if err := fail(p, err); err != nil {
				return nil, nil, err
			}
			continue
		}
		if !fi.IsDir() {
			files = append(files, file{p, fi.Size()})
			continue
		}
		root := p
		if li, err := os.Lstat(p); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			root = p + string(filepath.Separator) // WalkDir does not follow a symbolic link at its root
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return fail(path, err)
			}
			switch {
			case d.IsDir():
				return nil
			case d.Type().IsRegular():
				info, err := d.Info()
				if err != nil {
					return fail(path, err)
				}
				files = append(files, file{path, info.Size()})
				return nil
			case d.Type()&fs.ModeSymlink != 0:
				fi, err := mr.StatRegular(path)
				switch {
				case errors.Is(err, mr.ErrNotRegular):
					return nil // a directory (not followed), a FIFO, a device
				case err != nil:
					return fail(path, err)
				}
				files = append(files, file{path, fi.Size()})
				return nil
			}
			return nil // devices, sockets, pipes: not files
		})
		if err != nil {
			return nil, nil, err
		}
	}
	slices.SortFunc(files, func(a, b file) int {
		switch {
		case a.path < b.path:
			return -1
		case a.path > b.path:
			return 1
		}
		return 0
	})
	files = slices.CompactFunc(files, func(a, b file) bool { return a.path == b.path })
	return files, skipped, nil
}

// chunk is a nominal byte range [off, off+n) of a file: it counts the words
// that start in [cut(off), cut(off+n)).
type chunk struct {
	path       string
	size       int64 // the file's size
	off, n     int64
	firstChunk bool
	idx        int64 // index in the job's chunk list
}

// chunks cuts files into chunks of at most size bytes; an empty file gives
// one empty chunk.
func chunks(files []file, size int64) []chunk {
	var cs []chunk
	for _, f := range files {
		if f.size == 0 {
			cs = append(cs, chunk{path: f.path, firstChunk: true})
			continue
		}
		for off := int64(0); off < f.size; off += size {
			cs = append(cs, chunk{path: f.path, size: f.size, off: off, n: min(size, f.size-off), firstChunk: off == 0})
		}
	}
	return cs
}

// chunkInput is the mr.Input of a job: chunks weighted by length.
type chunkInput struct{ cs []chunk }

func (in *chunkInput) Len() int64 { return int64(len(in.cs)) }

func (in *chunkInput) At(_ context.Context, i int64) (chunk, error) {
	c := in.cs[i]
	c.idx = i
	return c, nil
}

func (in *chunkInput) Weight(i int64) float64 { return float64(in.cs[i].n) }

func (in *chunkInput) Hash() uint64 {
	h := fnv.New64a()
	var b []byte
	for _, c := range in.cs {
		b = binary.LittleEndian.AppendUint64(b[:0], uint64(len(c.path)))
		b = append(b, c.path...)
		b = binary.LittleEndian.AppendUint64(b, uint64(c.off))
		b = binary.LittleEndian.AppendUint64(b, uint64(c.n))
		h.Write(b)
	}
	return h.Sum64()
}

// status is what counting a chunk found.
type status int

const (
	counted    status = iota
	binaryFile        // a NUL in the first 8 KiB: nothing counted
	unreadable        // open or read failed and skipping was asked for
)

// reader counts chunks; it keeps its buffer between chunks. It belongs to
// one goroutine.
type reader struct {
	buf  []byte
	win  []byte
	skip bool
}

// count tokenizes chunk c, calling add for every word. With r.skip, a file
// that cannot be read gives status unreadable and the error as the reason
// (words of the chunk counted before a failed read stay counted);
// otherwise the error is returned, naming the file.
func (r *reader) count(ctx context.Context, c chunk, add func([]byte)) (status, string, error) {
	st, err := r.countFile(ctx, c, add)
	if err == nil {
		var last int64
		if c.off+c.n == c.size {
			last = 1 // the file's last chunk
		}
		mr.ProgressFrom(ctx).Add(last, c.n)
	}
	switch {
	case err == nil:
		return st, "", nil
	case ctx.Err() != nil:
		return st, "", err
	case r.skip:
		return unreadable, err.Error(), nil
	}
	return st, "", err
}

func (r *reader) countFile(ctx context.Context, c chunk, add func([]byte)) (status, error) {
	if err := ctx.Err(); err != nil {
		return counted, err
	}
	f, err := os.Open(c.path)
	if err != nil {
		return counted, fmt.Errorf("wordcount: %w", err) // *PathError names the file
	}
	defer f.Close()
	if cap(r.buf) < blockBytes {
		r.buf = make([]byte, blockBytes)
	}
	r.buf = r.buf[:cap(r.buf)]
	head := r.buf[:min(headBytes, c.size)]
	if err := readAt(f, head, 0); err != nil {
		return counted, err
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return binaryFile, nil
	}
	lo, err := r.cut(f, c.size, c.off)
	if err != nil {
		return counted, err
	}
	hi, err := r.cut(f, c.size, c.off+c.n)
	if err != nil {
		return counted, err
	}
	return counted, r.stream(ctx, f, lo, hi, add)
}

// stream tokenizes the bytes [lo, hi) of f, which start and end at word
// boundaries, reading a block at a time.
func (r *reader) stream(ctx context.Context, f *os.File, lo, hi int64, add func([]byte)) error {
	carry := 0
	for pos := lo; pos < hi; {
		if err := ctx.Err(); err != nil {
			return err
		}
		if carry == len(r.buf) { // one word longer than the buffer
			r.buf = append(r.buf, make([]byte, len(r.buf))...)
			r.buf = r.buf[:cap(r.buf)]
		}
		n := min(int64(len(r.buf)-carry), hi-pos)
		if err := readAt(f, r.buf[carry:carry+int(n)], pos); err != nil {
			return err
		}
		pos += n
		data := r.buf[:carry+int(n)]
		end := len(data)
		if pos < hi {
			end = safeEnd(data)
		}
		Words(data[:end], add)
		carry = copy(r.buf, data[end:])
	}
	return nil
}

// cut returns the cut position of nominal offset o in f (see cutIn): 0 at
// the start, size at the end.
func (r *reader) cut(f *os.File, size, o int64) (int64, error) {
	if o <= 0 || o >= size {
		return min(max(o, 0), size), nil
	}
	start := max(0, o-3)
	for win := int64(4 << 10); ; win *= 4 {
		end := min(size, o+win)
		if int64(cap(r.win)) < end-start {
			r.win = make([]byte, end-start)
		}
		b := r.win[:end-start]
		if err := readAt(f, b, start); err != nil {
			return 0, err
		}
		if p, ok := cutIn(b, int(o-start), end == size); ok {
			return start + int64(p), nil
		}
	}
}

func readAt(f *os.File, b []byte, off int64) error {
	if _, err := f.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the file shrank since it was listed
		}
		return fmt.Errorf("wordcount: reading %d bytes of %s at offset %d: %w", len(b), f.Name(), off, err)
	}
	return nil
}
