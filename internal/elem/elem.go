// Package elem holds what the PGAS runtime and the pair containers of
// package reduce both need to know about element types, so that neither
// imports the other: the numeric type sets and the check that a type is
// fixed-size and pointer-free (may live in segment memory, may move as raw
// bytes).
package elem

import (
	"fmt"
	"reflect"
)

// Integer is the set of integer types, including types defined on them.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// Float is the set of floating-point types.
type Float interface {
	~float32 | ~float64
}

// Number is every type the arithmetic operators accept.
type Number interface {
	Integer | Float
}

// Raw reports why values of t cannot move as their bytes, or nil if they
// can: t must have a size and be plain data, a number, a bool, or an array
// or struct of them, with no pointer, string, slice, map or other
// reference inside. The error names the offending part ("T.f[] is a
// string", "it has size 0"), without a package prefix; the caller says
// what t was for.
func Raw(t reflect.Type) error {
	if t.Size() == 0 {
		return fmt.Errorf("it has size 0")
	}
	return plain(t, t.String())
}

func plain(t reflect.Type, path string) error {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return nil
	case reflect.Array:
		return plain(t.Elem(), path+"[]")
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if err := plain(f.Type, path+"."+f.Name); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s is a %v", path, t.Kind())
}
