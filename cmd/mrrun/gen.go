package main

import (
	"context"
	"io"
)

// cmdGen is mrrun gen APP [flags] OUTPUT. (Being written.)
func cmdGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return usagef("gen: not written yet")
}
