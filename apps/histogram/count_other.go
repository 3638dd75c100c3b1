//go:build !amd64 || purego

package histogram

const haveCount48 = false

func count48(t *[6][256]uint32, px []byte) { panic("histogram: no assembly kernel") }
