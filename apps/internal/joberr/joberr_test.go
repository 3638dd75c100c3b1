package joberr

import (
	"errors"
	"testing"

	"github.com/pgasmr/pgasmr/mr"
)

func TestWrap(t *testing.T) {
	own := errors.New("linreg: F:3 (offset 8): x \"hello\" is not a finite number")
	other := errors.New("disk on fire")
	for _, c := range []struct {
		err  error
		want string
	}{
		{&mr.MapError{Element: -1, Err: own}, own.Error()},
		{&mr.MapError{Element: 4, Err: own}, own.Error()},
		{&mr.MapError{Element: 4, Err: other}, "linreg: mr: map of input element 4: disk on fire"},
		{own, own.Error()},
		{other, "linreg: disk on fire"},
	} {
		got := Wrap("linreg", c.err)
		if got.Error() != c.want {
			t.Errorf("Wrap(%q) = %q; want %q", c.err, got, c.want)
		}
		if !errors.Is(got, own) && !errors.Is(got, other) {
			t.Errorf("Wrap(%q) lost the cause", c.err)
		}
	}
	if Wrap("linreg", nil) != nil {
		t.Error("Wrap(nil) is not nil")
	}
}
