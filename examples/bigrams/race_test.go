//go:build race

package main

// The race detector slows the job about sixfold: test on fewer messages.
func init() { every = 100 }
