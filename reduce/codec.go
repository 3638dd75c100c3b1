package reduce

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/pgasmr/pgasmr/internal/elem"
	"github.com/vmihailenco/msgpack/v5"
)

// Codec encodes keys or values for transfer between ranks. Fixed-size,
// pointer-free types move as raw memory; strings and byte slices as
// msgpack records, written with typed encoder calls (no reflection per
// element).
//
// A msgpack codec keeps encoder state; every store makes its own instance,
// so one Codec value may be shared by the ranks of a job.
type Codec[T any] struct {
	name string
	size int // > 0: raw, fixed size
	app  func(b []byte, v T) []byte
	dec  func(b []byte) (T, int, error)
	mk   func() Codec[T] // fresh instance of a stateful codec
}

// instance returns a codec with its own state.
func (c Codec[T]) instance() Codec[T] {
	if c.mk != nil {
		return c.mk()
	}
	return c
}

func (c Codec[T]) valid() bool { return c.app != nil }

// Name names the codec ("raw", "msgpack-string", ...).
func (c Codec[T]) Name() string { return c.name }

// Fixed returns the encoded size for a raw codec, 0 for variable-size.
func (c Codec[T]) Fixed() int { return c.size }

// Append appends v's encoding to b.
func (c Codec[T]) Append(b []byte, v T) []byte { return c.app(b, v) }

// Decode decodes one value from the front of b and returns it and the
// number of bytes it used.
func (c Codec[T]) Decode(b []byte) (T, int, error) { return c.dec(b) }

// NewCodec makes a codec from functions; fixed is the encoded size of
// every value, or 0 for variable-size encodings.
func NewCodec[T any](name string, fixed int, appendFn func(b []byte, v T) []byte, decode func(b []byte) (T, int, error)) Codec[T] {
	return Codec[T]{name: name, size: fixed, app: appendFn, dec: decode}
}

// RawCodec encodes a fixed-size, pointer-free T as its memory.
func RawCodec[T any]() (Codec[T], error) {
	if err := checkRaw[T](); err != nil {
		return Codec[T]{}, fmt.Errorf("reduce: %w", err)
	}
	size := int(unsafe.Sizeof(*new(T)))
	return Codec[T]{
		name: "raw",
		size: size,
		app: func(b []byte, v T) []byte {
			return append(b, unsafe.Slice((*byte)(unsafe.Pointer(&v)), size)...)
		},
		dec: func(b []byte) (T, int, error) {
			var v T
			if len(b) < size {
				return v, 0, fmt.Errorf("reduce: raw record of %d bytes, want %d", len(b), size)
			}
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&v)), size), b)
			return v, size, nil
		},
	}, nil
}

// checkRaw reports whether T can move as its memory: fixed-size and
// pointer-free, the types that may also live in segment memory
// (pgas.CheckElem).
func checkRaw[T any]() error {
	t := reflect.TypeFor[T]()
	if err := elem.Raw(t); err != nil {
		return fmt.Errorf("type %v cannot move as raw memory: %w; use fixed-size, pointer-free types", t, err)
	}
	return nil
}

// appender is an io.Writer that appends to a slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) { a.b = append(a.b, p...); return len(p), nil }

// msgpackCodec builds a variable-size codec from a msgpack encode and
// decode call.
func msgpackCodec[T any](name string, enc func(*msgpack.Encoder, T) error, dec func(*msgpack.Decoder) (T, error)) Codec[T] {
	c := newMsgpackCodec(name, enc, dec)
	c.mk = func() Codec[T] { return msgpackCodec(name, enc, dec) }
	return c
}

func newMsgpackCodec[T any](name string, enc func(*msgpack.Encoder, T) error, dec func(*msgpack.Decoder) (T, error)) Codec[T] {
	w := &appender{}
	e := msgpack.NewEncoder(w)
	rd := bytes.NewReader(nil)
	d := msgpack.NewDecoder(rd)
	return Codec[T]{
		name: name,
		app: func(b []byte, v T) []byte {
			w.b = b
			if err := enc(e, v); err != nil {
				panic(fmt.Sprintf("reduce: %s encode: %v", name, err)) // appending to memory cannot fail
			}
			b, w.b = w.b, nil
			return b
		},
		dec: func(b []byte) (T, int, error) {
			// Check the claimed length first: msgpack reserves it before
			// reading, so a corrupt header could allocate gigabytes.
			if err := checkLength(b); err != nil {
				var z T
				return z, 0, fmt.Errorf("reduce: %s record: %w", name, err)
			}
			rd.Reset(b)
			d.Reset(rd)
			v, err := dec(d)
			if err != nil {
				return v, 0, fmt.Errorf("reduce: %s record: %w", name, err)
			}
			return v, len(b) - rd.Len(), nil
		},
	}
}

// checkLength reads a msgpack str or bin header at the front of b and
// reports an error if the length it claims exceeds the bytes present.
func checkLength(b []byte) error {
	_, _, _, err := strHeader(b)
	return err
}

// strHeader reads a msgpack str or bin header at the front of b: its
// length hdr and the byte count n it claims, checked against the bytes
// present. ok is false, with no error, if b starts with another code.
func strHeader(b []byte) (hdr, n int, ok bool, err error) {
	if len(b) == 0 {
		return 0, 0, false, fmt.Errorf("empty record")
	}
	switch c := b[0]; {
	case c >= 0xa0 && c <= 0xbf: // fixstr
		hdr, n = 1, int(c&0x1f)
	case c == 0xd9 || c == 0xc4: // str8, bin8
		if len(b) < 2 {
			return 0, 0, false, fmt.Errorf("record header cut short")
		}
		hdr, n = 2, int(b[1])
	case c == 0xda || c == 0xc5: // str16, bin16
		if len(b) < 3 {
			return 0, 0, false, fmt.Errorf("record header cut short")
		}
		hdr, n = 3, int(binary.BigEndian.Uint16(b[1:]))
	case c == 0xdb || c == 0xc6: // str32, bin32
		if len(b) < 5 {
			return 0, 0, false, fmt.Errorf("record header cut short")
		}
		hdr, n = 5, int(binary.BigEndian.Uint32(b[1:]))
	default:
		return 0, 0, false, nil // not a string header: the caller reports it
	}
	if n > len(b)-hdr {
		return 0, 0, false, fmt.Errorf("record claims %d bytes, %d present", n, len(b)-hdr)
	}
	return hdr, n, true, nil
}

// StringCodec encodes strings as msgpack str records: the bytes msgpack's
// EncodeString writes (fixstr, str8, str16 or str32), written and read
// here directly, without an encoder, since every pair's key goes through
// it. Decode takes msgpack bin records too, as msgpack's DecodeString does.
func StringCodec() Codec[string] {
	return Codec[string]{name: "msgpack-string", app: appendMsgpackString, dec: decodeMsgpackString} // no state: one instance serves every store
}

func appendMsgpackString(b []byte, v string) []byte {
	switch n := len(v); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n < 1<<8:
		b = append(b, 0xd9, byte(n))
	case n < 1<<16:
		b = append(b, 0xda, byte(n>>8), byte(n))
	default:
		b = append(b, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, v...)
}

func decodeMsgpackString(b []byte) (string, int, error) {
	hdr, n, ok, err := strHeader(b)
	switch {
	case err != nil:
		return "", 0, fmt.Errorf("reduce: msgpack-string record: %w", err)
	case ok:
		return string(b[hdr : hdr+n]), hdr + n, nil
	case b[0] == 0xc0: // nil, which msgpack decodes as ""
		return "", 1, nil
	}
	return "", 0, fmt.Errorf("reduce: msgpack-string record: code 0x%x is not a string", b[0])
}

// BytesCodec encodes byte slices as msgpack bin records.
func BytesCodec() Codec[[]byte] {
	return msgpackCodec("msgpack-bytes",
		func(e *msgpack.Encoder, v []byte) error { return e.EncodeBytes(v) },
		func(d *msgpack.Decoder) ([]byte, error) { return d.DecodeBytes() })
}

// MsgpackCodec encodes T with msgpack's reflection: structs (as arrays of
// their fields, in order), slices, maps, arrays, strings and numbers, the
// default (CodecFor) of types that cannot move as raw memory. Every store
// makes its own instance (its encoder and decoder), so the codec may be
// shared by the ranks of a job and composed into other codecs' functions
// only through a store. T must be encodable whole: MsgpackCodec refuses
// (with an error naming the field) pointers, interfaces, channels and
// functions, which would not come back as they went, and unexported
// struct fields, which msgpack skips.
func MsgpackCodec[T any]() (Codec[T], error) {
	t := reflect.TypeFor[T]()
	if err := encodable(t, t.String(), map[reflect.Type]bool{}); err != nil {
		return Codec[T]{}, fmt.Errorf("reduce: msgpack cannot carry %v: %w; pass a codec made with NewCodec", t, err)
	}
	enc := func(e *msgpack.Encoder, v T) error {
		e.UseArrayEncodedStructs(true)
		return e.Encode(v)
	}
	dec := func(d *msgpack.Decoder) (T, error) {
		var v T
		err := d.Decode(&v)
		return v, err
	}
	return msgpackCodec("msgpack", enc, dec), nil
}

// encodable reports why msgpack's reflection would not give a value of
// type t back as it was, naming the part of t at path.
func encodable(t reflect.Type, path string, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return nil
	case reflect.Array, reflect.Slice:
		return encodable(t.Elem(), path+"[]", seen)
	case reflect.Map:
		if err := encodable(t.Key(), path+" key", seen); err != nil {
			return err
		}
		return encodable(t.Elem(), path+" value", seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				return fmt.Errorf("%s.%s is unexported (msgpack skips it)", path, f.Name)
			}
			if err := encodable(f.Type, path+"."+f.Name, seen); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s is a %v", path, t.Kind())
}

// CodecFor returns the default codec for T: raw memory for fixed-size,
// pointer-free types; msgpack for string and []byte; msgpack's reflection
// (MsgpackCodec) for the other types it carries whole: structs of
// exported fields, slices, maps and arrays of those. Other types (with
// pointers, interfaces, channels, functions or unexported fields) need a
// codec made with NewCodec.
func CodecFor[T any]() (Codec[T], error) {
	var z T
	switch any(z).(type) {
	case string:
		return any(StringCodec()).(Codec[T]), nil
	case []byte:
		return any(BytesCodec()).(Codec[T]), nil
	}
	if reflect.TypeFor[T]().Kind() == reflect.String { // a named string type: StringCodec's bytes
		return Codec[T]{name: "msgpack-string",
			app: func(b []byte, v T) []byte { return appendMsgpackString(b, *(*string)(unsafe.Pointer(&v))) },
			dec: func(b []byte) (T, int, error) {
				s, n, err := decodeMsgpackString(b)
				return *(*T)(unsafe.Pointer(&s)), n, err
			}}, nil
	}
	if err := checkRaw[T](); err != nil {
		c, merr := MsgpackCodec[T]()
		if merr != nil {
			return Codec[T]{}, fmt.Errorf("reduce: no default codec for %v (%w, and %w); pass one made with NewCodec", reflect.TypeFor[T](), err, errors.Unwrap(merr))
		}
		return c, nil
	}
	return RawCodec[T]()
}
