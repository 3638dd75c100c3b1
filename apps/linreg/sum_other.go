//go:build !amd64 || purego

package linreg

const haveAVX2 = false

func sumInt8AVX2(p []byte, s *[5]int64) { panic("linreg: no AVX2 kernel") }
