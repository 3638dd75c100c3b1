package wrap_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

func ExampleCounting() {
	ctx := context.Background()
	c := wrap.NewCounting(inproc.New())
	eps, err := c.Open(ctx, transport.Job{Ranks: 3, SegmentBytes: 1024})
	if err != nil {
		panic(err)
	}
	buf := make([]byte, 100)
	_ = eps[0].Put(ctx, 1, 0, buf)
	_ = eps[0].Put(ctx, 1, 0, buf)
	_ = eps[0].Get(ctx, 2, 0, buf[:24])

	s := c.Counts(0)
	fmt.Println("puts", s.Ops[wrap.OpPut], "gets", s.Ops[wrap.OpGet])
	for p, pc := range s.Peers {
		fmt.Printf("to rank %d: %+v\n", p, pc)
	}
	// Output:
	// puts 2 gets 1
	// to rank 0: {Messages:0 BytesSent:0 BytesReceived:0}
	// to rank 1: {Messages:2 BytesSent:200 BytesReceived:0}
	// to rank 2: {Messages:1 BytesSent:0 BytesReceived:24}
}

func ExampleFaulty() {
	ctx := context.Background()
	f := wrap.NewFaulty(inproc.New(), 0, 1) // the second operation of rank 0
	eps, err := f.Open(ctx, transport.Job{Ranks: 2, SegmentBytes: 1024})
	if err != nil {
		panic(err)
	}
	buf := make([]byte, 8)
	fmt.Println(eps[0].Put(ctx, 1, 0, buf))
	err = eps[0].Get(ctx, 1, 0, buf)
	fmt.Println(err)
	fmt.Println(errors.Is(err, wrap.ErrInjected), f.Injected())
	fmt.Println(eps[0].Get(ctx, 1, 0, buf))
	// Output:
	// <nil>
	// wrap: injected failure: rank 0 op 1 (Get)
	// true true
	// <nil>
}
