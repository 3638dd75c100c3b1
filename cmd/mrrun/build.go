package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// buildInfo describes how this binary was built, for --version and under
// a bench's figures: what a whole-process time depends on besides the
// code. A cgo binary (CGO_ENABLED=1, the default where a C compiler is
// found: package net, which pflag and net/mail import, then links the cgo
// runtime) starts about 2 ms slower than a static one (CGO_ENABLED=0),
// which every transport but -tags mpi and shmem can use.
type buildInfo struct {
	Go   string `json:"go"`             // the toolchain
	Cgo  bool   `json:"cgo"`            // linked with the cgo runtime
	Tags string `json:"tags,omitempty"` // build tags, comma-separated
	Race bool   `json:"race,omitempty"` // built with -race
}

func readBuildInfo() buildInfo {
	b := buildInfo{Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Go = bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "CGO_ENABLED":
			b.Cgo = s.Value == "1"
		case "-tags":
			b.Tags = s.Value
		case "-race":
			b.Race = s.Value == "true"
		}
	}
	return b
}

// String is the description --version prints after the version.
func (b buildInfo) String() string {
	cgo := "0"
	if b.Cgo {
		cgo = "1"
	}
	parts := []string{b.Go, runtime.GOOS + "/" + runtime.GOARCH, "CGO_ENABLED=" + cgo}
	if b.Tags != "" {
		parts = append(parts, "tags "+b.Tags)
	}
	if b.Race {
		parts = append(parts, "race")
	}
	return fmt.Sprintf("(%s)", strings.Join(parts, ", "))
}

// versionLine is what --version prints.
func versionLine() string { return fmt.Sprintf("mrrun %s %s", version, readBuildInfo()) }
