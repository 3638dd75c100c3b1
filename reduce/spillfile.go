package reduce

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
)

// The spill file format. All integers are little-endian; varints are
// encoding/binary's.
//
//	header   "PGMRSPIL", version uint32 (1), flags uint32 (1: keeps all values)
//	records  one per key, keys ascending in the store's order:
//	           uvarint(len(body)+1), body
//	         body, combined:   key, value
//	         body, keep all:   key, uvarint(values), then for each value in
//	                           tag order: varint(Call), varint(Idx),
//	                           varint(Seq), value
//	         (keys and values encoded with the store's codecs)
//	end      uvarint 0
//	trailer  keys uint64, values uint64, CRC-32C uint32 of every byte
//	         before it
//
// A file cut short misses its end or trailer; a changed byte fails the
// checksum at the latest (a length, a codec or the key order may see it
// earlier).
const (
	spillMagic   = "PGMRSPIL"
	spillVersion = 1
	spillAll     = 1 // flags: the run keeps all values

	spillHeaderBytes  = len(spillMagic) + 8
	spillTrailerBytes = 8 + 8 + 4

	spillBufBytes   = 64 << 10 // a file's bufio buffer, writing or reading
	spillArenaBytes = 64 << 10 // a reader's record arena
)

// ErrCorruptSpill is wrapped by the errors of a spill file that is cut
// short or whose bytes changed.
var ErrCorruptSpill = errors.New("corrupt spill file")

// castagnoli is the CRC-32C table, made on a spill's first use: making it
// at start-up cost every process a fifth of a millisecond.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// runFile is a run a store spilled: its file, and what it holds.
type runFile struct {
	path  string
	keys  int64
	vals  int64
	bytes int64
	level int // 0: spilled; l+1: a merge of spillFanIn files of level l
}

// fileWriter writes one spill file.
type fileWriter struct {
	bw    *bufio.Writer
	crc   uint32
	n     int64
	keys  int64
	vals  int64
	body  []byte
	ahead [binary.MaxVarintLen64]byte
}

func (w *fileWriter) write(b []byte) error {
	w.crc = crc32.Update(w.crc, castagnoli(), b)
	w.n += int64(len(b))
	_, err := w.bw.Write(b)
	return err
}

// writeRun writes what src yields to path, a new file, with the codecs kc
// and vc; all says whether values are kept with their tags. It neither
// closes src nor removes path on an error.
func writeRun[K, V any](path string, wrap func(io.Writer) io.Writer, src RunReader[K, V], kc Codec[K], vc Codec[V], all bool) (rf runFile, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return rf, err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	var out io.Writer = f
	if wrap != nil {
		out = wrap(f)
	}
	w := &fileWriter{bw: bufio.NewWriterSize(out, spillBufBytes)}
	var flags uint32
	if all {
		flags = spillAll
	}
	hdr := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32([]byte(spillMagic), spillVersion), flags)
	if err := w.write(hdr); err != nil {
		return rf, err
	}
	for src.Next() {
		b := kc.Append(w.body[:0], src.Key())
		vs := src.Values()
		if all {
			b = binary.AppendUvarint(b, uint64(len(vs)))
			for i, t := range src.Tags() {
				b = binary.AppendVarint(b, t.Call)
				b = binary.AppendVarint(b, t.Idx)
				b = binary.AppendVarint(b, t.Seq)
				b = vc.Append(b, vs[i])
			}
		} else {
			b = vc.Append(b, vs[0])
		}
		w.body = b
		if err := w.write(binary.AppendUvarint(w.ahead[:0], uint64(len(b))+1)); err != nil {
			return rf, err
		}
		if err := w.write(b); err != nil {
			return rf, err
		}
		w.keys++
		w.vals += int64(len(vs))
	}
	if err := src.Err(); err != nil {
		return rf, err
	}
	tr := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64([]byte{0}, uint64(w.keys)), uint64(w.vals))
	if err := w.write(tr); err != nil {
		return rf, err
	}
	if err := w.write(binary.LittleEndian.AppendUint32(nil, w.crc)); err != nil {
		return rf, err
	}
	if err := w.bw.Flush(); err != nil {
		return rf, err
	}
	return runFile{path: path, keys: w.keys, vals: w.vals, bytes: w.n}, nil
}

// fileReader reads a spill file: a RunReader.
type fileReader[K, V any] struct {
	path   string
	f      *os.File
	br     *bufio.Reader
	size   int64 // the file's size
	off    int64 // bytes read
	crc    uint32
	kc     Codec[K]
	vc     Codec[V]
	all    bool
	cmp    func(a, b K) int // key order, or nil with byBytes
	bytes  bool             // keys are ordered by their encodings
	remove bool             // remove the file once read or closed

	rec    int64 // records read
	recOff int64 // where the current record starts
	nvals  int64
	key    K
	prev   []byte // the previous key's encoding (bytes order)
	vals   []V
	tags   []Tag
	arena  []byte
	done   bool
	err    error
}

// openRun opens the spill file at path for the store s; remove says
// whether the file is removed once read or closed. An error names the
// file.
func openRun[K comparable, V any](s *Store[K, V], path string, remove bool) (*fileReader[K, V], error) {
	r := &fileReader[K, V]{path: path, kc: s.kc, vc: s.vc, all: s.comb.KeepsAll(), cmp: s.cmp, bytes: s.enc != nil, remove: remove}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reduce: open spill file: %w", err)
	}
	r.f = f
	fi, err := f.Stat()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("reduce: spill file: %w", err)
	}
	r.size = fi.Size()
	r.br = bufio.NewReaderSize(f, spillBufBytes)
	var h [spillHeaderBytes]byte
	if err := r.read(h[:]); err != nil {
		r.Close()
		return nil, r.errorf(-1, "header: %w", err)
	}
	var want uint32
	if r.all {
		want = spillAll
	}
	if string(h[:len(spillMagic)]) != spillMagic {
		r.Close()
		return nil, r.errorf(-1, "header: %w: magic %q, want %q", ErrCorruptSpill, h[:len(spillMagic)], spillMagic)
	}
	if v := binary.LittleEndian.Uint32(h[len(spillMagic):]); v != spillVersion {
		r.Close()
		return nil, r.errorf(-1, "header: %w: version %d, want %d", ErrCorruptSpill, v, spillVersion)
	}
	if fl := binary.LittleEndian.Uint32(h[len(spillMagic)+4:]); fl != want {
		r.Close()
		return nil, r.errorf(-1, "header: %w: flags %#x, want %#x (keeps all values: %v)", ErrCorruptSpill, fl, want, r.all)
	}
	return r, nil
}

// errorf returns an error naming the file and record rec (-1: none).
func (r *fileReader[K, V]) errorf(rec int64, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if rec < 0 {
		return fmt.Errorf("reduce: spill file %s: %w", r.path, err)
	}
	return fmt.Errorf("reduce: spill file %s: record %d at byte %d: %w", r.path, rec, r.recOff, err)
}

// read fills b from the file, adding it to the checksum; a file that ends
// first is corrupt.
func (r *fileReader[K, V]) read(b []byte) error {
	n, err := io.ReadFull(r.br, b)
	r.crc = crc32.Update(r.crc, castagnoli(), b[:n])
	r.off += int64(n)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: cut short at byte %d of %d", ErrCorruptSpill, r.off, r.size)
	}
	return err
}

// uvarint reads a uvarint from the file, adding it to the checksum.
func (r *fileReader[K, V]) uvarint() (uint64, error) {
	b, err := r.br.Peek(binary.MaxVarintLen64) // fewer at the end of the file
	v, n := binary.Uvarint(b)
	switch {
	case n > 0:
	case n == 0 && len(b) < binary.MaxVarintLen64:
		if err == nil || errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("%w: cut short at byte %d of %d", ErrCorruptSpill, r.off+int64(len(b)), r.size)
		}
		return 0, err
	default:
		return 0, fmt.Errorf("%w: bad length", ErrCorruptSpill)
	}
	r.crc = crc32.Update(r.crc, castagnoli(), b[:n])
	r.off += int64(n)
	_, err = r.br.Discard(n)
	return v, err
}

// fail records err, closes the reader and returns false.
func (r *fileReader[K, V]) fail(err error) bool {
	r.err = err
	r.Close() // removes the file if it is to be: the error says what it held
	return false
}

func (r *fileReader[K, V]) Next() bool {
	if r.done || r.err != nil {
		return false
	}
	r.recOff = r.off
	n, err := r.uvarint()
	if err != nil {
		return r.fail(r.errorf(r.rec, "length: %w", err))
	}
	if n == 0 {
		return r.finish()
	}
	n--
	if left := r.size - r.off; n > uint64(left) {
		return r.fail(r.errorf(r.rec, "%w: record of %d bytes, %d left in the file", ErrCorruptSpill, n, left))
	}
	if cap(r.arena)-len(r.arena) < int(n) {
		// Records are never overwritten: a value a codec decodes may
		// alias its bytes.
		r.arena = make([]byte, 0, max(spillArenaBytes, int(n)))
	}
	body := r.arena[len(r.arena) : len(r.arena)+int(n)]
	r.arena = r.arena[:len(r.arena)+int(n)]
	if err := r.read(body); err != nil {
		return r.fail(r.errorf(r.rec, "%w", err))
	}
	if err := r.decode(body); err != nil {
		return r.fail(r.errorf(r.rec, "%w", err))
	}
	r.rec++
	return true
}

// decode decodes a record's body into the current key and values.
func (r *fileReader[K, V]) decode(body []byte) error {
	k, p, err := r.kc.Decode(body)
	if err != nil {
		return fmt.Errorf("%w: key: %w", ErrCorruptSpill, err)
	}
	if r.rec > 0 {
		var c int
		if r.bytes {
			c = bytes.Compare(r.prev, body[:p])
		} else {
			c = r.cmp(r.key, k)
		}
		if c > 0 {
			return fmt.Errorf("%w: key %v does not follow the previous key %v", ErrCorruptSpill, k, r.key)
		}
	}
	r.key, r.prev = k, body[:p]
	r.vals, r.tags = r.vals[:0], r.tags[:0]
	count := uint64(1)
	if r.all {
		c, m := binary.Uvarint(body[p:])
		// Each value takes at least 3 bytes (its tag's varints).
		if m <= 0 || c == 0 || c > uint64(len(body)-p-m)/3 {
			return fmt.Errorf("%w: value count", ErrCorruptSpill)
		}
		count, p = c, p+m
	}
	for range count {
		if r.all {
			t, m := decodeTag(body[p:])
			if m <= 0 {
				return fmt.Errorf("%w: tag of value %d", ErrCorruptSpill, len(r.vals))
			}
			r.tags = append(r.tags, t)
			p += m
		}
		v, m, err := r.vc.Decode(body[p:])
		if err != nil {
			return fmt.Errorf("%w: value %d: %w", ErrCorruptSpill, len(r.vals), err)
		}
		r.vals = append(r.vals, v)
		p += m
	}
	if p != len(body) {
		return fmt.Errorf("%w: %d bytes after the record's values", ErrCorruptSpill, len(body)-p)
	}
	r.nvals += int64(count)
	return nil
}

// decodeTag decodes a tag's three varints from the front of b and returns
// it and the bytes it took, or 0 if b does not start with one.
func decodeTag(b []byte) (Tag, int) {
	call, m1 := binary.Varint(b)
	if m1 <= 0 {
		return Tag{}, 0
	}
	idx, m2 := binary.Varint(b[m1:])
	if m2 <= 0 {
		return Tag{}, 0
	}
	seq, m3 := binary.Varint(b[m1+m2:])
	if m3 <= 0 {
		return Tag{}, 0
	}
	return Tag{Call: call, Idx: idx, Seq: seq}, m1 + m2 + m3
}

// finish checks the trailer after the end record, and closes the reader.
func (r *fileReader[K, V]) finish() bool {
	var t [spillTrailerBytes]byte
	if err := r.read(t[:16]); err != nil {
		return r.fail(r.errorf(-1, "trailer: %w", err))
	}
	sum := r.crc
	if err := r.read(t[16:]); err != nil {
		return r.fail(r.errorf(-1, "trailer: %w", err))
	}
	keys, vals := binary.LittleEndian.Uint64(t[:]), binary.LittleEndian.Uint64(t[8:])
	switch crc := binary.LittleEndian.Uint32(t[16:]); {
	case crc != sum:
		return r.fail(r.errorf(-1, "trailer: %w: checksum %#08x, the bytes give %#08x", ErrCorruptSpill, crc, sum))
	case keys != uint64(r.rec) || vals != uint64(r.nvals):
		return r.fail(r.errorf(-1, "trailer: %w: %d keys and %d values, the trailer says %d and %d", ErrCorruptSpill, r.rec, r.nvals, keys, vals))
	case r.off != r.size:
		return r.fail(r.errorf(-1, "trailer: %w: %d bytes after the trailer", ErrCorruptSpill, r.size-r.off))
	}
	r.done = true
	if err := r.Close(); err != nil {
		r.err = err
	}
	return false
}

func (r *fileReader[K, V]) Key() K      { return r.key }
func (r *fileReader[K, V]) Values() []V { return r.vals }

func (r *fileReader[K, V]) Tags() []Tag {
	if !r.all {
		return nil
	}
	return r.tags
}

func (r *fileReader[K, V]) Err() error { return r.err }

func (r *fileReader[K, V]) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f, r.br, r.arena = nil, nil, nil
	if !r.done && r.err == nil {
		r.done = true // closed before its end: Next stops
	}
	if r.remove {
		if rerr := os.Remove(r.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	if err != nil {
		return fmt.Errorf("reduce: close spill file: %w", err)
	}
	return nil
}

// WriteFile writes what src yields (keys ascending in the store's order,
// as a store's runs and readers give them) to path, a new file in the
// spill format, and syncs it to disk: a file that outlives the job, such
// as a checkpoint's (OpenFile reads it). It does not close src; on an
// error no file is left at path. An error names the file.
func (s *Store[K, V]) WriteFile(path string, src RunReader[K, V]) error {
	_, err := writeRun(path, nil, src, s.kc, s.vc, s.comb.KeepsAll())
	if err == nil {
		err = syncFile(path)
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("reduce: writing %s: %w", path, err)
	}
	return nil
}

// OpenFile opens a file WriteFile wrote, for a store with the same key
// and value types, codecs and combiner: a reader of its pairs in order,
// each checked as it is read (a file cut short or changed is an error
// wrapping ErrCorruptSpill that names it). The file stays.
func (s *Store[K, V]) OpenFile(path string) (RunReader[K, V], error) {
	r, err := openRun(s, path, false)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
