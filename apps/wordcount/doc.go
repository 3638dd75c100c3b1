// Package wordcount counts the words of text files: the wordcount
// application of pgasmr (seeds/002 §4.3), with its input reader,
// tokenizer, output formats, corpus generator and two baselines.
//
// Inputs are files, directory trees (walked; regular files only, symbolic
// links to files followed) or several paths, listed in lexical order.
// Text is UTF-8; invalid bytes separate words. A word is a maximal run of
// runes for which unicode.IsLetter or unicode.IsNumber holds, lower-cased
// rune by rune with unicode.ToLower (Words). A file with a NUL byte in its
// first 8 KiB is binary: skipped and counted. A file that cannot be read
// is an error naming it, unless Options.SkipUnreadable.
//
// A file compressed with gzip, bzip2 or zstd (told by its first bytes,
// package internal/zio) is counted as its decompressed text, with the
// same result as the uncompressed file; the binary test applies to the
// decompressed bytes. A file named .gz, .bz2 or .zst is one chunk,
// weighted by its compressed size, decompressed as a stream. Bad
// compressed data (a truncated file, or a .gz name on text) is an error
// naming the file, unless Options.SkipUnreadable; the words before the
// damage are then counted, as before any failed read.
//
//	err := pgas.Run(ctx, pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
//		res, err := wordcount.Run(ctx, r, []string{"corpus/"}, wordcount.Options{Top: 10})
//		if err != nil || res == nil { // res is nil except on the root
//			return err
//		}
//		return res.Write(os.Stdout, "text")
//	})
//
// # How Run works
//
// Every rank lists the same files and cuts them into chunks of
// Options.ChunkBytes (a nominal byte range, weighted by its length for the
// balanced and best-fit distributions). A chunk [off, end) counts the
// words from just after the first non-word rune at or after off (or from
// the file start) to just after the first non-word rune at or after end
// (or to the file end), so every word is counted once, whatever the
// chunk size, and a chunk never holds more than a 1 MiB block (plus one
// word) in memory. The context is checked once per block. A rank counts its
// chunks in one local table (an open-addressing table that allocates only
// for new words) and, after its last chunk, hands it to its
// reduce.NewHashStore[string, int64](reduce.Sum[int64]()) whole, one pair
// per distinct word in no order (reduce.CountTable.Pairs,
// reduce.Store.AddPairs: no second hash table, and no sort where the ranks
// of a node combine in a node-level table first), from the map's finish
// function (mr.WithFinish), in the element map and the array map alike. File statuses (files read, skipped as binary or
// unreadable) are each rank's side result, gathered with mr.GatherValues
// to the rank that builds the Result. The default gather is partitioned
// with a merge to Options.Root.
//
// # Baselines and output
//
// Seq (one goroutine, whole files) and Goroutines (GOMAXPROCS workers over
// the chunks) give the same Result. Result.Write prints it in every format
// with the same bytes from every mode: text, tsv, csv and json, words by
// count descending then word (bytes). Skipped files are in the Result for
// the caller to report on stderr, never in the output.
//
// Run is collective: every rank calls it with the same paths and options.
// Seq, Goroutines and Generate may be called concurrently. A Result is not
// modified by Write.
package wordcount
