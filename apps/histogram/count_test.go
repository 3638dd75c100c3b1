package histogram

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

func naiveCount(h *[768]int64, px []byte) {
	for j := 0; j+2 < len(px); j += 3 {
		h[512+int(px[j])]++
		h[256+int(px[j+1])]++
		h[px[j+2]]++
	}
}

func TestCounter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 3, 4, 5, 8, 15, 16, 17, 32, 100, 1001, 100_003} {
		px := make([]byte, 3*n)
		for i := range px {
			px[i] = byte(rng.IntN(7) * 40)
		}
		var want [768]int64
		naiveCount(&want, px)
		naiveCount(&want, px[:3*(n/2)])
		var c counter
		c.add(px)
		c.add(px[:3*(n/2)])
		if got := c.totals(); *got != want {
			t.Errorf("counter over %d pixels differs from the naive count", n)
		}
	}
}

// TestCount48 checks the assembly kernel against countGo: every byte
// value, lengths that are and are not multiples of 48, starts at every
// offset of a cache line, and a run of one value (every increment on the
// same counters).
func TestCount48(t *testing.T) {
	if !haveCount48 {
		t.Skip("no assembly kernel on this platform or with -tags purego")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 64+48*300+47)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	same := make([]byte, 48*100)
	for i := range same {
		same[i] = 200
	}
	check := func(name string, px []byte) {
		t.Helper()
		var got, want [6][256]uint32
		count48(&got, px)
		countGo(&want, px[:len(px)/48*48])
		if got != want {
			t.Errorf("count48 over %s differs from countGo", name)
		}
	}
	for off := range 64 {
		for _, n := range []int{0, 1, 47, 48, 49, 95, 96, 48*300 + 47} {
			check(fmt.Sprintf("%d bytes at offset %d", n, off), buf[off:off+n])
		}
	}
	check("a run of one value", same)
	// Every byte value at every position of a group.
	all := make([]byte, 256*48)
	for i := range all {
		all[i] = byte(i * 7 / 48)
	}
	check("every value", all)
}

func benchPixels() []byte {
	px := make([]byte, 3<<18)
	var g gen
	g.init(7)
	for i := 0; i < len(px); i += 3 {
		g.pixel(px[i:i+3], i/3%4096, i/3/4096, 4096, 1<<10)
	}
	return px
}

func BenchmarkKernel(b *testing.B) {
	px := benchPixels()
	b.Run("naive", func(b *testing.B) {
		b.SetBytes(int64(len(px)))
		var h [768]int64
		for b.Loop() {
			naiveCount(&h, px)
		}
	})
	b.Run("counter", func(b *testing.B) {
		b.SetBytes(int64(len(px)))
		var c counter
		for b.Loop() {
			c.add(px)
		}
	})
}

// BenchmarkKernelScaling counts 64 MiB of pixels out of the caches on one
// processor (one), then two such halves at once on two (two, bytes a
// processor): how far counting scales across this machine's processors,
// which the 2-rank job's map is bounded by.
func BenchmarkKernelScaling(b *testing.B) {
	const half = 64 << 20 / 3 * 3
	px := make([]byte, 2*half)
	var g gen
	g.init(7)
	for i := 0; i < len(px); i += 3 {
		g.pixel(px[i:i+3], i/3%8192, i/3/8192, 8192, len(px)/3/8192)
	}
	b.Run("one", func(b *testing.B) {
		b.SetBytes(half)
		var c counter
		for b.Loop() {
			c.add(px[:half])
		}
	})
	b.Run("two", func(b *testing.B) {
		b.SetBytes(half)
		var c [2]counter
		for b.Loop() {
			var wg sync.WaitGroup
			for w := range 2 {
				wg.Go(func() { c[w].add(px[w*half : (w+1)*half]) })
			}
			wg.Wait()
		}
	})
}
