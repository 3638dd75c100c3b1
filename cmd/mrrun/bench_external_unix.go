//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts cmd in a process group of its own and makes its
// context's cancellation kill the whole group: what sh -c started dies
// with it, instead of running on after an interrupted bench.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
