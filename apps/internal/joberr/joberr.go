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
