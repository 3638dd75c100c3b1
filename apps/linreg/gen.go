package linreg

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
)

// Generate writes points points along a noisy line in the input format
// format ("int8", "f64" or "csv"), the same bytes for the same seed.
//
// int8 points have x uniform in [-128, 127] and y = round(x/2 + 10 + e),
// e normal with standard deviation 12, clamped to [-128, 127]. f64 and
// csv points have x uniform in [-1000, 1000) and y = 2.5x − 7 + e, e normal
// with standard deviation 150; csv writes them as "x,y" lines with the
// shortest decimal forms, so csv and f64 files of one seed hold the same
// points.
func Generate(w io.Writer, points int64, format string, seed uint64) error {
	f, err := parseFormat(format)
	if err != nil {
		return err
	}
	if points < 0 {
		return fmt.Errorf("linreg: Generate of %d points", points)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c696e726567)) // "linreg"
	bw := bufio.NewWriterSize(w, 256<<10)
	var b []byte
	for i := range points {
		switch f {
		case fmtInt8:
			x := float64(rng.IntN(256) - 128)
			y := math.Round(x/2 + 10 + 12*rng.NormFloat64())
			b = append(b, byte(int8(x)), byte(int8(max(-128, min(127, y)))))
		default:
			x := -1000 + 2000*rng.Float64()
			y := 2.5*x - 7 + 150*rng.NormFloat64()
			if f == fmtF64 {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(y))
			} else {
				b = strconv.AppendFloat(b, x, 'g', -1, 64)
				b = append(b, ',')
				b = strconv.AppendFloat(b, y, 'g', -1, 64)
				b = append(b, '\n')
			}
		}
		if len(b) >= 64<<10 || i == points-1 {
			if _, err := bw.Write(b); err != nil {
				return fmt.Errorf("linreg: generating points: %w", err)
			}
			b = b[:0]
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("linreg: generating points: %w", err)
	}
	return nil
}
