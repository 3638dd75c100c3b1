//go:build amd64 && !purego

package linreg

import "golang.org/x/sys/cpu"

// haveAVX2 selects the AVX2 kernel of int8 sums.
var haveAVX2 = cpu.X86.HasAVX2

// sumInt8AVX2 adds the x, y, x*x, y*y and x*y sums of the int8 points of
// p[:len(p)&^31] to s[0] to s[4], 16 points at a time in 32-bit lanes: p
// must hold at most avx2Bytes bytes, so that no lane can overflow.
//
//go:noescape
func sumInt8AVX2(p []byte, s *[5]int64)
