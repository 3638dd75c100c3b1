// Package wrap provides transport wrappers: counting, fault injection,
// latency.
//
// Each wrapper is a transport.Transport that wraps another one; its Open
// opens the inner transport and wraps every endpoint it returns, so a
// wrapper goes wherever a transport goes, in particular into
// pgas.Config.Transport. Wrappers compose: the inner transport may itself be
// a wrapper.
//
//   - Counting counts, per rank, every endpoint operation by kind and, per
//     peer, the messages and bytes sent and received (in
//     transport.Traffic, the type pgas.Stats counts in), and the calls and
//     bytes of native collectives.
//   - Faulty makes one chosen operation of one chosen rank fail with an
//     error wrapping ErrInjected, to test that a failure anywhere ends the
//     job cleanly.
//   - Latency adds a one-way latency to every operation, to test that code
//     overlaps communication (a batch of GetAsync calls costs one latency,
//     not one per call). NewNodeLatency makes one that delays only what
//     crosses a node boundary (ranks per node as pgas.Config.RanksPerNode
//     lays them out), by a latency plus the bytes at a bandwidth
//     (NodeLink): a one-host job then pays what a cluster's network would
//     charge, and nothing inside a node.
//
// A wrapper keeps what its inner endpoint offers beyond transport.Endpoint:
// its endpoints implement transport.Extended, and pass on the inner
// endpoint's native collectives (so wrap.NewCounting(mpiTransport) still
// runs package coll on MPI's collectives) and its Failed channel,
// unchanged. Each wrapper applies its own semantics to the native
// collective calls, which are operations of the rank like any other:
// Counting counts them (OpBroadcast, OpAllgatherv, OpAlltoallv, and
// Counts.NativeSent and NativeReceived), Faulty numbers them and may fail
// one, Latency delays them.
//
// Counting the traffic of a job:
//
//	c := wrap.NewCounting(inproc.New())
//	err := pgas.Run(ctx, pgas.Config{Ranks: 4, Transport: c}, body)
//	tot := c.Total()
//	fmt.Println(tot.Ops[wrap.OpGet], tot.Messages(), tot.BytesReceived())
//	fmt.Println(c.Counts(2).Peers[0].BytesSent) // bytes rank 2 put to rank 0
//
// Checking that a failure at every operation of rank 1 fails the job with
// that error and nothing hangs:
//
//	for op := int64(0); ; op++ {
//		f := wrap.NewFaulty(inproc.New(), 1, op)
//		err := pgas.Run(ctx, pgas.Config{Ranks: 3, Transport: f}, body)
//		if !f.Injected() {
//			break // op is past rank 1's last operation: the job ran clean
//		}
//		if !errors.Is(err, wrap.ErrInjected) {
//			t.Fatalf("op %d: %v", op, err)
//		}
//	}
//
// Running on a slow network, and composing wrappers:
//
//	tr := wrap.NewCounting(wrap.NewLatency(inproc.New(), 50*time.Microsecond))
//	err := pgas.Run(ctx, pgas.Config{Ranks: 8, Transport: tr}, body)
//
// Errors made by a wrapper start with "wrap: "; errors of the inner
// transport are returned unchanged.
package wrap
