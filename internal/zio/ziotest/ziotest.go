// Package ziotest makes compressed test inputs for package zio's users:
// a file, or a copy of a directory tree with every file compressed, in
// gzip, bzip2 or zstd, with no program outside Go. Go's standard library
// has no bzip2 writer; Bzip2 is a small one (plain Burrows–Wheeler, one
// canonical Huffman table a block, no optimisation) whose output any
// bzip2 reader reads.
//
//	ziotest.WriteTree(t, "testdata/sample", dir, ziotest.Mixed)
//
// The functions may be called concurrently.
package ziotest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pgasmr/pgasmr/internal/zio"
)

// Formats are the compressed formats.
var Formats = []zio.Format{zio.Gzip, zio.Bzip2, zio.Zstd}

// Compress returns data compressed in format f (None: data itself). It
// panics on an unknown format.
func Compress(f zio.Format, data []byte) []byte {
	switch f {
	case zio.None:
		return bytes.Clone(data)
	case zio.Gzip:
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(data) // a bytes.Buffer does not fail
		w.Close()
		return b.Bytes()
	case zio.Bzip2:
		// The smallest block size that holds data in one block (a
		// reader allocates 4 bytes per byte of it), or 9.
		return Bzip2(data, min(9, 1+len(data)*5/4/100000))
	case zio.Zstd:
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))
		if err != nil {
			panic(err) // no options can be wrong
		}
		defer e.Close()
		return e.EncodeAll(data, nil)
	}
	panic(fmt.Sprintf("ziotest: unknown format %v", f))
}

// All picks format f for every file (WriteTree).
func All(f zio.Format) func(i int, path string) zio.Format {
	return func(int, string) zio.Format { return f }
}

// Mixed picks gzip, bzip2, zstd and none in turn, by the file's index in
// the tree (WriteTree).
func Mixed(i int, _ string) zio.Format {
	return [...]zio.Format{zio.Gzip, zio.Bzip2, zio.Zstd, zio.None}[i%4]
}

// WriteTree copies the regular files under src (a file or a directory)
// to dst, each compressed in the format pick returns for it (given its
// index in lexical order and its path under src) and named with that
// format's extension: src/a/b.txt becomes dst/a/b.txt.gz. It returns the
// paths written, in order.
func WriteTree(t testing.TB, src, dst string, pick func(i int, path string) zio.Format) []string {
	t.Helper()
	var out []string
	i := 0
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if rel == "." {
			rel = filepath.Base(path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f := pick(i, rel)
		i++
		to := filepath.Join(dst, rel) + f.Ext()
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		out = append(out, to)
		return os.WriteFile(to, Compress(f, data), 0o644)
	})
	if err != nil {
		t.Fatalf("ziotest.WriteTree(%s, %s): %v", src, dst, err)
	}
	return out
}

// WriteFile writes data compressed in format f to path.
func WriteFile(t testing.TB, path string, f zio.Format, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, Compress(f, data), 0o644); err != nil {
		t.Fatal(err)
	}
}
