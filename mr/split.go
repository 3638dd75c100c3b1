package mr

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/pgasmr/pgasmr/internal/zio"
	"github.com/pgasmr/pgasmr/pgas"
)

// Split is a byte range of a file: the bytes [Off, Off+Len) of Path. An
// input of splits (Files, AllFiles) lets a map read a large file piece by
// piece, so no rank ever holds a whole input in memory.
//
// Read and Open give the range's bytes as they are: splits are cut at
// exact byte offsets, so a word or a line may straddle two splits. Lines,
// Records and CSV give the lines, fixed-size records or CSV rows that
// start in the range, reading past its end to finish the last one: the
// splits of a file read each of its lines (records, rows) exactly once,
// whatever the split size, as Hadoop's TextInputFormat does.
//
// A compressed file (Codec set) is one split, Off 0 and Len its size on
// disk; every method reads its decompressed bytes, and offsets (Line.Off,
// those in errors) count decompressed bytes.
type Split struct {
	Path string
	Off  int64
	Len  int64
	// Codec is the file's compression, found from its content by Files:
	// "" (none), "gzip", "bzip2" or "zstd".
	Codec string
	// Header says the file's first line (for CSV, its first row) is a
	// header, which Lines and CSV skip: FileOptions.Header.
	Header bool
}

func (s Split) String() string {
	if s.Codec != "" {
		return fmt.Sprintf("%s[%d:%d](%s)", s.Path, s.Off, s.Off+s.Len, s.Codec)
	}
	return fmt.Sprintf("%s[%d:%d]", s.Path, s.Off, s.Off+s.Len)
}

// format checks s's range and codec and returns the codec's format.
func (s Split) format() (zio.Format, error) {
	if s.Len < 0 || s.Off < 0 {
		return zio.None, fmt.Errorf("mr: split %v: negative offset or length", s)
	}
	if s.Codec == "" {
		return zio.None, nil
	}
	for _, f := range []zio.Format{zio.Gzip, zio.Bzip2, zio.Zstd} {
		if codec(f) != s.Codec {
			continue
		}
		if s.Off != 0 {
			return zio.None, fmt.Errorf("mr: split %v: a compressed file is one split, at offset 0", s)
		}
		return f, nil
	}
	return zio.None, fmt.Errorf("mr: split %v: unknown codec %q", s, s.Codec)
}

// codec is the Split.Codec of f.
func codec(f zio.Format) string {
	if f == zio.None {
		return ""
	}
	return f.String()
}

// Read reads the split's bytes into buf, which it grows if needed, and
// returns them (buf[:s.Len]). It fails, naming the file, if the file
// cannot be opened or no longer holds the whole range. A compressed
// split's bytes are the whole decompressed file, held in memory.
func (s Split) Read(buf []byte) ([]byte, error) {
	f, err := s.format()
	if err != nil {
		return nil, err
	}
	if f != zio.None {
		rc, err := s.Open()
		if err != nil {
			return nil, err
		}
		b := bytes.NewBuffer(buf[:0])
		_, err = b.ReadFrom(rc)
		if cerr := rc.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("mr: split %v: %w", s, err)
		}
		return b.Bytes(), nil
	}
	file, err := os.Open(s.Path)
	if err != nil {
		return nil, fmt.Errorf("mr: split %v: %w", s, err)
	}
	defer file.Close()
	if int64(cap(buf)) < s.Len {
		buf = make([]byte, s.Len)
	}
	buf = buf[:s.Len]
	if _, err := file.ReadAt(buf, s.Off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("mr: split %v: reading %d bytes at offset %d: %w", s, s.Len, s.Off, err)
	}
	return buf, nil
}

// Open opens the split's file and returns a reader over the split's range
// only (an io.SectionReader), or over the whole decompressed file if the
// split is compressed; the caller closes it. Reading stops at the end of
// the range, or earlier if the file has shrunk. Errors of a compressed
// file's reader name the file; bad data wraps zio.ErrCorrupt.
func (s Split) Open() (io.ReadCloser, error) {
	f, err := s.format()
	if err != nil {
		return nil, err
	}
	file, err := os.Open(s.Path)
	if err != nil {
		return nil, fmt.Errorf("mr: split %v: %w", s, err)
	}
	if f == zio.None {
		return &sectionFile{io.NewSectionReader(file, s.Off, s.Len), file}, nil
	}
	rc, err := zio.NewNamedReader(file, s.Path, f)
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("mr: split %v: %w", s, err)
	}
	return &decompressed{rc, file}, nil
}

type sectionFile struct {
	*io.SectionReader
	f *os.File
}

func (s *sectionFile) Close() error { return s.f.Close() }

// decompressed is a decompressor and the file it reads, closed together.
type decompressed struct {
	io.ReadCloser
	f *os.File
}

func (d *decompressed) Close() error { return errors.Join(d.ReadCloser.Close(), d.f.Close()) }

// FileOptions says how Files and AllFiles cut files into splits. The zero
// value gives one split per file and fails at the first input that cannot
// be read.
type FileOptions struct {
	// SplitBytes cuts each file into consecutive splits of this many
	// bytes, the last one shorter; 0 means one split per file, negative is
	// an error. A compressed file is always one split.
	SplitBytes int64

	// SkipUnreadable returns the inputs that cannot be read as Skips
	// instead of failing: what ListOptions.SkipUnreadable skips (missing
	// paths, dangling links, directories that cannot be read, inputs that
	// are neither a file nor a directory), files that cannot be opened,
	// and files whose name promises a compression their content lacks.
	SkipUnreadable bool

	// Header says the first line (for CSV, the first row) of every file is
	// a header: Split.Lines and Split.CSV skip it, once per file.
	Header bool
}

// Files returns an Input of splits of the regular files that paths name,
// walking directories as ListFiles does (the walker of mrrun and every
// app), in ListFiles' order, and the inputs it skipped. Each file is
// opened, to check that it can be read and to detect its compression
// from its first bytes (gzip, bzip2, zstd: Split.Codec), and cut as opts
// says; an empty file is one empty split. Splits are weighted by their
// length (a compressed file's by its size on disk), so the balanced and
// best-fit distributions deal bytes, not files; the Input is also a
// Hasher. No path gives an empty Input.
//
// An input that cannot be listed or read is an error naming it or, with
// opts.SkipUnreadable, a Skip: the skips are returned sorted by path, for
// the caller to report. The context's end is never skipped. Files reads
// no data beyond each file's first bytes; a compressed file's data is
// checked only when a map reads it, and then an error names it.
func Files(ctx context.Context, opts FileOptions, paths ...string) (Input[Split], []Skip, error) {
	if opts.SplitBytes < 0 {
		return nil, nil, fmt.Errorf("mr: FileOptions.SplitBytes is %d, want 0 (whole files) or more", opts.SplitBytes)
	}
	files, skips, err := ListFiles(ctx, paths, ListOptions{SkipUnreadable: opts.SkipUnreadable})
	if err != nil {
		return nil, nil, fmt.Errorf("mr: %w", err)
	}
	in := &splitInput{}
	for _, file := range files {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		size, f, err := inspect(file.Path)
		if err != nil {
			if !opts.SkipUnreadable {
				return nil, nil, fmt.Errorf("mr: input file: %w", err) // every error here names the path
			}
			reason := err.Error()
			if nr := (*NotRegularError)(nil); errors.As(err, &nr) {
				reason = nr.Reason()
			}
			skips = append(skips, Skip{Path: file.Path, Reason: reason})
			continue
		}
		in.add(file.Path, size, f, opts)
	}
	slices.SortStableFunc(skips, func(a, b Skip) int { return cmp.Compare(a.Path, b.Path) })
	in.sum()
	return in, skips, nil
}

// AllFiles is Files as a collective: rank 0 lists the paths, opens the
// files and cuts them, and every rank gets its splits and skips
// (BroadcastValue), so that a job stats and opens its input once, not
// once per rank, and every rank maps the same splits. If rank 0 fails,
// every rank fails, each with Files' own error (every other rank then
// runs Files itself).
func AllFiles(ctx context.Context, r *pgas.Rank, opts FileOptions, paths ...string) (Input[Split], []Skip, error) {
	type listing struct {
		Splits []Split
		Skips  []Skip
	}
	got, err := fromRoot(ctx, r, func() (listing, error) {
		in, skips, err := Files(ctx, opts, paths...)
		if err != nil {
			return listing{}, err
		}
		return listing{in.(*splitInput).splits, skips}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	in := &splitInput{splits: got.Splits}
	in.sum()
	return in, got.Skips, nil
}

// inspect returns the size and the compression of path if it is a regular
// file, checked with StatRegular before it is opened (opening a FIFO
// would block), that can be opened and read. Its errors name the path.
func inspect(path string) (int64, zio.Format, error) {
	if _, err := StatRegular(path); err != nil {
		return 0, zio.None, err // both error types name the path
	}
	file, err := os.Open(path)
	if err != nil {
		return 0, zio.None, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return 0, zio.None, err
	}
	var head [zio.MagicLen]byte
	n, err := io.ReadFull(file, head[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return 0, zio.None, err
	}
	f, err := zio.DetectHead(path, head[:n])
	return fi.Size(), f, err
}

// splitInput is the Input of Files: also a Weighter (weight = Len) and a
// Hasher (of every split).
type splitInput struct {
	splits []Split
	hash   uint64
}

// add appends the splits of the file at path, of size bytes and format f.
func (in *splitInput) add(path string, size int64, f zio.Format, opts FileOptions) {
	s := Split{Path: path, Codec: codec(f), Header: opts.Header}
	if n := opts.SplitBytes; n == 0 || n >= size || f != zio.None {
		s.Len = size
		in.splits = append(in.splits, s)
		return
	}
	for off := int64(0); off < size; off += opts.SplitBytes {
		s.Off, s.Len = off, min(opts.SplitBytes, size-off)
		in.splits = append(in.splits, s)
	}
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
		b = append(b, s.Codec...)
		b = append(b, 0)
		if s.Header {
			b[len(b)-1] = 1
		}
		h.Write(b)
	}
	in.hash = h.Sum64()
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
