package main

import (
	"context"
	"io"
)

// cmdBench is mrrun bench. (Being written.)
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return usagef("bench: not written yet")
}
