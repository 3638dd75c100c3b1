//go:build !mpi && !mpich

package mpi

import (
	"context"

	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Built reports whether this binary was compiled with MPI (the mpi or
// mpich build tag).
const Built = false

// Transport is the MPI transport; this binary was built without MPI, so
// none can be made.
type Transport struct{}

var _ transport.Transport = (*Transport)(nil)

// Init returns ErrNotBuilt: this binary was built without MPI.
func Init(Options) (*Transport, error) { return nil, ErrNotBuilt }

// The methods of a Transport built without MPI return zero values; Open
// and Finalize return ErrNotBuilt.

func (*Transport) Name() string         { return "mpi" }
func (*Transport) Rank() int            { return 0 }
func (*Transport) Size() int            { return 0 }
func (*Transport) ThreadLevel() string  { return "" }
func (*Transport) Library() string      { return "" }
func (*Transport) NativeCalls() int64   { return 0 }
func (*Transport) Finalize() error      { return ErrNotBuilt }
func (*Transport) Abort(code int)       {}
func (*Transport) Options() (o Options) { return o }
func (*Transport) Open(context.Context, transport.Job) ([]transport.Endpoint, error) {
	return nil, ErrNotBuilt
}
