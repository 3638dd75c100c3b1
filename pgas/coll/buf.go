package coll

import (
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
)

// Buf is the source or destination of a collective: a range of a shared
// array (Shared) or the calling rank's private slice (Private). Which one a
// call gets selects the UPC variant: shared/shared is the standard form,
// Private destination the get form, Private source the put form, both the
// priv form.
//
// A Private buffer is only ever read and written by its own rank; data that
// must reach another rank's private buffer is staged through shared memory
// and moved by the transport.
type Buf[T any] struct {
	arr  *pgas.Array[T]
	at   int64
	priv []T
	isPr bool
}

// Shared returns the buffer that starts at element at of a. Each family
// says how it lays chunks out from there.
func Shared[T any](a *pgas.Array[T], at int64) Buf[T] {
	if a == nil {
		panic("coll: Shared of a nil array")
	}
	if at < 0 || at > a.Len() {
		panic(fmt.Sprintf("coll: Shared at %d outside array of %d elements", at, a.Len()))
	}
	return Buf[T]{arr: a, at: at}
}

// Private returns the buffer backed by the calling rank's slice s.
func Private[T any](s []T) Buf[T] { return Buf[T]{priv: s, isPr: true} }

// IsPrivate reports whether b is a private buffer.
func (b Buf[T]) IsPrivate() bool { return b.isPr }

// Array returns a shared buffer's array, or nil.
func (b Buf[T]) Array() *pgas.Array[T] { return b.arr }

// Start returns a shared buffer's first element index.
func (b Buf[T]) Start() int64 { return b.at }

// Slice returns a private buffer's slice.
func (b Buf[T]) Slice() []T { return b.priv }

func (b Buf[T]) valid() bool { return b.isPr || b.arr != nil }

func (b Buf[T]) String() string {
	if b.isPr {
		return fmt.Sprintf("private[%d]", len(b.priv))
	}
	if b.arr == nil {
		return "nil"
	}
	return fmt.Sprintf("shared@%d", b.at)
}

// kind names the UPC variant a src/dst pair selects.
func kind[T any](dst, src Buf[T]) string {
	switch {
	case dst.isPr && src.isPr:
		return "priv"
	case dst.isPr:
		return "get"
	case src.isPr:
		return "put"
	}
	return "shared"
}
