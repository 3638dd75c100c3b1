// Package zio reads files that may be compressed with gzip, bzip2 or
// zstd, detected by their first bytes (their magic), not by their names:
//
//	rc, format, err := zio.Open("corpus/part-0.zst") // or part-0.txt
//	if err != nil {
//		return err // "corpus/part-0.zst: ..."
//	}
//	defer rc.Close()
//	_, err = io.Copy(dst, rc) // decompressed bytes; format is zio.Zstd
//
// Concatenated gzip members, bzip2 streams and zstd frames (and zstd
// skippable frames) are read through as one stream. A file whose name
// ends in .gz, .bz2 or .zst but whose content lacks that format's magic
// is an error (DetectFile): content decides the format, but a name that
// promises compression is not silently read as text.
//
// Every error of Open, ReadAll and the readers they return names the
// file. Bad data, a truncated file included (never a silently short
// stream), is a *CorruptError, which wraps ErrCorrupt:
// "PATH: corrupt gzip data: unexpected EOF". An error of the file itself
// (a failed read) is the *fs.PathError the file gave.
//
// A reader belongs to one goroutine; the package's functions may be
// called concurrently.
package zio
