package nd

import (
	"fmt"
	"iter"
	"strings"
)

// Point is an index in d dimensions.
type Point []int64

// Rect is the box of points p with Lo[k] <= p[k] < Hi[k] in every
// dimension k. A box whose Hi is not above its Lo in some dimension is
// empty. The zero Rect has no dimensions and one point, the empty index.
// Methods that return a Rect return a new one; they never share slices
// with their receiver or arguments.
type Rect struct {
	Lo, Hi Point
}

// Box returns the box [lo, hi). It panics if lo and hi differ in length.
func Box(lo, hi Point) Rect {
	if len(lo) != len(hi) {
		panic(fmt.Sprintf("nd: Box of %d lower and %d upper bounds", len(lo), len(hi)))
	}
	return Rect{Lo: clonePoint(lo), Hi: clonePoint(hi)}
}

// Extent returns the box [0, d) of an array of dimensions d.
func Extent(d ...int64) Rect {
	return Rect{Lo: make(Point, len(d)), Hi: clonePoint(d)}
}

func clonePoint(p Point) Point { return append(Point(nil), p...) }

// Dims is the number of dimensions.
func (r Rect) Dims() int { return len(r.Lo) }

// Empty reports whether r holds no point.
func (r Rect) Empty() bool {
	for k := range r.Lo {
		if r.Hi[k] <= r.Lo[k] {
			return true
		}
	}
	return false
}

// Size is the number of points in r.
func (r Rect) Size() int64 {
	n := int64(1)
	for k := range r.Lo {
		if r.Hi[k] <= r.Lo[k] {
			return 0
		}
		n *= r.Hi[k] - r.Lo[k]
	}
	return n
}

// Shape is the length of r along each dimension (0 where it is empty).
func (r Rect) Shape() Point {
	s := make(Point, len(r.Lo))
	for k := range s {
		s[k] = max(r.Hi[k]-r.Lo[k], 0)
	}
	return s
}

// Contains reports whether p is in r.
func (r Rect) Contains(p Point) bool {
	r.mustDims("Contains", len(p))
	for k, v := range p {
		if v < r.Lo[k] || v >= r.Hi[k] {
			return false
		}
	}
	return true
}

// Covers reports whether every point of o is in r (an empty o is in any
// box).
func (r Rect) Covers(o Rect) bool {
	r.mustDims("Covers", o.Dims())
	if o.Empty() {
		return true
	}
	for k := range r.Lo {
		if o.Lo[k] < r.Lo[k] || o.Hi[k] > r.Hi[k] {
			return false
		}
	}
	return true
}

// Intersect is the box of the points in both r and o.
func (r Rect) Intersect(o Rect) Rect {
	r.mustDims("Intersect", o.Dims())
	out := Rect{Lo: make(Point, len(r.Lo)), Hi: make(Point, len(r.Lo))}
	for k := range r.Lo {
		out.Lo[k], out.Hi[k] = max(r.Lo[k], o.Lo[k]), min(r.Hi[k], o.Hi[k])
	}
	return out
}

// Translate is r moved by the vector d.
func (r Rect) Translate(d Point) Rect {
	r.mustDims("Translate", len(d))
	out := Box(r.Lo, r.Hi)
	for k := range d {
		out.Lo[k] += d[k]
		out.Hi[k] += d[k]
	}
	return out
}

// Grow is r with n more points on both sides of every dimension (a ghost
// zone of width n); a negative n shrinks it.
func (r Rect) Grow(n int64) Rect {
	out := Box(r.Lo, r.Hi)
	for k := range out.Lo {
		out.Lo[k] -= n
		out.Hi[k] += n
	}
	return out
}

// Shrink is Grow(-n).
func (r Rect) Shrink(n int64) Rect { return r.Grow(-n) }

// Equal reports whether r and o hold the same points (all empty boxes of
// one dimension count are equal).
func (r Rect) Equal(o Rect) bool {
	if r.Dims() != o.Dims() {
		return false
	}
	if r.Empty() || o.Empty() {
		return r.Empty() && o.Empty()
	}
	for k := range r.Lo {
		if r.Lo[k] != o.Lo[k] || r.Hi[k] != o.Hi[k] {
			return false
		}
	}
	return true
}

// Points yields every point of r in row-major order (the last dimension
// fastest). The point yielded is reused: copy it to keep it.
func (r Rect) Points() iter.Seq[Point] {
	return func(yield func(Point) bool) {
		if r.Empty() {
			return
		}
		p := clonePoint(r.Lo)
		for {
			if !yield(p) {
				return
			}
			k := len(p) - 1
			for ; k >= 0; k-- {
				p[k]++
				if p[k] < r.Hi[k] {
					break
				}
				p[k] = r.Lo[k]
			}
			if k < 0 {
				return
			}
		}
	}
}

// String is r as "[lo0,hi0)x[lo1,hi1)...".
func (r Rect) String() string {
	var b strings.Builder
	for k := range r.Lo {
		if k > 0 {
			b.WriteByte('x')
		}
		fmt.Fprintf(&b, "[%d,%d)", r.Lo[k], r.Hi[k])
	}
	if len(r.Lo) == 0 {
		return "[]"
	}
	return b.String()
}

func (r Rect) mustDims(op string, n int) {
	if n != len(r.Lo) {
		panic(fmt.Sprintf("nd: %s of a %d-dimensional box with %d dimensions", op, len(r.Lo), n))
	}
}
