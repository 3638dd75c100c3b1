module github.com/pgasmr/pgasmr

go 1.26

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/creack/pty v1.1.24
	github.com/klauspost/compress v1.18.1
	github.com/spf13/pflag v1.0.6
	github.com/vmihailenco/msgpack/v5 v5.4.1
	golang.org/x/image v0.24.0
	golang.org/x/sys v0.38.0
	golang.org/x/term v0.37.0
)

require github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
