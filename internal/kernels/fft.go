package kernels

import (
	"context"
	"fmt"
	"math"
	"math/bits"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// FFT transforms x in place (radix-2, decimation in time); len(x) must be a
// power of two.
func FFT(x []complex128) {
	n := len(x)
	if n&(n-1) != 0 {
		panic(fmt.Sprintf("kernels: FFT of length %d, not a power of two", n))
	}
	if n < 2 {
		return
	}
	shift := 64 - bits.Len(uint(n-1))
	for i := range n {
		j := int(bits.Reverse64(uint64(i)) >> shift)
		if j > i {
			x[i], x[j] = x[j], x[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		half := size / 2
		step := -2 * math.Pi / float64(size)
		for k := range half {
			s, c := math.Sincos(step * float64(k))
			w := complex(c, s)
			for start := 0; start < n; start += size {
				a, b := start+k, start+k+half
				t := w * x[b]
				x[a], x[b] = x[a]+t, x[a]-t
			}
		}
	}
}

// FFTGrid is an n1×n2×n3 grid distributed by planes along dimension 0
// (rank r holds planes [r*n1/T, (r+1)*n1/T)); after the transform the
// result is distributed along dimension 1.
type FFTGrid struct{ N1, N2, N3 int }

// Value is the input at (i1, i2, i3).
func (g FFTGrid) Value(i1, i2, i3 int) complex128 {
	h := uint64(i1*g.N2*g.N3+i2*g.N3+i3)*0x9e3779b97f4a7c15 + 7
	h ^= h >> 29
	return complex(float64(h%1000)/1000, float64((h>>20)%1000)/1000)
}

func (g FFTGrid) check(ranks int) {
	for _, d := range []int{g.N1, g.N2, g.N3} {
		if d < 1 || d&(d-1) != 0 {
			panic(fmt.Sprintf("kernels: FFT grid %+v: dimensions must be powers of two", g))
		}
	}
	if g.N1%ranks != 0 || g.N2%ranks != 0 {
		panic(fmt.Sprintf("kernels: FFT grid %+v: N1 and N2 must be multiples of %d ranks", g, ranks))
	}
}

// fft2Planes transforms each n2×n3 plane of slab (p planes) along
// dimension 2 then dimension 1.
func (g FFTGrid) fft2Planes(slab []complex128, p int) {
	col := make([]complex128, g.N2)
	for a := range p {
		plane := slab[a*g.N2*g.N3 : (a+1)*g.N2*g.N3]
		for i2 := range g.N2 {
			FFT(plane[i2*g.N3 : (i2+1)*g.N3])
		}
		for i3 := range g.N3 {
			for i2 := range g.N2 {
				col[i2] = plane[i2*g.N3+i3]
			}
			FFT(col)
			for i2 := range g.N2 {
				plane[i2*g.N3+i3] = col[i2]
			}
		}
	}
}

// fftDim0 transforms out ([b][i1][i3], q rows b) along i1.
func (g FFTGrid) fftDim0(out []complex128, q int) {
	v := make([]complex128, g.N1)
	for b := range q {
		base := b * g.N1 * g.N3
		for i3 := range g.N3 {
			for i1 := range g.N1 {
				v[i1] = out[base+i1*g.N3+i3]
			}
			FFT(v)
			for i1 := range g.N1 {
				out[base+i1*g.N3+i3] = v[i1]
			}
		}
	}
}

// Sequential transforms the whole grid on one core and returns it in
// [i2][i1][i3] order, the order the distributed versions leave it in.
func (g FFTGrid) Sequential() []complex128 {
	slab := make([]complex128, g.N1*g.N2*g.N3)
	for i1 := range g.N1 {
		for i2 := range g.N2 {
			for i3 := range g.N3 {
				slab[(i1*g.N2+i2)*g.N3+i3] = g.Value(i1, i2, i3)
			}
		}
	}
	g.fft2Planes(slab, g.N1)
	out := make([]complex128, len(slab))
	for i1 := range g.N1 {
		for i2 := range g.N2 {
			copy(out[(i2*g.N1+i1)*g.N3:(i2*g.N1+i1+1)*g.N3], slab[(i1*g.N2+i2)*g.N3:])
		}
	}
	g.fftDim0(out, g.N2)
	return out
}

// FFTTranspose selects how FFT3D moves data in its transpose.
type FFTTranspose int

// The transposes.
const (
	// TransposeStandard: packed send buffers in a shared array, a barrier,
	// one GetRange per peer, a barrier (seeds/002 listing 3.19).
	TransposeStandard FFTTranspose = iota
	// TransposeExchange: coll.Exchange with private buffers.
	TransposeExchange
	// TransposeExchangeInPlace: coll.ExchangeInPlace on the send buffer.
	TransposeExchangeInPlace
)

func (t FFTTranspose) String() string {
	return [...]string{"standard", "exchange", "exchange-in-place"}[t]
}

// FFT3D transforms this rank's slab of g with transpose mode tr and returns
// its part of the result: rows i2 in [r*n2/T, (r+1)*n2/T) in [b][i1][i3]
// order. It panics if the grid does not fit the rank count.
func FFT3D(ctx context.Context, r *pgas.Rank, g FFTGrid, tr FFTTranspose) ([]complex128, error) {
	T := r.N()
	g.check(T)
	p1, p2 := g.N1/T, g.N2/T
	me := r.ID()
	slab := make([]complex128, p1*g.N2*g.N3)
	for a := range p1 {
		for i2 := range g.N2 {
			for i3 := range g.N3 {
				slab[(a*g.N2+i2)*g.N3+i3] = g.Value(me*p1+a, i2, i3)
			}
		}
	}
	g.fft2Planes(slab, p1)

	// Pack: chunk j holds my planes' rows of rank j, in (a, b, i3) order.
	chunk := p1 * p2 * g.N3
	send := make([]complex128, chunk*T)
	for j := range T {
		for a := range p1 {
			for b := range p2 {
				copy(send[j*chunk+(a*p2+b)*g.N3:][:g.N3], slab[(a*g.N2+j*p2+b)*g.N3:])
			}
		}
	}
	recv, err := transpose(ctx, r, send, chunk, tr)
	if err != nil {
		return nil, err
	}
	out := make([]complex128, p2*g.N1*g.N3)
	for i := range T {
		for a := range p1 {
			for b := range p2 {
				copy(out[(b*g.N1+i*p1+a)*g.N3:][:g.N3], recv[i*chunk+(a*p2+b)*g.N3:])
			}
		}
	}
	g.fftDim0(out, p2)
	return out, nil
}

func transpose(ctx context.Context, r *pgas.Rank, send []complex128, chunk int, tr FFTTranspose) ([]complex128, error) {
	T, me := r.N(), r.ID()
	switch tr {
	case TransposeExchange:
		recv := make([]complex128, len(send))
		return recv, coll.Exchange(ctx, r.World(), coll.Private(recv), coll.Private(send), chunk)
	case TransposeExchangeInPlace:
		return send, coll.ExchangeInPlace(ctx, r.World(), coll.Private(send), chunk)
	}
	blk := int64(chunk * T)
	u1, err := pgas.AllAllocArray[complex128](ctx, r, blk*int64(T), blk)
	if err != nil {
		return nil, err
	}
	copy(u1.Local(), send)
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}
	recv := make([]complex128, len(send))
	for i := range T {
		// Chunk me of rank i's block.
		if err := u1.GetRange(ctx, recv[i*chunk:(i+1)*chunk], int64(i)*blk+int64(me*chunk)); err != nil {
			return nil, err
		}
	}
	return recv, u1.AllFree(ctx) // AllFree's barrier protects u1 until all have read
}
