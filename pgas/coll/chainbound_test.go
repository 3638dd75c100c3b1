package coll_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkChainBound is what a private broadcast along the chain can
// reach on this machine, without the runtime: two goroutines pass the
// message through a ring of 8 slots of 256 KiB (the chain's) with an
// arrival and an acknowledgement counter, one copying the root's private
// buffer into the ring and the other copying out into its own (ring),
// against one goroutine copying the message once (copy: the shared
// broadcast's work, the receiver reading the root's segment). A private
// broadcast must copy twice (no rank touches another's private memory);
// the ring overlaps the copies, so ring/copy is the bound of
// BroadcastInPlace's priv/shared ratio where the two copies compete for
// the processors' memory bandwidth.
func BenchmarkChainBound(b *testing.B) {
	const chunk, slots = 256 << 10, 8
	for _, size := range []int{1 << 20, 8 << 20} {
		src, dst := make([]byte, size), make([]byte, size)
		for i := range src {
			src[i] = byte(i)
		}
		b.Run(fmt.Sprintf("size=%d/copy", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				copy(dst, src)
			}
		})
		b.Run(fmt.Sprintf("size=%d/ring", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			ring := make([]byte, chunk*slots)
			var arrived, acked atomic.Int64
			var sent, recv int64
			chunks := (size + chunk - 1) / chunk
			for b.Loop() {
				var wg sync.WaitGroup
				wg.Go(func() {
					for k := range chunks {
						spin(&acked, sent+int64(k+1-slots))
						lo, hi := k*chunk, min((k+1)*chunk, size)
						copy(ring[(k%slots)*chunk:], src[lo:hi])
						arrived.Add(1)
					}
					sent += int64(chunks)
					spin(&acked, sent)
				})
				wg.Go(func() {
					for k := range chunks {
						spin(&arrived, recv+int64(k+1))
						lo, hi := k*chunk, min((k+1)*chunk, size)
						copy(dst[lo:hi], ring[(k%slots)*chunk:])
						acked.Add(1)
					}
					recv += int64(chunks)
				})
				wg.Wait()
			}
		})
	}
}

// spin waits for *p to reach want, as the chain's waiter does: spinning,
// then yielding.
func spin(p *atomic.Int64, want int64) {
	for i := 0; p.Load() < want; i++ {
		if i >= 1024 {
			runtime.Gosched()
		}
	}
}
