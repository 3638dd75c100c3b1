//go:build !unix

package main

import "os/exec"

// ownProcessGroup does nothing here: a cancelled context kills the
// command's own process only (exec.CommandContext's default).
func ownProcessGroup(cmd *exec.Cmd) {}
