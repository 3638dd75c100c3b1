package histogram

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"strconv"

	"github.com/pgasmr/pgasmr/apps/internal/table"
)

// Result is the histogram of all input images.
type Result struct {
	Images int   // input files
	Pixels int64 // pixels over all images
	Red    [256]int64
	Green  [256]int64
	Blue   [256]int64
}

// Formats lists the output formats Write accepts; the first is the default.
var Formats = []string{"text", "tsv", "csv", "json"}

// fromCounts fills r's channels from counts keyed as the map emits them:
// red at [0,256), green at [256,512), blue at [512,768).
func (r *Result) fromCounts(c *[768]int64) {
	copy(r.Red[:], c[0:256])
	copy(r.Green[:], c[256:512])
	copy(r.Blue[:], c[512:768])
}

// Write writes the result in format: "text" (columns aligned under a
// header line), "tsv" (256 rows value<TAB>red<TAB>green<TAB>blue, no
// header), "csv" (header value,red,green,blue) or "json". An empty format
// means "text".
func (r *Result) Write(w io.Writer, format string) error {
	return table.Output{
		App:     "histogram",
		Columns: []table.Column{{Name: "value", Number: true}, {Name: "red", Number: true}, {Name: "green", Number: true}, {Name: "blue", Number: true}},
		Rows: func() [][]string {
			rows := make([][]string, 256)
			for v := range rows {
				rows[v] = r.row(v)
			}
			return rows
		},
		JSON: r.writeJSON,
		Unknown: func(format string) error {
			return fmt.Errorf("histogram: unknown output format %q (want text, tsv, csv or json)", format)
		},
	}.Write(w, format)
}

func (r *Result) row(v int) []string {
	return []string{strconv.Itoa(v), strconv.FormatInt(r.Red[v], 10), strconv.FormatInt(r.Green[v], 10), strconv.FormatInt(r.Blue[v], 10)}
}

func (r *Result) writeJSON(w io.Writer) error {
	b, err := json.MarshalIndent(struct {
		App    string     `json:"app"`
		Images int        `json:"images"`
		Pixels int64      `json:"pixels"`
		Red    [256]int64 `json:"red"`
		Green  [256]int64 `json:"green"`
		Blue   [256]int64 `json:"blue"`
	}{"histogram", r.Images, r.Pixels, r.Red, r.Green, r.Blue}, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// PNG draws the three histograms, red, green and blue from top to bottom,
// each as 256 bars two pixels wide scaled to the channel's largest count,
// and writes the picture as a PNG.
func (r *Result) PNG(w io.Writer) error {
	const (
		barW   = 2
		panelH = 160
		margin = 8
		width  = 256*barW + 2*margin
		height = 3*panelH + 4*margin
	)
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	bg := color.RGBA{255, 255, 255, 255}
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = bg.R, bg.G, bg.B, bg.A
	}
	axis := color.RGBA{96, 96, 96, 255}
	for p, ch := range []struct {
		counts *[256]int64
		c      color.RGBA
	}{{&r.Red, color.RGBA{220, 40, 40, 255}}, {&r.Green, color.RGBA{40, 170, 40, 255}}, {&r.Blue, color.RGBA{40, 70, 220, 255}}} {
		top := margin + p*(panelH+margin)
		base := top + panelH - 1 // the axis row
		var peak int64
		for _, n := range ch.counts {
			peak = max(peak, n)
		}
		for v, n := range ch.counts {
			h := 0
			if peak > 0 {
				h = int((float64(n)/float64(peak))*float64(panelH-2) + 0.5)
			}
			for x := margin + v*barW; x < margin+(v+1)*barW; x++ {
				for y := base - h; y < base; y++ {
					img.SetRGBA(x, y, ch.c)
				}
			}
		}
		for x := margin; x < margin+256*barW; x++ {
			img.SetRGBA(x, base, axis)
		}
	}
	if err := png.Encode(w, img); err != nil {
		return fmt.Errorf("histogram: writing PNG: %w", err)
	}
	return nil
}
