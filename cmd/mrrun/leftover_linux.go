package main

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// killChildren kills this process's children (an shm launcher's ranks)
// with SIGKILL and waits, for at most 100 ms, until each has died: then
// none writes any more where they spilled.
func killChildren() {
	kids := childPIDs(os.Getpid())
	for _, k := range kids {
		syscall.Kill(k, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(100 * time.Millisecond); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		alive := false
		for _, k := range kids {
			if s, ok := procState(k); ok && s != 'Z' && s != 'X' {
				alive = true
			}
		}
		if !alive {
			return
		}
	}
}

// childPIDs returns the processes whose parent is pid, from /proc.
func childPIDs(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
		if len(f) > 1 && string(f[1]) == strconv.Itoa(pid) {
			out = append(out, c)
		}
	}
	return out
}

// procState returns the state letter of process pid (R, S, Z ...), and
// false if there is no such process.
func procState(pid int) (byte, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	if len(f) == 0 || len(f[0]) == 0 {
		return 0, false
	}
	return f[0][0], true
}
