package linreg

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/pgasmr/pgasmr/apps/internal/appjob"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/reduce"
)

// DefaultChunkBytes is the default chunk size: 1 MiB, 524,288 int8 points
// or 65,536 float64 points.
const DefaultChunkBytes = 1 << 20

// pieceBytes bounds one read: the context is checked between reads.
const pieceBytes = 1 << 20

// ErrZeroVariance is wrapped by the error for input whose x values do not
// vary (including no points and a single point): the slope is undefined.
var ErrZeroVariance = errors.New("linreg: zero variance in x")

// Options configures Run, Seq and Goroutines: the job options every
// MapReduce job has (mr.Options; linreg's defaults are Defaults) and
// linreg's own. The zero value reads int8 points with the array-based map
// (each rank sums its share of chunks locally and emits one pair, or one
// per chunk for float input) and gathers to Root; Dist deals the chunks
// (best-fit's threshold is in bytes) to the element map (one call per
// chunk) and, with Map set to mr.MapArray, to the array map, which
// otherwise takes contiguous shares.
type Options struct {
	mr.Options
	// Format is the input format: "int8" (default when empty), "f64" or
	// "csv".
	Format string
	// ChunkBytes is the size of the chunks files are cut into, a positive
	// multiple of 16; 0 means DefaultChunkBytes. Float results depend on it
	// (see the package documentation).
	ChunkBytes int64
}

// Defaults are linreg's job defaults: the array map and GatherRoot.
func Defaults() mr.Defaults {
	return mr.Defaults{ArrayMap: true, Gather: reduce.GatherRoot}
}

// input formats
const (
	fmtInt8 = iota
	fmtF64
	fmtCSV
)

// Validate reports every problem with o.
func (o Options) Validate() error {
	var errs []error
	if _, err := parseFormat(o.Format); err != nil {
		errs = append(errs, err)
	}
	if o.ChunkBytes < 0 || o.ChunkBytes%16 != 0 {
		errs = append(errs, fmt.Errorf("chunk size %d, want a positive multiple of 16 (or 0 for the default)", o.ChunkBytes))
	}
	return o.job().Validate(errs...)
}

// job is o's job options with linreg's defaults.
func (o Options) job() appjob.Job { return appjob.New("linreg", o.Options, Defaults()) }

func parseFormat(s string) (int, error) {
	switch s {
	case "", "int8":
		return fmtInt8, nil
	case "f64":
		return fmtF64, nil
	case "csv":
		return fmtCSV, nil
	}
	return 0, fmt.Errorf("linreg: unknown input format %q (want int8, f64 or csv)", s)
}

// Sums are the sufficient statistics of a set of points. Integer input
// fills N and the int64 fields; float input fills N and the F fields.
type Sums struct {
	N                     int64
	X, Y, XX, YY, XY      int64
	FX, FY, FXX, FYY, FXY float64
}

// Add returns s + t, field by field.
func (s Sums) Add(t Sums) Sums {
	return Sums{
		N: s.N + t.N,
		X: s.X + t.X, Y: s.Y + t.Y, XX: s.XX + t.XX, YY: s.YY + t.YY, XY: s.XY + t.XY,
		FX: s.FX + t.FX, FY: s.FY + t.FY, FXX: s.FXX + t.FXX, FYY: s.FYY + t.FYY, FXY: s.FXY + t.FXY,
	}
}

// Result is a fitted line and the sums it came from.
type Result struct {
	N         int64
	Slope     float64
	Intercept float64
	R2        float64 // NaN when y does not vary
	Sums      Sums
	// Integer says the sums are the exact integer fields (int8 input).
	Integer bool
}

// fit computes the result from the sums with the package's one formula
// (see the package documentation).
func fit(s Sums, integer bool) (*Result, error) {
	var x, y, xx, yy, xy big.Rat
	if integer {
		x.SetInt64(s.X)
		y.SetInt64(s.Y)
		xx.SetInt64(s.XX)
		yy.SetInt64(s.YY)
		xy.SetInt64(s.XY)
	} else {
		for _, p := range []struct {
			dst  *big.Rat
			v    float64
			name string
		}{{&x, s.FX, "x"}, {&y, s.FY, "y"}, {&xx, s.FXX, "x²"}, {&yy, s.FYY, "y²"}, {&xy, s.FXY, "xy"}} {
			if math.IsInf(p.v, 0) || math.IsNaN(p.v) {
				return nil, fmt.Errorf("linreg: the sum of %s over %d points overflows float64 (%v)", p.name, s.N, p.v)
			}
			p.dst.SetFloat64(p.v)
		}
	}
	n := new(big.Rat).SetInt64(s.N)
	d := func(a, b, c, e *big.Rat) *big.Rat { // a·b − c·e
		var p, q big.Rat
		p.Mul(a, b)
		q.Mul(c, e)
		return p.Sub(&p, &q)
	}
	dxx := d(n, &xx, &x, &x)
	dyy := d(n, &yy, &y, &y)
	dxy := d(n, &xy, &x, &y)
	if dxx.Sign() <= 0 {
		return nil, fmt.Errorf("%w: n = %d, n·Σx² − (Σx)² = %s", ErrZeroVariance, s.N, dxx.FloatString(6))
	}
	res := &Result{N: s.N, Sums: s, Integer: integer, R2: math.NaN()}
	var q big.Rat
	res.Slope, _ = q.Quo(dxy, dxx).Float64()
	res.Intercept, _ = q.Quo(d(&y, &xx, &x, &xy), dxx).Float64()
	if dyy.Sign() > 0 {
		var num, den big.Rat
		num.Mul(dxy, dxy)
		den.Mul(dxx, dyy)
		res.R2, _ = q.Quo(&num, &den).Float64()
	}
	return res, nil
}
