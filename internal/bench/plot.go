package bench

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// The charts are drawn here on a small canvas of lines, filled shapes and
// text with two backends, SVG text and a PNG image, rather than with a
// plotting library: the one pgasmr used before (gonum.org/v1/plot) cost
// every mrrun process about a millisecond of package initialisation, most
// of a small job's start-up, for a command few runs use.

// benchSeries is one line of the bench charts: one app in one mode over
// the rank counts, or one baseline (a single point at its rank count).
type benchSeries struct {
	label    string
	baseline string
	points   []Result // sorted by ranks
}

// benchSeriesOf groups results into series, in the order of results.
func benchSeriesOf(results []Result) []benchSeries {
	var out []benchSeries
	index := map[string]int{}
	for _, r := range results {
		label := r.Config() + " (baseline)"
		if r.Baseline == "" {
			label = fmt.Sprintf("pgasmr %s [%s map", r.Mode, r.Map)
			if r.Map == "element" {
				label += ", " + r.Dist
			}
			label += ", gather " + r.Gather
			if !r.Collectives {
				label += ", no collectives"
			}
			label += "]"
		}
		i, ok := index[label]
		if !ok {
			i = len(out)
			index[label] = i
			out = append(out, benchSeries{label: label, baseline: r.Baseline})
		}
		out[i].points = append(out[i].points, r)
	}
	for i := range out {
		slices.SortStableFunc(out[i].points, func(a, b Result) int { return a.Ranks - b.Ranks })
	}
	return out
}

// benchColors are the series colours (Tableau 10, then darker tones),
// cycled with the marker shapes when there are more series.
var benchColors = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	{188, 189, 34, 255}, {23, 190, 207, 255}, {0, 0, 0, 255}, {0, 0, 128, 255},
}

// Marker shapes.
const (
	circle = iota
	square
	triangle
	diamond
	triangleDown
	hexagon
	glyphs // how many
)

// Chart geometry, in pixels: per app, a row of two charts and the legend
// on the right.
const (
	benchChartW   = 520
	benchRowH     = 360
	benchPlotPad  = 12
	benchMaxPlots = 64 // rows; beyond that the image would be unreadable
	charW         = 7  // the width of a character of the text (basicfont's 7x13)
)

var (
	black = color.RGBA{0, 0, 0, 255}
	white = color.RGBA{255, 255, 255, 255}
	grid  = color.RGBA{225, 225, 225, 255}
	grey  = color.RGBA{160, 160, 160, 255}
)

// WritePlot draws results to w as format ("png" or "svg"): per app a
// row of two charts, throughput (MB/s) and speed-up against seq against
// the rank count, with one series per configuration (mode; the baselines
// as dashed horizontal reference lines with a marker at their rank count)
// and the row's legend on the right.
func WritePlot(w io.Writer, format string, results []Result) error {
	if len(results) == 0 {
		return fmt.Errorf("no results to plot")
	}
	if format != "png" && format != "svg" {
		return fmt.Errorf("plot format %q: want png or svg", format)
	}
	var appNames []string
	byApp := map[string][]Result{}
	for _, r := range results {
		if _, ok := byApp[r.App]; !ok {
			appNames = append(appNames, r.App)
		}
		byApp[r.App] = append(byApp[r.App], r)
	}
	if len(appNames) > benchMaxPlots {
		return fmt.Errorf("%d apps: too many to plot (at most %d)", len(appNames), benchMaxPlots)
	}
	legendW := 0
	for _, name := range appNames {
		for _, s := range benchSeriesOf(byApp[name]) {
			legendW = max(legendW, len(s.label))
		}
	}
	legendW = max(legendW, len(idealLabel))*charW + 60
	width, height := 2*benchChartW+legendW, benchRowH*len(appNames)

	var c canvas
	var svg *svgCanvas
	var img *imageCanvas
	if format == "svg" {
		svg = newSVGCanvas(width, height)
		c = svg
	} else {
		img = newImageCanvas(width, height)
		c = img
	}
	for i, name := range appNames {
		top := float64(benchRowH * i)
		if err := benchRow(c, top, name, byApp[name]); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if svg != nil {
		return svg.writeTo(w)
	}
	return png.Encode(w, img.img)
}

const idealLabel = "ideal (speed-up = ranks)"

// chartLine is a series as one chart draws it: its line and its markers,
// in data coordinates.
type chartLine struct {
	line, marks []point
	color       color.RGBA
	glyph       int
	dashed      bool
}

// benchRow draws one app's throughput and speed-up charts and their
// legend in the row that starts at top.
func benchRow(c canvas, top float64, app string, results []Result) error {
	series := benchSeriesOf(results)
	var rankTicks []int
	maxMB, maxSpd := 0.0, 1.0
	for _, r := range results {
		rankTicks = append(rankTicks, r.Ranks)
		maxMB, maxSpd = max(maxMB, r.MBPerS), max(maxSpd, r.SpeedupVsSeq)
	}
	slices.Sort(rankTicks)
	rankTicks = slices.Compact(rankTicks)
	lo, hi := float64(rankTicks[0]), float64(rankTicks[len(rankTicks)-1])
	if lo <= 0 {
		return fmt.Errorf("rank count %v: want at least 1", lo)
	}
	var thr, spd []chartLine
	for i, s := range series {
		clr := benchColors[i%len(benchColors)]
		glyph := (i/len(benchColors) + i) % glyphs
		dashed := false
		switch s.baseline {
		case "seq":
			glyph, dashed = square, true
		case "goroutines":
			glyph, dashed = triangleDown, true
		}
		for k := range 2 {
			y := func(r Result) float64 {
				if k == 0 {
					return r.MBPerS
				}
				return r.SpeedupVsSeq
			}
			l := chartLine{color: clr, glyph: glyph, dashed: dashed}
			for _, r := range s.points {
				l.marks = append(l.marks, point{float64(r.Ranks), y(r)})
			}
			l.line = l.marks
			if s.baseline != "" {
				// A baseline is one point: drawn as a reference line
				// across the chart.
				v := y(s.points[0])
				l.line = []point{{lo, v}, {hi, v}}
			}
			if k == 0 {
				thr = append(thr, l)
			} else {
				spd = append(spd, l)
			}
		}
	}
	ideal := chartLine{line: []point{{lo, lo}, {hi, hi}}, color: grey, glyph: -1, dashed: true}
	spd = append([]chartLine{ideal}, spd...)

	ax := axes{ticks: rankTicks, logX: hi/lo >= 8, lo: lo, hi: hi}
	const xlabel = "ranks (baselines: seq 1, goroutines GOMAXPROCS)"
	ax.draw(c, 0, top, app+": throughput", xlabel, "MB/s (10^6 input bytes per second)", maxMB, thr)
	ax.draw(c, benchChartW, top, app+": speed-up against seq", xlabel, "speed-up (seq median / median)", max(maxSpd, hi), spd)

	// The legend.
	x, y := float64(2*benchChartW+benchPlotPad), top+40
	entry := func(label string, l chartLine) {
		c.polyline([]point{{x, y - 4}, {x + 34, y - 4}}, l.color, 1.5, l.dashed)
		if l.glyph >= 0 {
			c.polygon(marker(point{x + 17, y - 4}, l.glyph, 4), l.color)
		}
		c.text(x+42, y, label, anchorStart, false)
		y += 20
	}
	for i, s := range series {
		entry(s.label, thr[i])
	}
	entry(idealLabel, ideal)
	return nil
}

// axes are the x axis a row's charts share: the rank counts, on a log
// scale when they span a factor of 8 or more.
type axes struct {
	ticks  []int
	logX   bool
	lo, hi float64
}

// draw draws a chart in the box of one chart width and one row height at
// (left, top): frame, grid, ticks, labels and lines.
func (a axes) draw(c canvas, left, top float64, title, xlabel, ylabel string, ymax float64, lines []chartLine) {
	const ml, mr, mt, mb = 78, 16, 30, 52
	x0, x1 := left+ml, left+benchChartW-mr
	y0, y1 := top+benchRowH-mb, top+mt // y grows downwards
	xmin, xmax := a.lo-max(0.25, (a.hi-a.lo)*0.05), a.hi+max(0.25, (a.hi-a.lo)*0.05)
	tx := func(v float64) float64 { return v }
	if a.logX {
		xmin, xmax, tx = a.lo/1.2, a.hi*1.2, math.Log
	}
	ytop := ymax * 1.1
	if !(ytop > 0) || math.IsInf(ytop, 0) {
		ytop = 1
	}
	px := func(p point) point {
		return point{x0 + (tx(p.X)-tx(xmin))/(tx(xmax)-tx(xmin))*(x1-x0), y0 - p.Y/ytop*(y0-y1)}
	}
	c.text((x0+x1)/2, top+18, title, anchorMiddle, false)
	for _, tk := range (niceTicks{}).Ticks(0, ytop) {
		y := y0 - tk.Value/ytop*(y0-y1)
		c.polyline([]point{{x0, y}, {x1, y}}, grid, 1, false)
		c.text(x0-6, y+4, tk.Label, anchorEnd, false)
	}
	for _, n := range a.ticks {
		x := px(point{float64(n), 0}).X
		c.polyline([]point{{x, y0}, {x, y1}}, grid, 1, false)
		c.text(x, y0+16, strconv.Itoa(n), anchorMiddle, false)
	}
	c.polyline([]point{{x0, y1}, {x0, y0}, {x1, y0}}, black, 1, false)
	c.text((x0+x1)/2, y0+38, xlabel, anchorMiddle, false)
	c.text(left+16, (y0+y1)/2, ylabel, anchorMiddle, true)
	for _, l := range lines {
		pts := make([]point, len(l.line))
		for i, p := range l.line {
			pts[i] = px(p)
		}
		c.polyline(pts, l.color, 1.5, l.dashed)
		if l.glyph >= 0 {
			for _, p := range l.marks {
				c.polygon(marker(px(p), l.glyph, 4), l.color)
			}
		}
	}
}

// marker returns the outline of a marker shape of radius r at p.
func marker(p point, glyph int, r float64) []point {
	poly := func(n int, phase float64) []point {
		pts := make([]point, n)
		for i := range n {
			a := phase + 2*math.Pi*float64(i)/float64(n)
			pts[i] = point{p.X + r*math.Cos(a), p.Y + r*math.Sin(a)}
		}
		return pts
	}
	switch glyph {
	case square:
		return []point{{p.X - r, p.Y - r}, {p.X + r, p.Y - r}, {p.X + r, p.Y + r}, {p.X - r, p.Y + r}}
	case triangle:
		return poly(3, -math.Pi/2)
	case diamond:
		return poly(4, 0)
	case triangleDown:
		return poly(3, math.Pi/2)
	case hexagon:
		return poly(6, 0)
	}
	return poly(16, 0)
}

// niceTicks marks about five round values (steps of 1, 2, 2.5 or 5 times
// a power of ten) between min and max, labelled with as many decimals as
// the step needs.
type niceTicks struct{}

type tick struct {
	Value float64
	Label string
}

func (niceTicks) Ticks(lo, hi float64) []tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step, decimals := 10*mag, 0
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if d := -math.Floor(math.Log10(step)); d > 0 {
		decimals = int(d)
	}
	if s := strconv.FormatFloat(step, 'f', decimals, 64); s != strconv.FormatFloat(step, 'f', -1, 64) {
		decimals++ // 2.5 × 10^k
	}
	var ticks []tick
	for k := math.Ceil(lo / step); k*step <= hi+step*1e-9; k++ {
		v := k * step
		ticks = append(ticks, tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
	}
	return ticks
}

// point is a position: in data units, or in pixels from the top left.
type point struct{ X, Y float64 }

type anchor int

const (
	anchorStart anchor = iota
	anchorMiddle
	anchorEnd
)

// A canvas draws lines, filled polygons and black text, in pixels.
type canvas interface {
	polyline(pts []point, c color.RGBA, width float64, dashed bool)
	polygon(pts []point, c color.RGBA)
	// text draws s with its baseline at y, anchored at x; vertical
	// text reads upwards, centred on (x, y).
	text(x, y float64, s string, a anchor, vertical bool)
}

// svgCanvas writes SVG elements.
type svgCanvas struct {
	b    strings.Builder
	w, h int
}

func newSVGCanvas(w, h int) *svgCanvas {
	c := &svgCanvas{w: w, h: h}
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", w, h, w, h)
	fmt.Fprintf(&c.b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	return c
}

func svgColor(c color.RGBA) string { return fmt.Sprintf("rgb(%d,%d,%d)", c.R, c.G, c.B) }

func svgPoints(pts []point) string {
	var b strings.Builder
	for i, p := range pts {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f,%.1f", p.X, p.Y)
	}
	return b.String()
}

func (c *svgCanvas) polyline(pts []point, clr color.RGBA, width float64, dashed bool) {
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="6,4"`
	}
	fmt.Fprintf(&c.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%.1f"%s/>`+"\n", svgPoints(pts), svgColor(clr), width, dash)
}

func (c *svgCanvas) polygon(pts []point, clr color.RGBA) {
	fmt.Fprintf(&c.b, `<polygon points="%s" fill="%s"/>`+"\n", svgPoints(pts), svgColor(clr))
}

func (c *svgCanvas) text(x, y float64, s string, a anchor, vertical bool) {
	anchors := [...]string{"start", "middle", "end"}
	rot := ""
	if vertical {
		rot = fmt.Sprintf(` transform="rotate(-90 %.1f %.1f)"`, x, y)
	}
	var esc strings.Builder
	xmlEscape(&esc, s)
	fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" font-family="sans-serif" font-size="12" text-anchor="%s"%s>%s</text>`+"\n",
		x, y, anchors[a], rot, esc.String())
}

func xmlEscape(b *strings.Builder, s string) {
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteRune(r)
		}
	}
}

func (c *svgCanvas) writeTo(w io.Writer) error {
	c.b.WriteString("</svg>\n")
	_, err := io.WriteString(w, c.b.String())
	return err
}

// imageCanvas draws on an RGBA image: shapes anti-aliased with a vector
// rasterizer, text in basicfont's 7x13 face.
type imageCanvas struct {
	img *image.RGBA
	r   *vector.Rasterizer
}

func newImageCanvas(w, h int) *imageCanvas {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	return &imageCanvas{img: img, r: vector.NewRasterizer(w, h)}
}

func (c *imageCanvas) polygon(pts []point, clr color.RGBA) {
	if len(pts) < 3 {
		return
	}
	b := c.img.Bounds()
	c.r.Reset(b.Dx(), b.Dy())
	c.r.MoveTo(float32(pts[0].X), float32(pts[0].Y))
	for _, p := range pts[1:] {
		c.r.LineTo(float32(p.X), float32(p.Y))
	}
	c.r.ClosePath()
	c.r.Draw(c.img, b, image.NewUniform(clr), image.Point{})
}

// polyline draws each segment (or each dash of it) as a thin rectangle.
func (c *imageCanvas) polyline(pts []point, clr color.RGBA, width float64, dashed bool) {
	const on, off = 6, 4
	phase := 0.0
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		dx, dy := b.X-a.X, b.Y-a.Y
		n := math.Hypot(dx, dy)
		if n == 0 {
			continue
		}
		ux, uy := dx/n, dy/n
		seg := func(s, e float64) {
			nx, ny := -uy*width/2, ux*width/2
			p, q := point{a.X + ux*s, a.Y + uy*s}, point{a.X + ux*e, a.Y + uy*e}
			c.polygon([]point{{p.X + nx, p.Y + ny}, {q.X + nx, q.Y + ny}, {q.X - nx, q.Y - ny}, {p.X - nx, p.Y - ny}}, clr)
		}
		if !dashed {
			seg(0, n)
			continue
		}
		for s := 0.0; s < n; {
			in := math.Mod(phase, on+off)
			if in < on {
				e := min(n, s+on-in)
				seg(s, e)
				phase += e - s
				s = e
			} else {
				e := min(n, s+on+off-in)
				phase += e - s
				s = e
			}
		}
	}
}

func (c *imageCanvas) text(x, y float64, s string, a anchor, vertical bool) {
	face := basicfont.Face7x13
	w := font.MeasureString(face, s).Ceil()
	if !vertical {
		switch a {
		case anchorMiddle:
			x -= float64(w) / 2
		case anchorEnd:
			x -= float64(w)
		}
		d := font.Drawer{Dst: c.img, Src: image.NewUniform(black), Face: face, Dot: fixed.P(int(x), int(y))}
		d.DrawString(s)
		return
	}
	// Draw the text flat on a scratch image, then copy it turned a
	// quarter left, centred on (x, y).
	h := face.Height
	tmp := image.NewAlpha(image.Rect(0, 0, w, h))
	d := font.Drawer{Dst: tmp, Src: image.Opaque, Face: face, Dot: fixed.P(0, face.Ascent)}
	d.DrawString(s)
	ox, oy := int(x)-h/2, int(y)+w/2
	for ty := range h {
		for tx := range w {
			if tmp.AlphaAt(tx, ty).A > 127 {
				c.img.SetRGBA(ox+ty, oy-tx, black)
			}
		}
	}
}
