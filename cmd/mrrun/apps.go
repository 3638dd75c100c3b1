package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pgasmr/pgasmr/apps/histogram"
	"github.com/pgasmr/pgasmr/apps/linreg"
	"github.com/pgasmr/pgasmr/apps/spamcount"
	"github.com/pgasmr/pgasmr/apps/wordcount"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
)

// jobOpts are the settings of one job, already parsed and checked: the
// job options (resolved with the app's defaults) and the app-specific ones.
type jobOpts struct {
	mr.Options
	Top         int    // wordcount
	SkipUnread  bool   // wordcount
	WordsFile   string // spamcount
	InputFormat string // linreg
	Compress    bool   // the mrmpi baseline: MR_compress before the collate
	Checkpoint  string // wordcount: --checkpoint DIR
	// Notes, if not nil, takes lines about the job (a checkpoint's
	// start): stderr, unless --quiet.
	Notes io.Writer
}

// result is what every app's Run, Seq and Goroutines return.
type result interface {
	Write(w io.Writer, format string) error
}

// appFlag is an app-specific flag: its name and the apps it applies to.
type appFlag struct {
	name, usage string
}

// app wires one application's library calls to mrrun.
type app struct {
	name    string
	summary string
	input   string // input formats, for list
	// defaults are the app's job defaults (its package's Defaults): the
	// array map, if it has one, and the gather mode.
	defaults   mr.Defaults
	walk       bool     // mrrun lists the files of directory inputs (the app takes files only)
	flags      []string // app-specific flags (names without --)
	unit       string   // what a "file" is in progress reports
	run        func(ctx context.Context, r *pgas.Rank, in []string, o jobOpts) (result, error)
	seq        func(ctx context.Context, in []string, o jobOpts) (result, error)
	goroutines func(ctx context.Context, in []string, o jobOpts) (result, error)
	// report writes a summary of res to w (stderr): skipped files and the
	// like. It may be nil.
	report func(w io.Writer, res result, verbose bool)
	// png draws res to w (apps with --png).
	png func(ctx context.Context, w io.Writer, in []string, o jobOpts, res result) error
}

// appFlags documents the app-specific flags.
var appFlags = map[string]string{
	"top":             "wordcount: keep the N most frequent words (0: all)",
	"skip-unreadable": "wordcount: skip files that cannot be read (listed on stderr) instead of failing",
	"words":           "spamcount: word list FILE (one lower-case word per line) instead of the built-in 256 words",
	"input-format":    "linreg: int8 (Phoenix pairs of signed bytes, default), f64 (pairs of little-endian float64) or csv (x,y lines)",
	"png":             "histogram, linreg: also draw the result as a PNG image to FILE",
	"checkpoint":      "wordcount: keep each rank's counted chunks in DIR, so that the same command run again after a failure (a kill, Ctrl-C, a time limit) redoes only the rest; a changed input, option or -np starts DIR over, and DIR goes once the result is written",
}

// note writes line to o.Notes, if any, with mrrun's prefix; nil without
// Notes.
func (o jobOpts) note(line string) {
	if o.Notes != nil {
		fmt.Fprintf(o.Notes, "mrrun: %s\n", escapeControls(line))
	}
}

// nilResult turns a typed nil pointer (a rank without the result) into a
// nil interface.
func nilResult[T any](p *T, err error) (result, error) {
	if p == nil {
		return nil, err
	}
	return any(p).(result), err
}

func histogramOpts(o jobOpts) histogram.Options {
	return histogram.Options{Options: o.Options}
}

func linregOpts(o jobOpts) linreg.Options {
	return linreg.Options{Options: o.Options, Format: o.InputFormat}
}

func wordcountOpts(o jobOpts) wordcount.Options {
	return wordcount.Options{Options: o.Options, Top: o.Top, SkipUnreadable: o.SkipUnread, Checkpoint: o.Checkpoint, CheckpointNote: o.note}
}

func spamcountOpts(o jobOpts) spamcount.Options {
	return spamcount.Options{Options: o.Options, WordsFile: o.WordsFile}
}

// apps lists the applications in the order list prints them.
var apps = []*app{
	{
		name:     "histogram",
		summary:  "counts the 256 values of each colour channel of 24-bit BMP images",
		input:    "24-bit uncompressed BMP files (BITMAPINFOHEADER or later; bottom-up or top-down), also gzip, bzip2 or zstd compressed; files or directories",
		defaults: histogram.Defaults(),
		walk:     true,
		flags:    []string{"png"},
		unit:     "images",
		run: func(ctx context.Context, r *pgas.Rank, in []string, o jobOpts) (result, error) {
			return nilResult(histogram.Run(ctx, r, in, histogramOpts(o)))
		},
		seq: func(ctx context.Context, in []string, o jobOpts) (result, error) {
			return nilResult(histogram.Seq(ctx, in, histogramOpts(o)))
		},
		goroutines: func(ctx context.Context, in []string, o jobOpts) (result, error) {
			return nilResult(histogram.Goroutines(ctx, in, histogramOpts(o)))
		},
		png: func(_ context.Context, w io.Writer, _ []string, _ jobOpts, res result) error {
			return res.(*histogram.Result).PNG(w)
		},
	},
	{
		name:     "linreg",
		summary:  "fits a line to points by least squares: n, slope, intercept, r²",
		input:    "point files: int8 pairs (default), f64 pairs (--input-format f64) or CSV x,y lines (--input-format csv), also gzip, bzip2 or zstd compressed",
		defaults: linreg.Defaults(),
		walk:     true,
		flags:    []string{"input-format", "png"},
		unit:     "files",
		run: func(ctx context.Context, r *pgas.Rank, in []string, o jobOpts) (result, error) {
			return nilResult(linreg.Run(ctx, r, in, linregOpts(o)))
		},
		seq: func(ctx context.Context, in []string, o jobOpts) (result, error) {
			return nilResult(linreg.Seq(ctx, in, linregOpts(o)))
		},
		goroutines: func(ctx context.Context, in []string, o jobOpts) (result, error) {
			return nilResult(linreg.Goroutines(ctx, in, linregOpts(o)))
		},
		png: func(ctx context.Context, w io.Writer, in []string, o jobOpts, res result) error {
			sample, err := linreg.Sample(ctx, in, o.InputFormat, 4096)
			if err != nil {
				return err
			}
			return res.(*linreg.Result).PNG(w, sample)
		},
	},
	{
		name:     "wordcount",
		summary:  "counts the words of text files (Unicode letters and digits, lower-cased)",
		input:    "UTF-8 text, also gzip, bzip2 or zstd compressed (.gz, .bz2, .zst, found by content): files and directory trees (binary files, with a NUL in the first 8 KiB, are skipped)",
		defaults: wordcount.Defaults(),
		flags:    []string{"top", "skip-unreadable", "checkpoint"},
		unit:     "files",
		run: func(ctx context.Context, r *pgas.Rank, in []string, o jobOpts) (result, error) {
			return nilResult(wordcount.Run(ctx, r, in, wordcountOpts(o)))
		},
		seq: func(ctx context.Context, in []string, o jobOpts) (result, error) {
			return nilResult(wordcount.Seq(ctx, in, wordcountOpts(o)))
		},
		goroutines: func(ctx context.Context, in []string, o jobOpts) (result, error) {
			return nilResult(wordcount.Goroutines(ctx, in, wordcountOpts(o)))
		},
		report: func(w io.Writer, res result, verbose bool) {
			r := res.(*wordcount.Result)
			if n := len(r.SkippedBinary); n > 0 {
				fmt.Fprintf(w, "wordcount: skipped %d binary %s: %s\n", n, plural(n, "file", "files"), listNames(r.SkippedBinary, verbose))
			}
			for i, s := range r.Unreadable {
				if i == summaryNames && !verbose {
					fmt.Fprintf(w, "wordcount: skipped %d more unreadable files (--verbose lists them all)\n", len(r.Unreadable)-i)
					break
				}
				fmt.Fprintf(w, "wordcount: skipped unreadable %s: %s\n", quoteName(s.Path), escapeControls(s.Reason))
			}
		},
	},
	{
		name:     "spamcount",
		summary:  "counts 256 spam and malware words in e-mail messages (occurrences and messages)",
		input:    "e-mail: one message per file, or mbox files, also gzip, bzip2 or zstd compressed; files or directories",
		defaults: spamcount.Defaults(),
		flags:    []string{"words"},
		unit:     "messages",
		run: func(ctx context.Context, r *pgas.Rank, in []string, o jobOpts) (result, error) {
			return nilResult(spamcount.Run(ctx, r, in, spamcountOpts(o)))
		},
		seq: func(ctx context.Context, in []string, o jobOpts) (result, error) {
			return nilResult(spamcount.Seq(ctx, in, spamcountOpts(o)))
		},
		goroutines: func(ctx context.Context, in []string, o jobOpts) (result, error) {
			return nilResult(spamcount.Goroutines(ctx, in, spamcountOpts(o)))
		},
		report: func(w io.Writer, res result, _ bool) {
			r := res.(*spamcount.Result)
			if r.Malformed > 0 {
				fmt.Fprintf(w, "spamcount: %d of %d messages had a part counted undecoded (malformed MIME)\n", r.Malformed, r.Messages)
			}
		},
	},
}

// summaryNames is how many file names a summary line gives without
// --verbose.
const summaryNames = 5

// listNames joins names (quoted where they hold control characters) for
// a summary line: the first summaryNames and how many more, or all of
// them when verbose.
func listNames(names []string, verbose bool) string {
	var b strings.Builder
	for i, n := range names {
		if i == summaryNames && !verbose {
			fmt.Fprintf(&b, " and %d more (--verbose lists them all)", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteName(n))
	}
	return b.String()
}

// quoteName returns a file name as it can go to a terminal: as it is, or
// Go-quoted if it holds a control character or is not UTF-8 (an escape
// sequence in a name must not reach the terminal raw).
func quoteName(s string) string {
	if !hasControls(s) {
		return s
	}
	return strconv.Quote(s)
}

// escapeControls replaces the control characters of s, and its bytes
// that are not UTF-8, with Go escapes (\x1b, \t, \xff), so that s can go
// to a terminal; a string without them is returned as it is.
func escapeControls(s string) string {
	if !hasControls(s) {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

// hasControls reports whether s holds a control character or is not
// UTF-8.
func hasControls(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			return true
		}
	}
	return false
}

// findApp returns the app called name.
func findApp(name string) (*app, error) {
	var names []string
	for _, a := range apps {
		if a.name == name {
			return a, nil
		}
		names = append(names, a.name)
	}
	return nil, usagef("unknown app %q (want %s; see mrrun list)", name, strings.Join(names, ", "))
}

func (a *app) hasFlag(name string) bool {
	for _, f := range a.flags {
		if f == name {
			return true
		}
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// inputFiles returns the inputs of a job of a: for apps that take files
// only, directories are replaced by the regular files under them
// (mr.ListFiles: symbolic links to files followed, in lexical order); a
// missing input is an error naming it.
func (a *app) inputFiles(ctx context.Context, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: input %w", a.name, err)
		}
		if !fi.IsDir() || !a.walk {
			out = append(out, p)
			continue
		}
		files, _, err := mr.ListFiles(ctx, []string{p}, mr.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s: listing input %w", a.name, err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: input directory %s holds no files", a.name, p)
		}
		for _, f := range files {
			out = append(out, f.Path)
		}
	}
	return out, nil
}
