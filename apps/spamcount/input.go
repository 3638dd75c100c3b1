package spamcount

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strconv"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/internal/zio"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// Message locates one message: the bytes [Off, Off+Len) of Path (a whole
// file, or one message of an mbox file without its "From " line), or of
// its decompressed bytes if Compressed.
type Message struct {
	Path string
	Off  int64
	Len  int64
	// Compressed is set when Path is compressed (gzip, bzip2 or zstd, told
	// by its first bytes): Off and Len are offsets in its decompressed
	// bytes, which are read from the file's start.
	Compressed bool
}

func (m Message) String() string { return fmt.Sprintf("%s[%d:%d]", m.Path, m.Off, m.Off+m.Len) }

// maxCompressedMessage bounds a message of a compressed file, read whole
// into memory: a small file may decompress to anything.
const maxCompressedMessage = 1 << 30

// checkEvery is how many input bytes readers handle between checks of the
// context.
const checkEvery = 1 << 20

// Scan lists the messages under paths: each path is a file or a directory
// walked in lexical order; a file starting with "From " is an mbox and is
// split into its messages, any other file is one message. A compressed
// file (gzip, bzip2, zstd) is decompressed, then taken the same way; its
// messages are Compressed. Only regular
// files are read. An unreadable path is an error naming it; so is a path
// that is neither a directory nor a regular file (a FIFO, a device: an
// error wrapping mr.ErrNotRegular, found before it is opened), while such
// entries inside a directory are passed over.
func Scan(ctx context.Context, paths []string) ([]Message, error) {
	files, err := listFiles(ctx, paths)
	if err != nil {
		return nil, err
	}
	return scanFiles(ctx, files)
}

// listFiles lists the regular files under paths, in order (mr.ListFiles:
// each path in turn, a directory walked in lexical order). A path that is
// neither a directory nor a regular file (a FIFO, a device) is an error
// naming it, found before it is opened; inside a directory such entries
// are passed over, as every app does.
func listFiles(ctx context.Context, paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		found, _, err := mr.ListFiles(ctx, []string{p}, mr.ListOptions{})
		if errors.Is(err, mr.ErrNotRegular) {
			return nil, fmt.Errorf("spamcount: %w", err)
		}
		if err != nil {
			return nil, fmt.Errorf("spamcount: scanning %s: %w", p, err)
		}
		for _, f := range found {
			files = append(files, f.Path)
		}
	}
	return files, nil
}

// scanFiles lists the messages of files, in order.
func scanFiles(ctx context.Context, files []string) ([]Message, error) {
	var msgs []Message
	var br *bufio.Reader
	for _, path := range files {
		var err error
		if msgs, err = scanFile(ctx, msgs, path, &br); err != nil {
			return nil, fmt.Errorf("spamcount: %w", err)
		}
	}
	return msgs, nil
}

// scanRec is a Message with its file as an index into a file list: the
// fixed-size form in which ranks share the messages they scanned.
// Compressed is 1 for a Compressed message.
type scanRec struct{ File, Off, Len, Compressed int64 }

// scanShared lists the messages of files collectively: rank r scans its
// block of the files and the ranks allgather what they found, so that
// every rank gets the whole list having opened only its share.
func scanShared(ctx context.Context, r *pgas.Rank, files []string) ([]Message, error) {
	lo, hi := distrib.BlockRange(int64(len(files)), r.N(), r.ID())
	mine, err := scanFiles(ctx, files[lo:hi])
	if err != nil {
		return nil, err
	}
	index := make(map[string]int64, hi-lo)
	for i := lo; i < hi; i++ {
		index[files[i]] = i
	}
	recs := make([]scanRec, len(mine))
	for i, m := range mine {
		recs[i] = scanRec{index[m.Path], m.Off, m.Len, 0}
		if m.Compressed {
			recs[i].Compressed = 1
		}
	}
	team := r.World()
	lens := make([]int64, r.N())
	if err := coll.Allgather(ctx, team, coll.Private(lens), coll.Private([]int64{int64(len(recs))}), 1); err != nil {
		return nil, fmt.Errorf("spamcount: rank %d: sharing the scan: %w", r.ID(), err)
	}
	counts := make([]int, r.N())
	total := 0
	for i, n := range lens {
		counts[i] = int(n)
		total += int(n)
	}
	all := make([]scanRec, total)
	if err := coll.AllgatherV(ctx, team, coll.Private(all), coll.Private(recs), counts, nil, nil); err != nil {
		return nil, fmt.Errorf("spamcount: rank %d: sharing the scan: %w", r.ID(), err)
	}
	msgs := make([]Message, total)
	for i, rec := range all {
		if rec.File < 0 || rec.File >= int64(len(files)) {
			return nil, fmt.Errorf("spamcount: rank %d: shared scan names file %d of %d", r.ID(), rec.File, len(files))
		}
		msgs[i] = Message{Path: files[rec.File], Off: rec.Off, Len: rec.Len, Compressed: rec.Compressed != 0}
	}
	return msgs, nil
}

// scanFile appends the messages of one file; br is a reusable buffer.
func scanFile(ctx context.Context, dst []Message, path string, br **bufio.Reader) ([]Message, error) {
	f, err := os.Open(path)
	if err != nil {
		return dst, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return dst, err
	}
	size := fi.Size()
	var head [zio.MagicLen]byte
	n, err := io.ReadFull(f, head[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return dst, fmt.Errorf("%s: %w", path, err)
	}
	format, err := zio.DetectHead(path, head[:n])
	if err != nil {
		return dst, err // it names the file
	}
	if format != zio.None {
		return scanCompressed(ctx, dst, f, path, format, br)
	}
	if string(head[:min(n, 5)]) != "From " {
		return append(dst, Message{Path: path, Len: size}), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return dst, fmt.Errorf("%s: %w", path, err)
	}
	if *br == nil {
		*br = bufio.NewReaderSize(f, 64<<10)
	} else {
		(*br).Reset(f)
	}
	msgs, err := splitMbox(ctx, *br)
	(*br).Reset(nil)
	if err != nil {
		return dst, fmt.Errorf("%s: %w", path, err)
	}
	for _, m := range msgs {
		m.Path = path
		dst = append(dst, m)
	}
	return dst, nil
}

// scanCompressed appends the messages of f, file path of the given
// format, its head read: its decompressed bytes are scanned as those of
// a file that is not compressed (scanFile).
func scanCompressed(ctx context.Context, dst []Message, f *os.File, path string, format zio.Format, br **bufio.Reader) ([]Message, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return dst, fmt.Errorf("%s: %w", path, err)
	}
	zr, err := zio.NewNamedReader(f, path, format)
	if err != nil {
		return dst, err // it names the file
	}
	defer zr.Close()
	if *br == nil {
		*br = bufio.NewReaderSize(zr, 64<<10)
	} else {
		(*br).Reset(zr)
	}
	defer (*br).Reset(nil)
	var msgs []Message
	head, err := (*br).Peek(5)
	switch {
	case err != nil && err != io.EOF:
		return dst, err // it names the file
	case string(head) == "From ":
		if msgs, err = splitMbox(ctx, *br); err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("%s: %w", path, err)
			}
			return dst, err // zio's errors name the file
		}
	default: // one message: the whole stream
		var n int64
		for {
			if err := ctx.Err(); err != nil {
				return dst, fmt.Errorf("%s: %w", path, err)
			}
			k, err := (*br).Discard(checkEvery)
			n += int64(k)
			if err == io.EOF {
				break
			}
			if err != nil {
				return dst, err // it names the file
			}
		}
		msgs = []Message{{Len: n}}
	}
	for _, m := range msgs {
		if m.Len > maxCompressedMessage {
			return dst, fmt.Errorf("%s: the message at offset %d of its decompressed bytes is %d bytes: %w (%d bytes)", path, m.Off, m.Len, zio.ErrTooLarge, maxCompressedMessage)
		}
		m.Path, m.Compressed = path, true
		dst = append(dst, m)
	}
	return dst, nil
}

// splitMbox finds the messages of an mbox stream: a message starts after a
// "From " line that begins the stream or follows an empty line, and ends
// where the next such line begins.
func splitMbox(ctx context.Context, br *bufio.Reader) ([]Message, error) {
	var msgs []Message
	var off, next int64 // bytes read; when to check ctx next
	lineStart, prevEmpty := true, true
	start := int64(-1) // start of the current message
	for {
		line, err := br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
			return nil, err
		}
		if lineStart && prevEmpty && bytes.HasPrefix(line, []byte("From ")) {
			if start >= 0 {
				msgs = append(msgs, Message{Off: start, Len: off - start})
			}
			// Skip to the end of the "From " line.
			n := int64(len(line))
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				n += int64(len(line))
				if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
					return nil, err
				}
			}
			off += n
			start = off
			lineStart, prevEmpty = true, false
		} else {
			off += int64(len(line))
			if lineStart {
				prevEmpty = len(line) == 1 && line[0] == '\n' || len(line) == 2 && line[0] == '\r' && line[1] == '\n'
			}
			lineStart = len(line) > 0 && line[len(line)-1] == '\n'
		}
		if off >= next {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			next = off + checkEvery
		}
		if err == io.EOF {
			break
		}
	}
	if start >= 0 {
		msgs = append(msgs, Message{Off: start, Len: off - start})
	}
	return msgs, nil
}

// messages is the map input: messages weighted by size.
type messages []Message

func (ms messages) Len() int64 { return int64(len(ms)) }

func (ms messages) At(_ context.Context, i int64) (Message, error) { return ms[i], nil }

// Weight is the message's size (at least 1, so that empty messages count).
func (ms messages) Weight(i int64) float64 { return float64(max(ms[i].Len, 1)) }

// Hash hashes every message's path, offset and length (compared across
// ranks unless pgas.Config.NoCheck).
func (ms messages) Hash() uint64 {
	h := fnv.New64a()
	var b []byte
	for _, m := range ms {
		b = strconv.AppendInt(append(append(b[:0], m.Path...), 0), m.Off, 10)
		b = strconv.AppendInt(append(b, ':'), m.Len, 10)
		if m.Compressed {
			b = append(b, 'z')
		}
		h.Write(append(b, ';'))
	}
	return h.Sum64()
}

// zstream is a compressed file left open after a message read from it,
// for its next messages: messages of a file are mostly read in order. A
// zstream belongs to one goroutine.
type zstream struct {
	path string
	rc   io.ReadCloser // nil: none open
	br   *bufio.Reader
	pos  int64 // the decompressed bytes read
}

// read reads Compressed message m into buf, grown if needed, from the
// stream left open at or before it, or from the file's start. The stream
// is closed at the file's end or at an error.
func (z *zstream) read(ctx context.Context, m Message, buf []byte) ([]byte, error) {
	if z.rc != nil && (z.path != m.Path || z.pos > m.Off) {
		z.close()
	}
	if z.rc == nil {
		rc, _, err := zio.Open(m.Path)
		if err != nil {
			return nil, fmt.Errorf("spamcount: %w", err) // it names the file
		}
		z.path, z.rc, z.pos = m.Path, rc, 0
		if z.br == nil {
			z.br = bufio.NewReaderSize(rc, 64<<10)
		} else {
			z.br.Reset(rc)
		}
	}
	fail := func(err error) ([]byte, error) {
		z.close()
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the file changed since it was scanned
			return nil, fmt.Errorf("spamcount: message %v: %w", m, err)
		}
		return nil, fmt.Errorf("spamcount: %w", err) // it names the file
	}
	for z.pos < m.Off {
		if err := ctx.Err(); err != nil {
			z.close()
			return nil, err
		}
		n, err := z.br.Discard(int(min(m.Off-z.pos, checkEvery)))
		z.pos += int64(n)
		if err != nil {
			return fail(err)
		}
	}
	if int64(cap(buf)) < m.Len {
		buf = make([]byte, m.Len)
	}
	buf = buf[:m.Len]
	n, err := io.ReadFull(z.br, buf)
	z.pos += int64(n)
	if err != nil {
		return fail(err)
	}
	if _, err := z.br.Peek(1); err != nil {
		z.close() // the end (an error is met again by a later read)
	}
	return buf, nil
}

// close closes the stream left open, if any.
func (z *zstream) close() {
	if z.rc != nil {
		z.rc.Close() // a read-only file: nothing is lost
		z.br.Reset(nil)
		z.rc, z.path, z.pos = nil, "", 0
	}
}

// read reads a message that is not Compressed into buf, grown if needed.
func (m Message) read(buf []byte) ([]byte, error) {
	f, err := os.Open(m.Path)
	if err != nil {
		return nil, fmt.Errorf("spamcount: %w", err)
	}
	defer f.Close()
	if int64(cap(buf)) < m.Len {
		buf = make([]byte, m.Len)
	}
	buf = buf[:m.Len]
	if _, err := f.ReadAt(buf, m.Off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("spamcount: message %v: %w", m, err)
	}
	return buf, nil
}
