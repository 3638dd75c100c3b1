module github.com/pgasmr/pgasmr

go 1.26

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/creack/pty v1.1.24
	github.com/spf13/pflag v1.0.6
	github.com/vmihailenco/msgpack/v5 v5.4.1
	golang.org/x/sys v0.38.0
	golang.org/x/term v0.37.0
	gonum.org/v1/plot v0.15.2
)

require (
	codeberg.org/go-fonts/liberation v0.4.1 // indirect
	codeberg.org/go-latex/latex v0.0.1 // indirect
	codeberg.org/go-pdf/fpdf v0.10.0 // indirect
	git.sr.ht/~sbinet/gg v0.6.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/campoy/embedmd v1.0.0 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	golang.org/x/image v0.24.0 // indirect
	golang.org/x/text v0.22.0 // indirect
)
