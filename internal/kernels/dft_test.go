package kernels

import (
	"math"
	"math/cmplx"
)

func dft(x []complex128) []complex128 {
	n := len(x)
	out := make([]complex128, n)
	for k := range n {
		for j := range n {
			out[k] += x[j] * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/float64(n)))
		}
	}
	return out
}
