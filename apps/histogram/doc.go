// Package histogram is the histogram application of pgasmr (seeds/002
// §4.3): it counts each of the 256 values of the red, green and blue
// channels of 24-bit uncompressed BMP files, summed over all the files.
//
//	err := pgas.Run(ctx, pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
//		res, err := histogram.Run(ctx, r, files, histogram.DefaultOptions())
//		if err != nil || res == nil { // res is nil except on the root
//			return err
//		}
//		return res.Write(os.Stdout, "text")
//	})
//
// # Input
//
// BMP files with a BITMAPINFOHEADER or a later header (V2, V3, V4, V5),
// 24 bits per pixel, uncompressed (BI_RGB), bottom-up or top-down; rows are
// padded to 4 bytes and the padding is not counted. Compressed, palette,
// 16- and 32-bit, OS/2 and truncated files are errors that name the file
// and wrap ErrUnsupported, ErrTruncated or ErrNotBMP. Each file is cut
// into input elements of whole pixel rows (Options.ChunkBytes), so a large
// image spreads over the ranks; rows are read with ReadAt in pieces of at
// most 128 KiB, and the context is checked before each read. No image is
// ever held in memory whole.
//
// A file compressed with gzip, bzip2 or zstd (told by its first bytes,
// package internal/zio), say image.bmp.gz, is decompressed: it is one
// input element, weighted by its pixel bytes like any other, whose rows
// are read from one decompressing stream, with the same result as the
// uncompressed file. Bad compressed data is an error naming the file and
// wrapping zio.ErrCorrupt; decompressed bytes that end before the last
// row, one wrapping ErrTruncated.
//
// # Map modes
//
// The array map (the default, the fast path) gives each rank a contiguous
// share of the chunks, counts them locally into 768 counters and emits one
// pair per non-zero (channel, value) into an array store. The element map
// (Options.Map = mr.MapElement) maps chunk by chunk under any distribution and
// emits three pairs per pixel, as in seeds/002 fig. 4.2, for comparison.
// Keys are red values at [0,256), green at [256,512), blue at [512,768).
//
// # Baselines and output
//
// Seq (one goroutine) and Goroutines (one goroutine per CPU) compute the
// same Result without pgasmr. Every mode writes the same bytes with
// Result.Write: text, tsv, csv or json. Result.PNG draws the histograms.
// Generate and GenerateBytes write deterministic test images.
//
// Run is collective; Seq, Goroutines and Generate may be called
// concurrently; a Result is a plain value owned by the caller.
package histogram
