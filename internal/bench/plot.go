package bench

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

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
// cycled with the glyph shapes when there are more series.
var benchColors = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	{188, 189, 34, 255}, {23, 190, 207, 255}, {0, 0, 0, 255}, {0, 0, 128, 255},
}

var benchGlyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.RingGlyph{},
	draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

// Chart geometry: per app, a row of two charts and the legend on the
// right.
const (
	benchChartW   = 5.2 * vg.Inch
	benchRowH     = 3.6 * vg.Inch
	benchPlotDPI  = 96
	benchPlotPad  = 8 * vg.Millimeter
	benchMaxPlots = 64 // rows; beyond that the image would be unreadable
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
	type row struct {
		thr, spd *plot.Plot
		legend   plot.Legend
	}
	rows := make([]row, len(appNames))
	legendW := vg.Inch
	for i, name := range appNames {
		r := &rows[i]
		var err error
		if r.thr, r.spd, r.legend, err = benchCharts(name, byApp[name]); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, s := range benchSeriesOf(byApp[name]) {
			legendW = max(legendW, r.legend.TextStyle.Width(s.label))
		}
	}
	legendW += rows[0].legend.ThumbnailWidth + benchPlotPad*2
	width := 2*benchChartW + legendW
	height := benchRowH * vg.Length(len(appNames))

	var (
		c  vg.CanvasSizer
		wt io.WriterTo
	)
	switch format {
	case "png":
		img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(benchPlotDPI),
			vgimg.UseBackgroundColor(color.White))
		c, wt = img, vgimg.PngCanvas{Canvas: img}
	case "svg":
		svg := vgsvg.NewWith(vgsvg.UseWH(width, height), vgsvg.EmbedFonts(false))
		c, wt = svg, svg
	default:
		return fmt.Errorf("plot format %q: want png or svg", format)
	}
	dc := draw.New(c)
	if format == "svg" {
		// vgimg fills its background itself; an SVG's is transparent.
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
	}
	for i, r := range rows {
		top := height - benchRowH*vg.Length(i)
		at := func(x0, x1 vg.Length) draw.Canvas {
			return draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x0 + benchPlotPad/2, Y: top - benchRowH + benchPlotPad/2},
				Max: vg.Point{X: x1 - benchPlotPad/2, Y: top - benchPlotPad/2}}}
		}
		r.thr.Draw(at(0, benchChartW))
		r.spd.Draw(at(benchChartW, 2*benchChartW))
		r.legend.Draw(at(2*benchChartW, width))
	}
	_, err := wt.WriteTo(w)
	return err
}

// benchCharts builds one app's throughput and speed-up charts and their
// legend.
func benchCharts(app string, results []Result) (thr, spd *plot.Plot, legend plot.Legend, err error) {
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
	logX := hi/lo >= 8

	newChart := func(title, ylabel string, ymax float64) *plot.Plot {
		p := plot.New()
		p.Title.Text = app + ": " + title
		p.X.Label.Text = "ranks (baselines: seq 1, goroutines GOMAXPROCS)"
		p.Y.Label.Text = ylabel
		ticks := make(plot.ConstantTicks, len(rankTicks))
		for i, n := range rankTicks {
			ticks[i] = plot.Tick{Value: float64(n), Label: strconv.Itoa(n)}
		}
		p.X.Tick.Marker = ticks
		if logX {
			p.X.Scale = plot.LogScale{}
			p.X.Min, p.X.Max = lo/1.2, hi*1.2
		} else {
			pad := max(0.25, (hi-lo)*0.05)
			p.X.Min, p.X.Max = lo-pad, hi+pad
		}
		p.Y.Min, p.Y.Max = 0, ymax*1.1
		p.Y.Tick.Marker = niceTicks{}
		p.Add(plotter.NewGrid())
		return p
	}
	thr = newChart("throughput", "MB/s (10^6 input bytes per second)", maxMB)
	spd = newChart("speed-up against seq", "speed-up (seq median / median)", max(maxSpd, hi))

	legend = plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(10)

	// Ideal linear scaling, for reference.
	ideal, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return nil, nil, legend, err
	}
	ideal.Color = color.Gray{Y: 160}
	ideal.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	spd.Add(ideal)

	for i, s := range series {
		clr := benchColors[i%len(benchColors)]
		glyph := benchGlyphs[(i/len(benchColors)+i)%len(benchGlyphs)]
		var dashes []vg.Length
		switch s.baseline {
		case "seq":
			glyph, dashes = draw.BoxGlyph{}, []vg.Length{vg.Points(6), vg.Points(3)}
		case "goroutines":
			glyph, dashes = draw.PyramidGlyph{}, []vg.Length{vg.Points(6), vg.Points(3)}
		}
		var thumbs []plot.Thumbnailer
		for k, p := range []*plot.Plot{thr, spd} {
			y := func(r Result) float64 {
				if k == 0 {
					return r.MBPerS
				}
				return r.SpeedupVsSeq
			}
			var lineXY, ptXY plotter.XYs
			for _, r := range s.points {
				ptXY = append(ptXY, plotter.XY{X: float64(r.Ranks), Y: y(r)})
			}
			lineXY = ptXY
			if s.baseline != "" {
				// A baseline is one point: draw it as a reference line
				// across the chart.
				v := y(s.points[0])
				lineXY = plotter.XYs{{X: lo, Y: v}, {X: hi, Y: v}}
			}
			line, err := plotter.NewLine(lineXY)
			if err != nil {
				return nil, nil, legend, fmt.Errorf("%s: %w", s.label, err)
			}
			pts, err := plotter.NewScatter(ptXY)
			if err != nil {
				return nil, nil, legend, fmt.Errorf("%s: %w", s.label, err)
			}
			line.Color, line.Width, line.Dashes = clr, vg.Points(1.5), dashes
			pts.Color, pts.Shape, pts.Radius = clr, glyph, vg.Points(4)
			p.Add(line, pts)
			thumbs = []plot.Thumbnailer{line, pts}
		}
		legend.Add(s.label, thumbs...)
	}
	legend.Add("ideal (speed-up = ranks)", ideal)
	return thr, spd, legend, nil
}

// niceTicks marks about five round values (steps of 1, 2, 2.5 or 5 times
// a power of ten) between min and max, labelled with as many decimals as
// the step needs.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
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
	var ticks []plot.Tick
	for k := math.Ceil(lo / step); k*step <= hi+step*1e-9; k++ {
		v := k * step
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
	}
	return ticks
}
