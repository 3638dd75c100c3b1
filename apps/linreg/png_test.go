package linreg

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"testing"
)

func TestSampleAndPNG(t *testing.T) {
	dir := t.TempDir()
	pts := []pt{{0, 1}, {1, 3}, {2, 5}, {3, 7}, {4, 9}, {5, 11}, {6, 13}, {7, 15}}
	files := map[string]string{
		"int8": write(t, dir, "s.int8", int8Bytes(pts)),
		"f64":  write(t, dir, "s.f64", f64Bytes(pts)),
		"csv":  write(t, dir, "s.csv", append([]byte("x,y\n"), csvBytes(pts)...)),
	}
	for format, f := range files {
		got, err := Sample(context.Background(), []string{f}, format, 4)
		if err != nil {
			t.Fatalf("Sample(%s): %v", format, err)
		}
		if len(got) != 4 {
			t.Fatalf("Sample(%s) = %v; want 4 points", format, got)
		}
		for _, p := range got {
			if p.Y != 2*p.X+1 {
				t.Errorf("Sample(%s) = %v: not an input point", format, got)
			}
		}
		if format != "csv" && (got[0] != Point{0, 1} || got[2] != Point{4, 9}) {
			t.Errorf("Sample(%s) = %v; want points 0, 2, 4, 6", format, got)
		}
	}
	r := seq(t, []string{files["int8"]}, Options{})
	sample, err := Sample(context.Background(), []string{files["int8"]}, "int8", 100)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := r.PNG(&a, sample); err != nil {
		t.Fatal(err)
	}
	r.PNG(&b, sample)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("PNG is not deterministic")
	}
	img, err := png.Decode(&a)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, pngW, pngH) {
		t.Fatalf("PNG bounds %v", img.Bounds())
	}
	count := map[[3]uint32]int{}
	for y := range pngH {
		for x := range pngW {
			r, g, b, _ := img.At(x, y).RGBA()
			count[[3]uint32{r >> 8, g >> 8, b >> 8}]++
		}
	}
	red, blue := count[[3]uint32{200, 30, 30}], count[[3]uint32{40, 80, 160}]
	if red < pngW-2*pngMargin || blue == 0 {
		t.Errorf("PNG has %d line pixels and %d point pixels", red, blue)
	}
	if _, err := Sample(context.Background(), []string{write(t, dir, "odd", []byte{1})}, "int8", 3); err == nil {
		t.Error("Sample of an odd-sized file: no error")
	}
}
