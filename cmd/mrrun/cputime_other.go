//go:build !unix

package main

import "time"

// processCPU cannot tell here.
func processCPU() (time.Duration, bool) { return 0, false }
