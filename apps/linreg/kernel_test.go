package linreg

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
)

// sumInt8Naive adds the int8 points of p to s with the obvious loop: the
// oracle and the benchmark baseline of sumInt8.
func sumInt8Naive(s *Sums, p []byte) {
	s.N += int64(len(p) / 2)
	var sx, sy, sxx, syy, sxy int64
	for ; len(p) >= 2; p = p[2:] {
		x, y := int64(int8(p[0])), int64(int8(p[1]))
		sx += x
		sy += y
		sxx += x * x
		syy += y * y
		sxy += x * y
	}
	s.X += sx
	s.Y += sy
	s.XX += sxx
	s.YY += syy
	s.XY += sxy
}

// TestKernel checks sumInt8 against the naive loop on random bytes, on
// skewed bytes (one bin hit often) and on odd lengths.
func TestKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := new([65536]uint32)
	for _, n := range []int{0, 2, 6, 8, 10, 1000, 1 << 16, 1<<20 + 6} {
		for _, skew := range []bool{false, true} {
			p := make([]byte, n)
			for i := range p {
				p[i] = byte(rng.Uint32())
				if skew && i%3 != 0 {
					p[i] = 0x80
				}
			}
			var a, b Sums
			sumInt8Naive(&a, p)
			sumInt8(&b, p, h)
			if a != b {
				t.Fatalf("n=%d skew=%v: sumInt8 = %+v; want %+v", n, skew, b, a)
			}
			if haveAVX2 {
				var c Sums
				sumInt8Wide(&c, p)
				if a != c {
					t.Fatalf("n=%d skew=%v: sumInt8Wide = %+v; want %+v", n, skew, c, a)
				}
			}
			if *h != [65536]uint32{} {
				t.Fatalf("n=%d: histogram not cleared", n)
			}
		}
	}
}

// TestKernelWideExtremes: the AVX2 kernel's 32-bit lanes do not overflow
// on the largest products, in one call's worth of bytes and more, at
// every alignment and tail length.
func TestKernelWideExtremes(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2 on this processor")
	}
	for _, pair := range [][2]byte{{0x80, 0x80}, {0x80, 0x7f}, {0x7f, 0x7f}, {0x7f, 0x80}} {
		for _, n := range []int{avx2Bytes, 3*avx2Bytes + 30, 64 + 2} {
			buf := make([]byte, n+7)
			for off := range 4 {
				p := buf[off : off+n]
				for i := 0; i+1 < len(p); i += 2 {
					p[i], p[i+1] = pair[0], pair[1]
				}
				var a, c Sums
				sumInt8Naive(&a, p)
				sumInt8Wide(&c, p)
				if a != c {
					t.Fatalf("points %x, %d bytes at offset %d: sumInt8Wide = %+v; want %+v", pair, n, off, c, a)
				}
			}
		}
	}
}

// TestEarlyFold folds the histogram every few points (as when counts
// could overflow) and expects the same output.
func TestEarlyFold(t *testing.T) {
	var b bytes.Buffer
	if err := Generate(&b, 5000, "int8", 4); err != nil {
		t.Fatal(err)
	}
	f := write(t, t.TempDir(), "p", b.Bytes())
	want := render(t, seq(t, []string{f}, Options{ChunkBytes: 1024}))
	defer func(m int64) { maxPending = m }(maxPending)
	maxPending = 700
	if got := render(t, seq(t, []string{f}, Options{ChunkBytes: 1024})); got != want {
		t.Fatalf("folding every 700 points: %s; want %s", got, want)
	}
	r, err := Goroutines(context.Background(), []string{f}, Options{ChunkBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(t, r); got != want {
		t.Fatalf("goroutines, folding every 700 points: %s; want %s", got, want)
	}
}

// BenchmarkKernel compares the histogram kernel with the naive loop on
// 1 MiB of generated points in memory, and the AVX2 kernel on 64 MiB (out
// of the caches: avx2-64MiB).
func BenchmarkKernel(b *testing.B) {
	var buf bytes.Buffer
	if err := Generate(&buf, 1<<19, "int8", 1); err != nil {
		b.Fatal(err)
	}
	p := buf.Bytes()
	if haveAVX2 {
		b.Run("avx2-64MiB", func(b *testing.B) {
			big := bytes.Repeat(p, 64)
			b.SetBytes(int64(len(big)))
			for b.Loop() {
				var s Sums
				sumInt8Wide(&s, big)
			}
		})
	}
	b.Run("naive", func(b *testing.B) {
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			var s Sums
			sumInt8Naive(&s, p)
		}
	})
	b.Run("histogram", func(b *testing.B) {
		h := new([65536]uint32)
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			var s Sums
			sumInt8(&s, p, h)
		}
	})
	if haveAVX2 {
		b.Run("avx2", func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				var s Sums
				sumInt8Wide(&s, p)
			}
		})
	}
}
