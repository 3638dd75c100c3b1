package linreg

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
)

// Point is one input point.
type Point struct{ X, Y float64 }

// Sample reads up to max points spread evenly over the files (by byte
// offset, files in order): for each of max evenly spaced offsets, the
// record there, or for CSV the first point on a line starting at or after
// it. It reads max small pieces, never whole files. Bad records are
// errors as in Run.
func Sample(ctx context.Context, files []string, format string, max int) ([]Point, error) {
	f, err := parseFormat(format)
	if err != nil {
		return nil, err
	}
	if _, err := inputChunks(files, f, DefaultChunkBytes); err != nil { // checks record sizes
		return nil, err
	}
	sizes := make([]int64, len(files))
	var total int64
	for i, path := range files {
		if sizes[i], err = fileSize(path); err != nil {
			return nil, err
		}
		total += sizes[i]
	}
	if total == 0 || max <= 0 {
		return nil, nil
	}
	rec := recordSize(f)
	var pts []Point
	var buf [16]byte
	rd := newReader(f)
	for k := range int64(max) {
		if err := ctx.Err(); err != nil {
			return pts, fmt.Errorf("linreg: sampling: %w", err)
		}
		g := int64(float64(k) / float64(max) * float64(total))
		i := 0
		for g >= sizes[i] {
			g -= sizes[i]
			i++
		}
		path := files[i]
		if rec > 0 {
			off := g / rec * rec
			p, err := readAt(path, buf[:rec], off)
			if err != nil {
				return pts, err
			}
			if f == fmtInt8 {
				pts = append(pts, Point{float64(int8(p[0])), float64(int8(p[1]))})
				continue
			}
			var s Sums
			if j := sumF64(&s, p); j >= 0 {
				return pts, fmt.Errorf("linreg: %s: point at offset %d: %s is not finite", path, off, []string{"x", "y"}[j/8])
			}
			pts = append(pts, Point{s.FX, s.FY})
			continue
		}
		p, ok, err := rd.csvPoint(path, g)
		if err != nil {
			return pts, err
		}
		if ok {
			pts = append(pts, p)
		}
	}
	return pts, nil
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("linreg: %w", err)
	}
	return fi.Size(), nil
}

func readAt(path string, p []byte, off int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("linreg: %w", err)
	}
	defer f.Close()
	if _, err := f.ReadAt(p, off); err != nil {
		return nil, fmt.Errorf("linreg: %s: reading %d bytes at offset %d: %w", path, len(p), off, err)
	}
	return p, nil
}

// csvPoint returns the first point on a line of path starting at or after
// off, if any.
func (rd *reader) csvPoint(path string, off int64) (Point, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return Point{}, false, fmt.Errorf("linreg: %w", err)
	}
	defer f.Close()
	start := max(off-1, 0)
	if rd.br == nil {
		rd.br = bufio.NewReaderSize(nil, 64<<10)
	}
	rd.br.Reset(io.NewSectionReader(f, start, math.MaxInt64-start))
	pos := start
	if off > 0 {
		n, _, err := rd.readLine(false)
		if err != nil && !errors.Is(err, io.EOF) {
			return Point{}, false, fmt.Errorf("linreg: %s: reading at offset %d: %w", path, pos, err)
		}
		pos += int64(n)
	}
	for {
		n, line, err := rd.readLine(true)
		if err != nil && !errors.Is(err, io.EOF) {
			return Point{}, false, fmt.Errorf("linreg: %s: reading at offset %d: %w", path, pos, err)
		}
		if n == 0 {
			return Point{}, false, nil
		}
		var s Sums
		if perr := parsePoint(&s, line, pos == 0); perr != nil {
			return Point{}, false, fmt.Errorf("linreg: %s:%s (offset %d): %w", path, lineNumber(path, pos), pos, perr)
		}
		if s.N == 1 {
			return Point{s.FX, s.FY}, true, nil
		}
		pos += int64(n)
	}
}

// PNG size and colours.
const (
	pngW, pngH, pngMargin = 640, 480, 20
)

var (
	pngPoint = color.RGBA{40, 80, 160, 255}
	pngLine  = color.RGBA{200, 30, 30, 255}
	pngAxis  = color.RGBA{160, 160, 160, 255}
)

// PNG draws the sample points (blue) and the fitted line (red) in a
// 640×480 image whose axes span the points' range; a grey frame marks the
// plot area and grey lines the axes x = 0 and y = 0 when in range. The
// same result and sample give the same bytes.
func (r *Result) PNG(w io.Writer, sample []Point) error {
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, p := range sample {
		x0, x1, y0, y1 = min(x0, p.X), max(x1, p.X), min(y0, p.Y), max(y1, p.Y)
	}
	if len(sample) == 0 {
		x0, x1 = -1, 1
		y0, y1 = r.Intercept-r.Slope, r.Intercept+r.Slope
	}
	for _, xe := range []float64{x0, x1} { // keep the line's ends in view
		y := r.Slope*xe + r.Intercept
		y0, y1 = min(y0, y), max(y1, y)
	}
	if x1 <= x0 {
		x0, x1 = x0-1, x1+1
	}
	if y1 <= y0 {
		y0, y1 = y0-1, y1+1
	}
	img := image.NewRGBA(image.Rect(0, 0, pngW, pngH))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	pw, ph := float64(pngW-2*pngMargin-1), float64(pngH-2*pngMargin-1)
	px := func(x float64) int { return pngMargin + int(math.Round((x-x0)/(x1-x0)*pw)) }
	py := func(y float64) int { return pngH - 1 - pngMargin - int(math.Round((y-y0)/(y1-y0)*ph)) }
	hline := func(y, xa, xb int, c color.RGBA) {
		for x := xa; x <= xb; x++ {
			img.SetRGBA(x, y, c)
		}
	}
	vline := func(x, ya, yb int, c color.RGBA) {
		for y := min(ya, yb); y <= max(ya, yb); y++ {
			img.SetRGBA(x, y, c)
		}
	}
	l, rt, t, b := pngMargin, pngW-1-pngMargin, pngMargin, pngH-1-pngMargin
	hline(t, l, rt, pngAxis)
	hline(b, l, rt, pngAxis)
	vline(l, t, b, pngAxis)
	vline(rt, t, b, pngAxis)
	if x0 < 0 && x1 > 0 {
		vline(px(0), t, b, pngAxis)
	}
	if y0 < 0 && y1 > 0 {
		hline(py(0), l, rt, pngAxis)
	}
	for _, p := range sample {
		x, y := px(p.X), py(p.Y)
		for dx := range 2 {
			for dy := range 2 {
				img.SetRGBA(x+dx, y-dy, pngPoint)
			}
		}
	}
	// The line: one segment per pixel column, clipped to the plot area.
	clip := func(y int) int { return max(t, min(b, y)) }
	prev := clip(py(r.Slope*x0 + r.Intercept))
	for x := l; x <= rt; x++ {
		xv := x0 + float64(x-l)/pw*(x1-x0)
		y := clip(py(r.Slope*xv + r.Intercept))
		vline(x, prev, y, pngLine)
		prev = y
	}
	if err := png.Encode(w, img); err != nil {
		return fmt.Errorf("linreg: writing png: %w", err)
	}
	return nil
}
