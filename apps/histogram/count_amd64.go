//go:build amd64 && !purego

package histogram

// haveCount48 selects the assembly kernel.
const haveCount48 = true

// count48 counts the pixels of px[:len(px)/48*48] into t, byte 6k+j of
// px into t[j] (j < 6), as countGo does, prefetching 2 KiB ahead of the
// bytes it reads: out of the caches the processor's own prefetcher leaves
// a byte-a-cycle loop waiting for memory (2.2 against 3.3 GB/s over
// 64 MiB here, go test -bench Kernel), and Go has no prefetch instruction.
//
//go:noescape
func count48(t *[6][256]uint32, px []byte)
