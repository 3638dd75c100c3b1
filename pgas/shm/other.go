//go:build !linux

package shm

import (
	"context"
	"errors"
	"os"

	"github.com/pgasmr/pgasmr/pgas/transport"
)

// errUnsupported is returned on systems without the futexes and /dev/shm
// the transport needs.
var errUnsupported = errors.New("shm: the shared-memory transport needs Linux")

// Transport is the shared-memory transport; on this system it cannot run.
type Transport struct{}

var _ transport.Transport = (*Transport)(nil)

// FromEnv reports ok=false unless a launcher set EnvSegment, and then
// fails: the transport needs Linux.
func FromEnv() (*Transport, bool, error) {
	if os.Getenv(EnvSegment) == "" {
		return nil, false, nil
	}
	return nil, true, errUnsupported
}

func (*Transport) Name() string        { return "shm" }
func (*Transport) Rank() int           { return 0 }
func (*Transport) Size() int           { return 0 }
func (*Transport) JobID() string       { return "" }
func (*Transport) SegmentBytes() int64 { return 0 }

func (*Transport) Open(context.Context, transport.Job) ([]transport.Endpoint, error) {
	return nil, errUnsupported
}

// Launch fails: the transport needs Linux.
func Launch(ctx context.Context, opts LaunchOptions) error { return errUnsupported }

// CleanStale does nothing on this system.
func CleanStale() ([]string, error) { return nil, nil }
