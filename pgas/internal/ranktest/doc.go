// Package ranktest is the harness of the tests of the transports whose
// ranks are processes (pgas/shm, pgas/mpi): a test binary that is also the
// program of its ranks.
//
// A test starts copies of its own binary as ranks, with Vars.Env naming an
// SPMD body and its argument; the copies' TestMain sees that it runs as a
// rank and calls RunBody instead of the tests. A body reports what the
// test checks on stdout, in lines with a fixed prefix that the test reads
// back with Lines; RunBody adds "BODYOK <rank>" when the body returns nil,
// which CheckBodiesOK counts.
//
//	var vars = ranktest.Vars{Body: "MYTEST_BODY", Arg: "MYTEST_ARG"}
//
//	var bodies = map[string]ranktest.Body[*my.Transport]{
//		"conformance": func(ctx context.Context, tr *my.Transport, _ string) error {
//			return ranktest.Conformance(ctx, config(tr))
//		},
//	}
//
//	func TestMain(m *testing.M) {
//		if tr, ok := my.FromEnv(); ok {
//			os.Exit(ranktest.RunBody(context.Background(), vars, bodies, tr.Rank(), tr))
//		}
//		os.Exit(m.Run())
//	}
//
// It also holds what both harnesses check and time: the processes a
// launch left (JobProcs), the conformance suites run in one job, and the
// timed loops of the benchmarks, whose rank 0 prints "RESULT <ns>".
//
// Everything here is for tests: it prints to stdout and panics on a
// malformed body argument.
package ranktest
