// Package spamcount counts the words of a list related to malware and spam
// in a collection of e-mail messages: per word, its occurrences and the
// number of messages containing it. It is one of pgasmr's applications
// and a worked example of an element-by-element map with an array
// container and a user combiner.
//
//	err := pgas.Run(ctx, pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
//		res, err := spamcount.Run(ctx, r, []string{"mail/"}, spamcount.Options{Options: mr.Options{Dist: distrib.Balanced}})
//		if err != nil || res == nil { // res is nil except on the root
//			return err
//		}
//		return res.Write(os.Stdout, "text")
//	})
//
// # Input
//
// Paths are files or directories (walked in lexical order). A file that
// starts with "From " is an mbox: a message starts after each "From " line
// at the start of the file or after an empty line ("From " lines inside
// messages are not unescaped). Any other file is one message. Messages are
// the map's input elements, weighted by their size.
//
// A file compressed with gzip, bzip2 or zstd (told by its first bytes,
// package internal/zio; .mbox.gz is common) is decompressed and taken the
// same way, with the same result as the uncompressed file: Scan
// decompresses it to find its messages, and counting reads them in order
// from one decompressing stream. A message of a compressed file over 1
// GiB is an error. Bad compressed data (a truncated file, or a .gz name on
// text) is an error naming the file.
//
// # Decoding
//
// The Subject header is counted (RFC 2047 encoded-words decoded; words in
// unknown charsets keep their bytes). The body is decoded: the
// quoted-printable and base64 transfer encodings, text/plain and text/html
// parts of (nested) multiparts, other parts ignored, HTML tags and
// comments stripped and the character references amp, lt, gt, quot, apos,
// nbsp and numeric ones decoded. Text is read as UTF-8 whatever its
// charset; invalid bytes separate words. A body without Content-Type is
// text/plain.
//
// Real mail is broken, so decoding never fails: a message whose header
// cannot be parsed is counted as raw text, a text part whose base64 or
// Content-Type cannot be decoded is counted as its raw bytes, and a broken
// multipart (no boundary parameter, no boundary line, a bad part header)
// is counted as its raw body. A multipart without its closing boundary
// (common in real mail) is decoded up to the end of the body.
// Quoted-printable is decoded leniently and never fails. Messages with any
// of these problems are counted in Result.Malformed, which callers report
// on stderr; on the SpamAssassin corpus that is 61 of 6,046 messages,
// most of them missing a closing boundary.
//
// A message is read whole into memory (an mbox file is not: it is scanned
// as a stream), so memory grows with the largest message, not with the
// input.
//
// # Words
//
// A word is a maximal run of runes for which unicode.IsLetter or
// unicode.IsNumber holds, lower-cased rune by rune with unicode.ToLower
// (the wordcount rule). The built-in list (DefaultWords, words.txt) holds
// 256 such words; Options.WordsFile replaces it (see ParseWords).
//
// # Output
//
// Result.Write writes the same bytes whatever computed the result (Run in
// any configuration, Seq, Goroutines): every listed word in list order,
// zeros included, as text, tsv, csv or json.
//
// # Calls
//
// Run is collective. Seq, Goroutines, Scan and Generate are ordinary
// functions; all check the context at least every MiB of input.
package spamcount
