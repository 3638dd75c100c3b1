// Package joberr words the errors of the applications' jobs: one prefix
// per layer that adds information, never the same one twice.
package joberr

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pgasmr/pgasmr/mr"
)

// Wrap returns err as the error of app's job. The app's own map errors
// already name the app and their input (file, line, offset), so a
// *mr.MapError around one is dropped: "linreg: F:3: x is not a number",
// not "linreg: mr: array map: linreg: F:3: ...". Any other error gets the
// app's name in front, once. Wrap(app, nil) is nil.
func Wrap(app string, err error) error {
	if err == nil {
		return nil
	}
	prefix := app + ": "
	var me *mr.MapError
	if errors.As(err, &me) && strings.HasPrefix(me.Err.Error(), prefix) {
		return me.Err
	}
	if strings.HasPrefix(err.Error(), prefix) {
		return err
	}
	return fmt.Errorf("%s%w", prefix, err)
}

// Prefix returns the problems of errs (each of which may join several,
// as errors.Join does) joined, each on its line with app's name in front
// once: "wordcount: Top -1, want >= 0". Prefix of no problem is nil.
func Prefix(app string, errs ...error) error {
	var out []error
	var add func(err error)
	add = func(err error) {
		if err == nil {
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				add(e)
			}
			return
		}
		if strings.HasPrefix(err.Error(), app+": ") {
			out = append(out, err)
			return
		}
		out = append(out, fmt.Errorf("%s: %w", app, err))
	}
	for _, err := range errs {
		add(err)
	}
	return errors.Join(out...)
}
