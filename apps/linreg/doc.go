// Package linreg is the linear-regression application of pgasmr (seeds/002
// §4.3, after Phoenix's linear_regression): it fits y = slope·x + intercept
// by least squares to points read from files, and reports n, slope,
// intercept and r².
//
//	err := pgas.Run(ctx, pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
//		res, err := linreg.Run(ctx, r, []string{"points.bin"}, linreg.Options{})
//		if err != nil || res == nil { // res is nil except on the root
//			return err
//		}
//		return res.Write(os.Stdout, "text")
//	})
//
// # Input
//
// Three input formats (Options.Format):
//
//   - "int8" (the default, Phoenix's format): each point is two signed
//     bytes, x then y.
//   - "f64": each point is two little-endian IEEE-754 float64 values.
//   - "csv": one "x,y" point per line (LF or CRLF; blanks around the fields
//     and blank lines are ignored; a first line "x,y" is a header).
//
// A binary file whose size is not a multiple of the record size, a NaN or
// infinite value and an unparsable CSV line are errors naming the file and
// the byte offset (and, for CSV, the line number).
//
// Files are cut into chunks of Options.ChunkBytes (default 1 MiB, a
// multiple of 16 so chunks hold whole records); a CSV chunk owns the lines
// that start inside it. The chunks are the map's input elements, so large
// files spread over ranks; a chunk is read in pieces of at most 1 MiB and
// the context is checked between pieces, so no file is read into memory
// whole and cancellation is prompt. Binary pieces are read with ReadAt
// into a 256 KiB buffer (read-only memory maps are an alternative kept for
// BenchmarkRead; a file truncated under a map gives an error, not a
// crash).
//
// A file compressed with gzip, bzip2 or zstd (told by its first bytes:
// mr.Files, package internal/zio), say points.bin.zst, is one input
// element, weighted by its size on disk, read as one decompressing
// stream: its decompressed bytes are summed in chunks of
// Options.ChunkBytes, as the uncompressed file would be cut, and each
// chunk's float sums get a reduce key of their own, below the next
// element's, so the result has the uncompressed file's bytes. Offsets in
// errors count decompressed bytes. Bad compressed data is an error naming
// the file and wrapping zio.ErrCorrupt.
//
// The int8 kernel counts points in a 65,536-bin histogram of (x, y) byte
// pairs, one increment per point, and folds the histogram into the sums
// once per rank (array map), per chunk (element map) or when the counts
// could overflow; BenchmarkKernel compares it with the obvious loop.
//
// # Exactness: the same bytes for any rank count and distribution
//
// Each chunk yields its Sums: n, Σx, Σy, Σx², Σy², Σxy. For int8 input the
// sums are exact int64 (x² ≤ 2^14, so they cannot overflow below 5·10^14
// points), and their total does not depend on the order of additions. For
// float input each chunk's sums are float64 added in input order, and the
// chunk sums are combined in chunk order (the reduce key is the chunk's
// index): the result depends on ChunkBytes, never on the rank count,
// distribution, map mode, gather mode or transfer.
//
// # The formula
//
// Every mode and baseline computes the fit from the sums with fit, which
// evaluates, exactly in rational arithmetic (math/big.Rat, the sums being
// exact integers or float64 values), and rounds each result once to the
// nearest float64:
//
//	Dxx = n·Σx² − (Σx)²   Dyy = n·Σy² − (Σy)²   Dxy = n·Σxy − Σx·Σy
//	slope     = Dxy / Dxx
//	intercept = (Σy·Σx² − Σx·Σxy) / Dxx   (= (Σy − slope·Σx)/n exactly)
//	r²        = Dxy² / (Dxx·Dyy)
//
// Dxx ≤ 0 (fewer than two distinct x, or no points) is an error wrapping
// ErrZeroVariance; Dyy ≤ 0 (constant y) gives r² = NaN, printed as NaN in
// text, tsv and csv and as null in json.
//
// # Modes
//
// Run is the pgasmr job (collective; the result is on the root). Seq is a
// plain one-goroutine loop and Goroutines an idiomatic fan-out over the
// chunks; both use the same chunk sums and formula, so every mode writes
// the same bytes. Generate makes test inputs; PNG draws a sample of points
// with the fitted line.
package linreg
