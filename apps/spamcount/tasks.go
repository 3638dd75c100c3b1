package spamcount

import "context"

// Words returns the word list of o: the file o.WordsFile (see
// ParseWords), or the built-in list (DefaultWords).
func Words(o Options) ([]string, error) { return loadWords(o) }

// A Counter counts messages one at a time with the package's decoder and
// word rule, as Run, Seq and Goroutines do, for MapReduce frameworks other
// than pgasmr (apps/mrmpi). It belongs to one goroutine.
type Counter struct{ c *counter }

// NewCounter returns a Counter of the listed words.
func NewCounter(words []string) *Counter { return &Counter{newCounter(words)} }

// Count reads, decodes and counts message msg (from Scan). It calls emit
// once per listed word the message contains, with the word's index in the
// list and its occurrences, and reports whether the message was
// malformed (see the package documentation).
func (c *Counter) Count(ctx context.Context, msg Message, emit func(word int, occurrences int64)) (malformed bool, err error) {
	n := int32(len(c.c.m.counts))
	err = c.c.message(ctx, msg, func(k int32, v counts) {
		if k == n {
			malformed = v[1] != 0
			return
		}
		emit(int(k), v[0])
	})
	return malformed, err
}

// Close closes the compressed file a Count may leave open for the next
// message of the file (messages of a compressed file are read from its
// start; one read in order is left open, and closed at the file's end).
// The Counter may be used after.
func (c *Counter) Close() { c.c.close() }

// Files lists the regular files under paths in the order Scan reads them
// (directories walked in lexical order, symbolic links to files
// followed). Scan of one of them lists its messages.
func Files(ctx context.Context, paths []string) ([]string, error) { return listFiles(ctx, paths) }
