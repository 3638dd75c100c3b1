package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pgasmr/pgasmr/mr"
	"golang.org/x/term"
)

// progressInterval is how often the bar is redrawn.
const progressInterval = 150 * time.Millisecond

// Terminal control: return to the start of the line, erase to its end.
const (
	lineStart = "\r"
	eraseLine = "\x1b[K"
	clearLine = lineStart + eraseLine
)

// startProgress draws a one-line progress bar for p on w, redrawn every
// progressInterval, until the returned function is called. stop stops the
// drawing goroutine, waits for it and clears the line, so that no bar is
// left on the screen; it may be called more than once. w is written only by
// that goroutine and by stop, never concurrently. unit names what p counts
// as files ("files", "images", "messages").
func startProgress(w io.Writer, p *mr.Progress, unit string) (stop func()) {
	t0 := time.Now()
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(progressInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			files, bytes, totalFiles, totalBytes := p.Snapshot()
			line := renderProgress(files, bytes, totalFiles, totalBytes, time.Since(t0), progressWidth(w), unit)
			if _, err := io.WriteString(w, lineStart+line+eraseLine); err != nil {
				return // stderr is gone: nothing to draw on
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-exited
			io.WriteString(w, clearLine) // best effort, like every write to stderr
		})
	}
}

// progressWidth is the width of the line to draw on w: the terminal's
// width if w is a terminal, else 80 columns.
func progressWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}

// The narrowest bar worth drawing and the widest, brackets excluded.
const minBar, maxBar = 10, 50

// renderProgress returns the progress line for files and bytes consumed of
// totalFiles and totalBytes (0: not known yet) after elapsed, at most
// width-3 columns wide (so that neither the line nor the terminal's echo of
// a ^C after it wraps, which would leave the bar on the screen), for
// example
//
//	[=========>          ]  45%  123.4 MB/456.7 MB  12/40 files  98.7 MB/s  ETA 3s
//
// The rate and the ETA are the averages since the start. Before the totals
// are known it shows the bytes done and the rate only. When the width is
// short it drops, in this order, the file counts, the ETA, the rate, the
// bytes and then the bar.
func renderProgress(files, bytes, totalFiles, totalBytes int64, elapsed time.Duration, width int, unit string) string {
	width -= 3 // keep off the last column, and leave room for the tty's echo of ^C
	if width < 1 {
		return ""
	}
	secs := elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(max(bytes, 0)) / secs
	}
	rateField := formatBytes(rate) + "/s"
	if totalBytes <= 0 {
		return fitFields(width, formatBytes(float64(max(bytes, 0))), rateField)
	}
	frac := min(max(float64(bytes)/float64(totalBytes), 0), 1)
	pct := fmt.Sprintf("%3d%%", int(frac*100))
	if frac < 1 && int(frac*100) == 100 {
		pct = " 99%" // 100% only when done
	}
	bytesField := formatBytes(float64(max(bytes, 0))) + "/" + formatBytes(float64(totalBytes))
	filesField := ""
	if totalFiles > 0 {
		filesField = fmt.Sprintf("%d/%d %s", files, totalFiles, unit)
	}
	eta := "ETA --"
	switch {
	case frac >= 1:
		eta = "ETA 0s"
	case rate > 0:
		eta = "ETA " + formatETA(float64(totalBytes-bytes)/rate)
	}
	// Fields in display order, the widest each may get (so that the bar
	// keeps its width from frame to frame), and the order in which to drop
	// them.
	fields := []string{pct, bytesField, filesField, rateField, eta}
	widest := []int{4, len("999.9 MB/999.9 MB"), len(fmt.Sprintf("%d/%d %s", totalFiles, totalFiles, unit)),
		len("999.9 MB/s"), len("ETA 999h59m")}
	for _, drop := range []int{-1, 2, 4, 3, 1} {
		if drop >= 0 {
			fields[drop] = ""
		}
		text, room := joinFields(fields), 0
		for i, f := range fields {
			if f != "" {
				room += max(len(f), widest[i]) + 2
			}
		}
		// The line is "[" bar "] " text, bar+3+room-2 columns.
		if bar := min(width-room-1, maxBar); bar >= minBar {
			return drawBar(frac, bar) + " " + text
		}
	}
	return truncate(strings.TrimSpace(pct), width)
}

// fitFields joins the fields that fit in width, dropping them from the
// right.
func fitFields(width int, fields ...string) string {
	for n := len(fields); n > 0; n-- {
		if s := joinFields(fields[:n]); utf8.RuneCountInString(s) <= width {
			return s
		}
	}
	return truncate(fields[0], width)
}

// joinFields joins the non-empty fields with two spaces.
func joinFields(fields []string) string {
	var parts []string
	for _, f := range fields {
		if f != "" {
			parts = append(parts, f)
		}
	}
	return strings.Join(parts, "  ")
}

func truncate(s string, width int) string {
	if len(s) > width {
		return s[:width]
	}
	return s
}

// drawBar draws frac of a bar n cells wide, with the brackets:
// [=====>    ].
func drawBar(frac float64, n int) string {
	full := int(frac * float64(n))
	var b strings.Builder
	b.Grow(n + 2)
	b.WriteByte('[')
	b.WriteString(strings.Repeat("=", full))
	if full < n {
		if full > 0 {
			b.WriteByte('>')
			full++
		}
		b.WriteString(strings.Repeat(" ", n-full))
	}
	b.WriteByte(']')
	return b.String()
}

// formatBytes formats a byte count in SI units from MB up, so that the
// line does not jump between units early on: 0.0 MB, 123.4 MB, 1.2 GB.
func formatBytes(v float64) string {
	v /= 1e6
	for _, u := range []string{"MB", "GB", "TB", "PB"} {
		if v < 999.95 {
			return fmt.Sprintf("%.1f %s", v, u)
		}
		v /= 1000
	}
	return fmt.Sprintf("%.1f EB", v)
}

// formatETA formats a number of seconds: 3s, 4m05s, 2h07m, >999h.
func formatETA(secs float64) string {
	switch s := math.Ceil(secs); {
	case math.IsNaN(s) || s < 0:
		return "--"
	case s < 60:
		return fmt.Sprintf("%.0fs", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", int(s)/60, int(s)%60)
	case s < 1000*3600:
		return fmt.Sprintf("%dh%02dm", int(s)/3600, int(s)%3600/60)
	default:
		return ">999h"
	}
}
