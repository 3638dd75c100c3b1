package main

import (
	"bytes"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/mr"
)

func TestRenderProgress(t *testing.T) {
	const mb = 1_000_000
	for _, tc := range []struct {
		name                              string
		files, bytes, totalFiles, totalBy int64
		elapsed                           time.Duration
		width                             int
		want                              string
	}{
		{"zero", 0, 0, 40, 456_700_000, 0, 80,
			"[             ]   0%  0.0 MB/456.7 MB  0/40 files  0.0 MB/s  ETA --"},
		{"partial", 12, 123_400_000, 40, 456_700_000, 1250 * time.Millisecond, 80,
			"[===>         ]  27%  123.4 MB/456.7 MB  12/40 files  98.7 MB/s  ETA 4s"},
		{"done", 40, 456_700_000, 40, 456_700_000, 4 * time.Second, 80,
			"[=============] 100%  456.7 MB/456.7 MB  40/40 files  114.2 MB/s  ETA 0s"},
		{"almost done is not 100%", 39, 456_699_999, 40, 456_700_000, 4 * time.Second, 80,
			"[============>]  99%  456.7 MB/456.7 MB  39/40 files  114.2 MB/s  ETA 1s"},
		{"totals unknown", 3, 123_400_000, 0, 0, 2 * time.Second, 80,
			"123.4 MB  61.7 MB/s"},
		{"nothing yet", 0, 0, 0, 0, 0, 80,
			"0.0 MB  0.0 MB/s"},
		{"minutes", 1, 10 * mb, 100, 10_000 * mb, 10 * time.Second, 80,
			"[           ]   0%  10.0 MB/10.0 GB  1/100 files  1.0 MB/s  ETA 2h46m"},
		{"narrow drops files and ETA", 12, 123_400_000, 40, 456_700_000, 1250 * time.Millisecond, 60,
			"[=====>             ]  27%  123.4 MB/456.7 MB  98.7 MB/s"},
		{"narrower", 12, 123_400_000, 40, 456_700_000, 1250 * time.Millisecond, 40,
			"[==>        ]  27%  123.4 MB/456.7 MB"},
		{"bar and percent only", 12, 123_400_000, 40, 456_700_000, 1250 * time.Millisecond, 20,
			"[==>       ]  27%"},
		{"percent only", 12, 123_400_000, 40, 456_700_000, 1250 * time.Millisecond, 10, "27%"},
		{"too narrow for anything", 12, 123_400_000, 40, 456_700_000, time.Second, 1, ""},
		{"wide terminal caps the bar", 12, 123_400_000, 40, 456_700_000, 1250 * time.Millisecond, 200,
			"[=============>                                    ]  27%  123.4 MB/456.7 MB  12/40 files  98.7 MB/s  ETA 4s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := renderProgress(tc.files, tc.bytes, tc.totalFiles, tc.totalBy, tc.elapsed, tc.width, "files")
			if got != tc.want {
				t.Errorf("renderProgress(%d, %d, %d, %d, %v, %d) =\n%q; want\n%q",
					tc.files, tc.bytes, tc.totalFiles, tc.totalBy, tc.elapsed, tc.width, got, tc.want)
			}
		})
	}
}

// TestRenderProgressFits checks every line fits its width, with huge and
// odd numbers too, and the bar keeps its width while the figures change.
func TestRenderProgressFits(t *testing.T) {
	big := int64(math.MaxInt64)
	cases := [][4]int64{
		{0, 0, 0, 0}, {1, 1, 1, 1}, {big / 2, big / 2, big, big}, {big, big, big, big},
		{5, 700, 3, 500}, // more than the totals
		{-1, -1, 10, 10}, {1 << 40, 1 << 50, 1 << 41, 1 << 51},
	}
	for _, width := range []int{0, 1, 2, 5, 9, 20, 40, 60, 79, 80, 120, 300} {
		for _, c := range cases {
			for _, el := range []time.Duration{0, time.Nanosecond, time.Second, 1000 * time.Hour} {
				for _, unit := range []string{"files", "images", "messages"} {
					s := renderProgress(c[0], c[1], c[2], c[3], el, width, unit)
					if len(s) > max(width-3, 0) || strings.ContainsAny(s, "\r\n\x1b") {
						t.Errorf("renderProgress(%v, %v, width %d, %s) = %q (%d bytes): does not fit", c, el, width, unit, s, len(s))
					}
				}
			}
		}
	}
	// The bar's width does not follow the figures.
	barWidth := func(s string) int { return strings.IndexByte(s, ']') }
	w0 := barWidth(renderProgress(1, 1_000_000, 40, 456_700_000, time.Second, 80, "files"))
	for _, b := range []int64{5_000_000, 99_000_000, 300_000_000, 456_700_000} {
		if w := barWidth(renderProgress(39, b, 40, 456_700_000, 3*time.Second, 80, "files")); w != w0 {
			t.Errorf("bar ends at %d at %d bytes, at %d at the start", w, b, w0)
		}
	}
}

func TestFormatETA(t *testing.T) {
	for secs, want := range map[float64]string{
		0: "0s", 0.2: "1s", 59: "59s", 60: "1m00s", 245: "4m05s", 3600: "1h00m", 7620: "2h07m",
		1e7: ">999h", math.Inf(1): ">999h", math.NaN(): "--", -1: "--",
	} {
		if got := formatETA(secs); got != want {
			t.Errorf("formatETA(%v) = %q; want %q", secs, got, want)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestStartProgress(t *testing.T) {
	var (
		buf syncBuffer
		p   mr.Progress
	)
	stop := startProgress(&buf, &p, "images")
	p.SetTotal(4, 4_000_000)
	// Report progress until at least two frames with different figures
	// have been drawn.
	deadline := time.Now().Add(10 * time.Second)
	for frames(buf.String()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than 2 frames after 10s: %q", buf.String())
		}
		p.Add(1, 1_000_000)
		time.Sleep(progressInterval)
	}
	stop()
	stop() // idempotent
	out := buf.String()
	if !strings.HasSuffix(out, "\r\x1b[K") || strings.HasSuffix(out, "\r\x1b[K\r\x1b[K") {
		t.Fatalf("output does not end with one clear sequence: %q", out)
	}
	if !strings.Contains(out, " images ") || !strings.Contains(out, "%") {
		t.Errorf("no bar with images in %q", out)
	}
	time.Sleep(2 * progressInterval)
	if after := buf.String(); after != out {
		t.Errorf("drawn after stop: %q", after[len(out):])
	}
}

// frames counts the distinct bar frames ("\r" line "\x1b[K") in out.
func frames(out string) int {
	seen := map[string]bool{}
	for _, s := range strings.Split(out, "\r") {
		if line, ok := strings.CutSuffix(s, "\x1b[K"); ok && line != "" {
			seen[line] = true
		}
	}
	return len(seen)
}
