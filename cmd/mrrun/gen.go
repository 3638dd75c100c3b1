package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pgasmr/pgasmr/apps/histogram"
	"github.com/pgasmr/pgasmr/apps/linreg"
	"github.com/pgasmr/pgasmr/apps/spamcount"
	"github.com/pgasmr/pgasmr/apps/wordcount"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/spf13/pflag"
)

const genHelp = `Usage: mrrun gen APP [flags] OUTPUT

Generates an input for APP (histogram, linreg, wordcount, spamcount). The
same flags and seed give the same bytes.

  mrrun gen wordcount --size 1GiB --files 5000 --seed 1 corpus/
  mrrun gen wordcount --size 1GB --files 100 --vocabulary 4000000000 unique/
  mrrun gen histogram --size 150MB --seed 1 img.bmp
  mrrun gen linreg --points 128000000 --seed 1 pts.bin
  mrrun gen spamcount --messages 10000 --seed 1 mail/

histogram and linreg write one file; wordcount and spamcount write a
directory of files. OUTPUT must not exist yet, or be an empty directory for
wordcount and spamcount, unless --force. Nothing is left behind when
generation fails or is interrupted. Sizes take SI and IEC suffixes (150MB,
1GiB).

Defaults: wordcount 64MB in 100 files, histogram 64MB, linreg 16000000 int8
points, spamcount 1000 messages; seed 1.

Flags:
`

// genFlags are the flags of mrrun gen.
type genFlags struct {
	size, inputFormat string
	files, messages   int
	points            int64
	seed              uint64
	vocabulary        int64
	force, quiet      bool
}

// genAppFlags lists the app-specific gen flags and the apps they apply to.
var genAppFlags = map[string][]string{
	"size":         {"wordcount", "histogram", "linreg"},
	"files":        {"wordcount"},
	"vocabulary":   {"wordcount"},
	"points":       {"linreg"},
	"input-format": {"linreg"},
	"messages":     {"spamcount"},
}

func (f *genFlags) define(fs *pflag.FlagSet) {
	fs.StringVar(&f.size, "size", "", "wordcount, histogram, linreg: bytes to write (default 64MB for wordcount and histogram; linreg: points = size / record size)")
	fs.IntVar(&f.files, "files", 100, "wordcount: number of files")
	fs.Int64Var(&f.vocabulary, "vocabulary", wordcount.DefaultVocabulary, "wordcount: distinct words to draw from; past 50000, three words in four are drawn uniformly from all of them, so that with a vocabulary far above the corpus's word count most words occur once")
	fs.Int64Var(&f.points, "points", 16_000_000, "linreg: number of points")
	fs.StringVar(&f.inputFormat, "input-format", "int8", "linreg: int8 (pairs of signed bytes), f64 (pairs of little-endian float64) or csv (x,y lines)")
	fs.IntVar(&f.messages, "messages", 1000, "spamcount: number of messages (one file each)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed")
	fs.BoolVar(&f.force, "force", false, "replace an existing OUTPUT file, or write into a non-empty OUTPUT directory (replacing entries of the same names)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no summary line on stderr")
}

// defaultGenSize is the default --size of wordcount and histogram.
const defaultGenSize = 64_000_000

// cmdGen is mrrun gen APP [flags] OUTPUT.
//
// The library generators take no context: single-file outputs still stop at
// the next write after ctx is cancelled, and directory outputs at the next
// file (see generateDir).
func cmdGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mrrun gen")
	var f genFlags
	f.define(fs)
	if err := parseFlags(fs, args, stdout, genHelp); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usagef("gen: %v", err)
	}
	if fs.NArg() == 0 {
		return usagef("gen: no app given (usage: mrrun gen APP [flags] OUTPUT; apps: histogram, linreg, wordcount, spamcount)")
	}
	a, err := findApp(fs.Arg(0))
	if err != nil {
		return usagef("gen: %v", err)
	}
	switch {
	case fs.NArg() == 1:
		return usagef("gen %s: no OUTPUT given (usage: mrrun gen %s [flags] OUTPUT)", a.name, a.name)
	case fs.NArg() > 2:
		return usagef("gen %s: one OUTPUT wanted, got %d: %s", a.name, fs.NArg()-1, strings.Join(fs.Args()[1:], " "))
	}
	out := fs.Arg(1)
	for _, name := range slices.Sorted(maps.Keys(genAppFlags)) {
		if fs.Changed(name) && !slices.Contains(genAppFlags[name], a.name) {
			return usagef("gen %s: --%s does not apply to %s (it is for %s)", a.name, name, a.name, strings.Join(genAppFlags[name], ", "))
		}
	}
	size := int64(defaultGenSize)
	if fs.Changed("size") {
		if size, err = parseSize(f.size); err != nil {
			return usagef("gen %s: --size: %v", a.name, err)
		}
	}

	var points int64 // linreg
	switch a.name {
	case "wordcount":
		if f.files < 1 {
			return usagef("gen wordcount: --files %d: need at least 1", f.files)
		}
		if f.vocabulary < wordcount.MinVocabulary {
			return usagef("gen wordcount: --vocabulary %d: need at least %d words", f.vocabulary, wordcount.MinVocabulary)
		}
	case "spamcount":
		if f.messages < 0 {
			return usagef("gen spamcount: --messages %d: must not be negative", f.messages)
		}
	case "linreg":
		if points, err = f.linregPoints(fs.Changed("size"), fs.Changed("points"), size); err != nil {
			return err
		}
	}
	dir := a.name == "wordcount" || a.name == "spamcount"
	if err := checkGenOutput(a.name, out, dir, f.force); err != nil {
		return err
	}

	var summary string
	switch a.name {
	case "wordcount":
		files, n, err := generateDir(ctx, out, func(dir string) error { return wordcount.GenerateVocabulary(dir, size, f.files, f.seed, f.vocabulary) })
		if err != nil {
			return fmt.Errorf("gen wordcount %s: %w", out, err)
		}
		summary = fmt.Sprintf("%d %s (%s)", files, plural(files, "file", "files"), formatSize(n))
	case "spamcount":
		files, n, err := generateDir(ctx, out, func(dir string) error { return spamcount.Generate(dir, f.messages, f.seed) })
		if err != nil {
			return fmt.Errorf("gen spamcount %s: %w", out, err)
		}
		summary = fmt.Sprintf("%d %s (%s)", files, plural(files, "message", "messages"), formatSize(n))
	case "histogram":
		width, height := histogram.SizeFor(size)
		n, err := generateFile(ctx, out, func(w io.Writer) error { return histogram.GenerateBytes(w, size, f.seed) })
		if err != nil {
			return fmt.Errorf("gen histogram %s: %w", out, err)
		}
		summary = fmt.Sprintf("a %d×%d image (%s)", width, height, formatSize(n))
	case "linreg":
		n, err := generateFile(ctx, out, func(w io.Writer) error { return linreg.Generate(w, points, f.inputFormat, f.seed) })
		if err != nil {
			return fmt.Errorf("gen linreg %s: %w", out, err)
		}
		summary = fmt.Sprintf("%d %s (%s, %s)", points, plural(int(points), "point", "points"), formatSize(n), f.inputFormat)
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "gen: wrote %s to %s\n", summary, out)
	}
	return nil
}

// linregPoints is the number of points to generate: --points, or --size
// divided by the record size.
func (f *genFlags) linregPoints(sizeSet, pointsSet bool, size int64) (int64, error) {
	var rec int64
	switch f.inputFormat {
	case "int8":
		rec = 2
	case "f64":
		rec = 16
	case "csv":
	default:
		return 0, usagef("gen linreg: --input-format %q: want int8, f64 or csv", f.inputFormat)
	}
	switch {
	case sizeSet && pointsSet:
		return 0, usagef("gen linreg: give --size or --points, not both")
	case sizeSet && rec == 0:
		return 0, usagef("gen linreg: --size needs fixed-size records (int8 or f64); use --points with csv")
	case sizeSet:
		return size / rec, nil
	case f.points < 0:
		return 0, usagef("gen linreg: --points %d: must not be negative", f.points)
	}
	return f.points, nil
}

// checkGenOutput refuses to overwrite: OUTPUT must not exist, or be an
// empty directory for a directory output, unless force.
func checkGenOutput(app, out string, dir, force bool) error {
	fi, err := os.Stat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("gen %s: %w", app, err)
	case !dir && fi.IsDir():
		return usagef("gen %s: OUTPUT %s is a directory; %s writes one file", app, out, app)
	case dir && !fi.IsDir():
		return usagef("gen %s: OUTPUT %s is not a directory; %s writes a directory of files", app, out, app)
	case force:
		return nil
	case !dir:
		return usagef("gen %s: %s exists (--force replaces it)", app, out)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return fmt.Errorf("gen %s: %w", app, err)
	}
	if len(entries) > 0 {
		return usagef("gen %s: directory %s is not empty (--force writes into it)", app, out)
	}
	return nil
}

// generateFile writes out with gen through writeFileAtomic, creating its
// directory if needed, and returns the bytes written. Writes fail once ctx
// is cancelled, so an interrupted generation stops at its next write and
// leaves no file.
func generateFile(ctx context.Context, out string, gen func(w io.Writer) error) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return 0, err
	}
	var n int64
	err := writeFileAtomic(ctx, out, func(w io.Writer) error {
		cw := &ctxWriter{ctx: ctx, w: w}
		err := gen(cw)
		n = cw.n
		return err
	})
	return n, err
}

// ctxWriter counts the bytes written to w and fails once ctx is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
	n   int64
}

func (c *ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// generateDir runs gen on a new hidden directory next to out, and moves
// what it wrote into out (created if needed) when it succeeds, replacing
// entries of out of the same names. It returns the number of files and
// bytes written. A failed or interrupted generation leaves nothing behind.
//
// The library generators take no context. When ctx is cancelled,
// generateDir renames the staging directory away and puts a plain file in
// its place, so that the generator fails when it opens its next file (the
// one it is writing is unlinked), waits for it, and removes what it wrote.
func generateDir(ctx context.Context, out string, gen func(dir string) error) (files int, bytes int64, err error) {
	parent, base := filepath.Split(filepath.Clean(out))
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return 0, 0, err
	}
	stage, err := os.MkdirTemp(parent, "."+base+".tmp*")
	if err != nil {
		return 0, 0, err
	}
	if err := os.Chmod(stage, 0o777&^umask()); err != nil { // not MkdirTemp's 0700: stage may become out
		os.Remove(stage)
		return 0, 0, err
	}
	done := make(chan error, 1)
	go func() { done <- gen(stage) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		trash := stage + ".cancelled"
		if os.Rename(stage, trash) == nil {
			if blocker, err := os.OpenFile(stage, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
				blocker.Close()
			}
			os.RemoveAll(trash)
			<-done
			os.RemoveAll(trash)
			os.Remove(stage)
		} else {
			<-done
			os.RemoveAll(stage)
		}
		return 0, 0, ctx.Err()
	}
	if err == nil {
		files, bytes, err = treeSize(stage)
	}
	if err == nil {
		err = moveInto(stage, out)
	}
	if err != nil {
		os.RemoveAll(stage)
		return 0, 0, err
	}
	return files, bytes, nil
}

// treeSize returns the number of regular files under dir and their bytes.
func treeSize(dir string) (files int, bytes int64, err error) {
	list, _, err := mr.ListFiles(context.Background(), []string{dir}, mr.ListOptions{})
	for _, f := range list {
		bytes += f.Size
	}
	return len(list), bytes, err
}

// moveInto moves the directory stage to out: by renaming it if out does
// not exist, else entry by entry, replacing entries of out of the same
// names. stage is gone when it returns nil.
func moveInto(stage, out string) error {
	if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(stage, out)
	}
	entries, err := os.ReadDir(stage)
	if err != nil {
		return err
	}
	for _, e := range entries {
		dst := filepath.Join(out, e.Name())
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(stage, e.Name()), dst); err != nil {
			return err
		}
	}
	return os.Remove(stage)
}

// formatSize formats a file size for a summary: 512 bytes, 12.3 MB.
func formatSize(n int64) string {
	if n < 1_000_000 {
		return fmt.Sprintf("%d %s", n, plural(int(n), "byte", "bytes"))
	}
	return formatBytes(float64(n))
}
