package mr

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/cespare/xxhash/v2"
	"github.com/pgasmr/pgasmr/pgas"
)

// Split is a byte range of a file: the bytes [Off, Off+Len) of Path. An
// input of splits lets a map read a large file piece by piece, so no rank
// ever holds a whole input in memory.
//
// Splits are cut at exact byte offsets, not at word, line or record
// boundaries: a word may straddle two splits. A map that needs whole
// records realigns itself, for example by skipping the partial record at
// the start of its split (unless Off is 0) and reading past its end to
// finish the last record it started.
type Split struct {
	Path string
	Off  int64
	Len  int64
}

func (s Split) String() string { return fmt.Sprintf("%s[%d:%d]", s.Path, s.Off, s.Off+s.Len) }

// Read reads the split's bytes into buf, which it grows if needed, and
// returns them (buf[:s.Len]). It fails, naming the file, if the file
// cannot be opened or no longer holds the whole range.
func (s Split) Read(buf []byte) ([]byte, error) {
	if s.Len < 0 || s.Off < 0 {
		return nil, fmt.Errorf("mr: split %v: negative offset or length", s)
	}
	f, err := os.Open(s.Path)
	if err != nil {
		return nil, fmt.Errorf("mr: split %v: %w", s, err)
	}
	defer f.Close()
	if int64(cap(buf)) < s.Len {
		buf = make([]byte, s.Len)
	}
	buf = buf[:s.Len]
	if _, err := f.ReadAt(buf, s.Off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("mr: split %v: reading %d bytes at offset %d: %w", s, s.Len, s.Off, err)
	}
	return buf, nil
}

// Open opens the split's file and returns a reader over the split's range
// only (an io.SectionReader); the caller closes it. Reading stops at the
// end of the range, or earlier if the file has shrunk.
func (s Split) Open() (io.ReadCloser, error) {
	if s.Len < 0 || s.Off < 0 {
		return nil, fmt.Errorf("mr: split %v: negative offset or length", s)
	}
	f, err := os.Open(s.Path)
	if err != nil {
		return nil, fmt.Errorf("mr: split %v: %w", s, err)
	}
	return &sectionFile{io.NewSectionReader(f, s.Off, s.Len), f}, nil
}

type sectionFile struct {
	*io.SectionReader
	f *os.File
}

func (s *sectionFile) Close() error { return s.f.Close() }

// splitInput is the Input of FileSplits: also a Weighter (weight = Len)
// and a Hasher (of every split's path, offset and length).
type splitInput struct {
	splits []Split
	hash   uint64
}

// FileSplits returns an Input of splits of the files, in the order given:
// each file is cut into consecutive splits of size bytes (the last one
// shorter); an empty file gives one empty split. It checks that each
// file is a regular file without opening it (StatRegular: a named pipe or
// a device is an error wrapping ErrNotRegular), then opens it to check
// that it can be read, and fails naming the first that cannot. The files
// are not read: a map reads its splits with Split.Read or Split.Open. The
// splits' weights are their lengths, for the balanced and best-fit
// distributions.
func FileSplits(paths []string, size int64) (Input[Split], error) {
	if size <= 0 {
		return nil, fmt.Errorf("mr: FileSplits with split size %d, want > 0", size)
	}
	in := &splitInput{}
	for _, p := range paths {
		n, err := fileSize(p)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			in.splits = append(in.splits, Split{Path: p})
			continue
		}
		for off := int64(0); off < n; off += size {
			in.splits = append(in.splits, Split{Path: p, Off: off, Len: min(size, n-off)})
		}
	}
	in.sum()
	return in, nil
}

// sum sets in's hash from its splits.
func (in *splitInput) sum() {
	h := xxhash.New()
	var b []byte
	for _, s := range in.splits {
		b = binary.LittleEndian.AppendUint64(b[:0], uint64(len(s.Path)))
		b = append(b, s.Path...)
		b = binary.LittleEndian.AppendUint64(b, uint64(s.Off))
		b = binary.LittleEndian.AppendUint64(b, uint64(s.Len))
		h.Write(b)
	}
	in.hash = h.Sum64()
}

// Files returns an Input of the regular files that paths name, walking
// directories as ListFiles does (the walker of mrrun and every app), cut
// into splits of size bytes, or whole files if size is 0 or less. Splits
// are weighted by their length, so the balanced and best-fit
// distributions deal bytes, not files. An input that cannot be listed or
// read is an error naming it; nothing is skipped.
func Files(ctx context.Context, size int64, paths ...string) (Input[Split], error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("mr: Files: no input path")
	}
	files, _, err := ListFiles(ctx, paths, ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("mr: %w", err)
	}
	list := make([]string, len(files))
	for i, f := range files {
		list[i] = f.Path
	}
	if size <= 0 {
		size = math.MaxInt64
	}
	return FileSplits(list, size)
}

// AllFiles is Files as a collective: rank 0 lists the paths, checks the
// files and cuts them, and every rank gets its splits (BroadcastValue), so
// that a job stats and opens its input once, not once per rank, and every
// rank maps the same splits. If rank 0 fails, every rank fails, each with
// Files' own error (every other rank then runs Files itself).
func AllFiles(ctx context.Context, r *pgas.Rank, size int64, paths ...string) (Input[Split], error) {
	splits, err := fromRoot(ctx, r, func() ([]Split, error) {
		in, err := Files(ctx, size, paths...)
		if err != nil {
			return nil, err
		}
		return in.(*splitInput).splits, nil
	})
	if err != nil {
		return nil, err
	}
	in := &splitInput{splits: splits}
	in.sum()
	return in, nil
}

// fileSize returns the size of path if it is a regular file, checked
// with StatRegular before it is opened (opening a FIFO would block), and
// opens it to check that it can be read.
func fileSize(path string) (int64, error) {
	fi, err := StatRegular(path)
	if err != nil {
		return 0, fmt.Errorf("mr: input file: %w", err) // both error types name the path
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("mr: input file: %w", err)
	}
	f.Close()
	return fi.Size(), nil
}

func (in *splitInput) Len() int64 { return int64(len(in.splits)) }

func (in *splitInput) At(_ context.Context, i int64) (Split, error) {
	if i < 0 || i >= int64(len(in.splits)) {
		return Split{}, fmt.Errorf("mr: split %d of %d", i, len(in.splits))
	}
	return in.splits[i], nil
}

func (in *splitInput) Weight(i int64) float64 { return float64(in.splits[i].Len) }

func (in *splitInput) Hash() uint64 { return in.hash }
