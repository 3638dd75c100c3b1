//go:build !shmem

package shmem

import (
	"context"

	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Built reports whether this binary was compiled with OpenSHMEM (the
// shmem build tag).
const Built = false

// Transport is the OpenSHMEM transport; this binary was built without
// OpenSHMEM, so none can be made.
type Transport struct{}

var _ transport.Transport = (*Transport)(nil)

// Init returns ErrNotBuilt: this binary was built without OpenSHMEM.
func Init(Options) (*Transport, error) { return nil, ErrNotBuilt }

// The methods of a Transport built without OpenSHMEM return zero values;
// Open and Finalize return ErrNotBuilt.

func (*Transport) Name() string         { return "shmem" }
func (*Transport) Rank() int            { return 0 }
func (*Transport) Size() int            { return 0 }
func (*Transport) ThreadLevel() string  { return "" }
func (*Transport) Finalize() error      { return ErrNotBuilt }
func (*Transport) Abort(code int)       {}
func (*Transport) Options() (o Options) { return o }
func (*Transport) Open(context.Context, transport.Job) ([]transport.Endpoint, error) {
	return nil, ErrNotBuilt
}
