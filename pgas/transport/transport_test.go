package transport_test

import (
	"context"
	"testing"

	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// plain hides everything of an endpoint but the Endpoint methods.
type plain struct{ transport.Endpoint }

// withColl is a plain endpoint that also implements Collectives (old
// style, without the Extended accessor).
type withColl struct{ transport.Endpoint }

func (withColl) Broadcast(context.Context, int, []byte) error                   { return nil }
func (withColl) Allgatherv(context.Context, []byte, []byte, []int, []int) error { return nil }
func (withColl) Alltoallv(context.Context, []byte, []int, []int, []byte, []int, []int) error {
	return nil
}

// withFailed is a plain endpoint that implements FailureNotifier.
type withFailed struct {
	transport.Endpoint
	ch chan struct{}
}

func (w withFailed) Failed() <-chan struct{} { return w.ch }

func TestExtend(t *testing.T) {
	eps, err := inproc.New().Open(t.Context(), transport.Job{Ranks: 1, SegmentBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	ep := eps[0]
	defer ep.Close()

	// An Extended endpoint is returned as it is.
	x, ok := ep.(transport.Extended)
	if !ok {
		t.Fatal("inproc endpoint is not Extended")
	}
	if got := transport.Extend(ep); got != x {
		t.Errorf("Extend(inproc endpoint) = %v; want the endpoint itself", got)
	}
	if x.Collectives() != nil || x.Failed() != nil {
		t.Errorf("inproc endpoint: Collectives() = %v, Failed() = %v; want nil, nil", x.Collectives(), x.Failed())
	}

	// A plain endpoint gets a shim without extras, which still works.
	s := transport.Extend(plain{ep})
	if s.Collectives() != nil || s.Failed() != nil {
		t.Errorf("Extend(plain): Collectives() = %v, Failed() = %v; want nil, nil", s.Collectives(), s.Failed())
	}
	if s.Rank() != 0 || s.Size() != 1 || len(s.Segment()) != 64 {
		t.Errorf("Extend(plain): Rank, Size, len(Segment) = %d, %d, %d", s.Rank(), s.Size(), len(s.Segment()))
	}
	if err := s.Put(t.Context(), 0, 8, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if got := ep.Segment()[8:11]; string(got) != "\x01\x02\x03" {
		t.Errorf("Put through the shim wrote %v", got)
	}
	// The shim does not itself pretend to be a Collectives.
	if _, ok := s.(transport.Collectives); ok {
		t.Error("the shim of a plain endpoint implements Collectives")
	}

	// The old optional interfaces are picked up once.
	wc := withColl{ep}
	if got := transport.Extend(wc).Collectives(); got != transport.Collectives(wc) {
		t.Errorf("Extend(withColl).Collectives() = %v; want the endpoint", got)
	}
	ch := make(chan struct{})
	if got := transport.Extend(withFailed{ep, ch}).Failed(); got != (<-chan struct{})(ch) {
		t.Errorf("Extend(withFailed).Failed() = %v; want its channel", got)
	}
}
