//go:build !linux

package linreg

import (
	"errors"
	"os"
)

func mapRange(f *os.File, off, n int64) ([]byte, func(), error) {
	return nil, nil, errors.ErrUnsupported
}
