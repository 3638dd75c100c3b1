package coll_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/coll/colltest"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport/transporttest"
)

type myInt int16 // a defined type: the constraints accept ~ types

func TestReduceOps(t *testing.T) {
	check := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("Add int64", coll.Add[int64]().Combine(3, -5), int64(-2))
	check("Add uint8 wraps", coll.Add[uint8]().Combine(250, 10), uint8(4))
	check("Add float32", coll.Add[float32]().Combine(1.5, 2.25), float32(3.75))
	check("Mult int32", coll.Mult[int32]().Combine(-3, 7), int32(-21))
	check("Mult float64", coll.Mult[float64]().Combine(0.5, 8), 4.0)
	check("Band uint32", coll.Band[uint32]().Combine(0b1100, 0b1010), uint32(0b1000))
	check("Bor int", coll.Bor[int]().Combine(0b1100, 0b1010), 0b1110)
	check("Bxor uintptr", coll.Bxor[uintptr]().Combine(0b1100, 0b1010), uintptr(0b0110))
	check("Bxor myInt", coll.Bxor[myInt]().Combine(5, 3), myInt(6))
	check("LogAnd int8 (-3, 4)", coll.LogAnd[int8]().Combine(-3, 4), int8(1))
	check("LogAnd int8 (0, 4)", coll.LogAnd[int8]().Combine(0, 4), int8(0))
	check("LogOr uint (0, 0)", coll.LogOr[uint]().Combine(0, 0), uint(0))
	check("LogOr uint (0, 9)", coll.LogOr[uint]().Combine(0, 9), uint(1))
	check("LogAnd float64 (0.5, NaN)", coll.LogAnd[float64]().Combine(0.5, math.NaN()), 1.0)
	check("LogOr float32 (0, -0)", coll.LogOr[float32]().Combine(0, float32(math.Copysign(0, -1))), float32(0))
	check("Min int64", coll.Min[int64]().Combine(4, -4), int64(-4))
	check("Max float64", coll.Max[float64]().Combine(-1, 2.5), 2.5)
	check("Min string", coll.Min[string]().Combine("b", "a"), "a")
	check("Max uint16", coll.Max[uint16]().Combine(7, 65535), uint16(65535))
	if v := coll.Max[float64]().Combine(1, math.NaN()); !math.IsNaN(v) {
		t.Errorf("Max(1, NaN) = %v, want NaN", v)
	}
	cat := coll.NonCommFunc("cat", func(a, b string) string { return a + b })
	check("NonCommFunc order", cat.Combine("ab", "cd"), "abcd")
	gcd := coll.Func("gcd", func(a, b uint64) uint64 {
		for b != 0 {
			a, b = b, a%b
		}
		return a
	})
	check("Func gcd", gcd.Combine(12, 18), uint64(6))

	for _, c := range []struct {
		name string
		comm bool
		got  string
		gotC bool
	}{
		{"add", true, coll.Add[int]().Name(), coll.Add[int]().Commutative()},
		{"mult", true, coll.Mult[int]().Name(), coll.Mult[int]().Commutative()},
		{"band", true, coll.Band[int]().Name(), coll.Band[int]().Commutative()},
		{"bor", true, coll.Bor[int]().Name(), coll.Bor[int]().Commutative()},
		{"bxor", true, coll.Bxor[int]().Name(), coll.Bxor[int]().Commutative()},
		{"logand", true, coll.LogAnd[int]().Name(), coll.LogAnd[int]().Commutative()},
		{"logor", true, coll.LogOr[int]().Name(), coll.LogOr[int]().Commutative()},
		{"min", true, coll.Min[int]().Name(), coll.Min[int]().Commutative()},
		{"max", true, coll.Max[int]().Name(), coll.Max[int]().Commutative()},
		{"gcd", true, gcd.Name(), gcd.Commutative()},
		{"cat", false, cat.Name(), cat.Commutative()},
	} {
		if c.got != c.name || c.gotC != c.comm {
			t.Errorf("op %q: Name() = %q, Commutative() = %v, want %v", c.name, c.got, c.gotC, c.comm)
		}
	}

	var zero coll.Op[int]
	if zero.Valid() || !coll.Add[int]().Valid() {
		t.Errorf("Valid: zero %v, Add %v", zero.Valid(), coll.Add[int]().Valid())
	}
	mustPanic(t, "zero Op", func() { zero.Combine(1, 2) })
	mustPanic(t, "nil function", func() { coll.Func[int]("f", nil) })
	mustPanic(t, "nil function", func() { coll.NonCommFunc[int]("f", nil) })
}

func mustPanic(t *testing.T, want string, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		v := recover()
		if v == nil || !strings.Contains(fmt.Sprint(v), want) {
			t.Errorf("want a panic containing %q, got %v", want, v)
		}
	}()
	fn()
}

// reduceConfigs are the jobs the reduction checks run in.
var reduceConfigs = []pgas.Config{
	{Ranks: 1},
	{Ranks: 2},
	{Ranks: 3, RanksPerNode: 2},
	{Ranks: 5, RanksPerNode: 2, FragmentBytes: 40, NoCheck: true},
	{Ranks: 8, RanksPerNode: 2},
}

// TestReduceChecks runs the suite's reduction checks ("reduce-...") alone.
func TestReduceChecks(t *testing.T) {
	n := 0
	for _, cfg := range reduceConfigs {
		cfg.SyncTimeout = time.Minute
		t.Run(fmt.Sprintf("ranks=%d", cfg.Ranks), func(t *testing.T) {
			for _, c := range colltest.Checks() {
				if !strings.HasPrefix(c.Name, "reduce-") {
					continue
				}
				n++
				t.Run(c.Name, func(t *testing.T) {
					if cfg.Ranks < c.MinRanks {
						t.Skipf("needs %d ranks", c.MinRanks)
					}
					if err := pgas.Run(t.Context(), cfg, c.Run); err != nil {
						t.Fatal(err)
					}
				})
			}
		})
	}
	if n == 0 {
		t.Fatal("no reduce- checks registered")
	}
}

// TestReduceChecksNative runs the reduction checks on a transport with
// native collectives, which the world team's partial results then travel
// by.
func TestReduceChecksNative(t *testing.T) {
	for _, ranks := range []int{3, 5} {
		for _, c := range colltest.Checks() {
			if !strings.HasPrefix(c.Name, "reduce-") {
				continue
			}
			t.Run(fmt.Sprintf("ranks=%d/%s", ranks, c.Name), func(t *testing.T) {
				nt := transporttest.NewNative(inproc.New())
				cfg := pgas.Config{Ranks: ranks, RanksPerNode: 2, Transport: nt, SyncTimeout: time.Minute}
				if err := pgas.Run(t.Context(), cfg, c.Run); err != nil {
					t.Fatal(err)
				}
				if nt.Calls() == 0 {
					t.Fatal("the native collectives were not used")
				}
			})
		}
	}
}

// reducePanic runs fn on ranks ranks and wants the job to fail with a
// panic whose message contains want.
func reducePanic(t *testing.T, ranks int, want string, fn func(ctx context.Context, r *pgas.Rank) error) {
	t.Helper()
	cfg := pgas.Config{Ranks: ranks, SyncTimeout: 20 * time.Second, ShutdownTimeout: 10 * time.Second}
	err := pgas.Run(t.Context(), cfg, fn)
	var pe *pgas.PanicError
	if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), want) {
		t.Fatalf("want a panic containing %q, got %v", want, err)
	}
}

func TestReducePanics(t *testing.T) {
	arr := func(ctx context.Context, r *pgas.Rank) *pgas.Array[int64] {
		a, err := pgas.AllAllocArray[int64](ctx, r, int64(4*r.N()), 4)
		if err != nil {
			panic(err)
		}
		return a
	}
	one := func() coll.Buf[int64] { return coll.Private(make([]int64, 1)) }
	cases := []struct {
		name, want string
		fn         func(ctx context.Context, r *pgas.Rank) error
	}{
		{"zero op", "zero Op", func(ctx context.Context, r *pgas.Rank) error {
			return coll.Reduce(ctx, r.World(), one(), one(), 1, coll.Op[int64]{})
		}},
		{"allthr", "AllThr is not defined", func(ctx context.Context, r *pgas.Rank) error {
			return coll.Allreduce(ctx, r.World(), one(), one(), 1, coll.Add[int64](), coll.AllThr())
		}},
		{"short private source", "private source has 1 elements, needs 3", func(ctx context.Context, r *pgas.Rank) error {
			return coll.Reduce(ctx, r.World(), one(), one(), 3, coll.Add[int64]())
		}},
		{"shared source range", "outside array", func(ctx context.Context, r *pgas.Rank) error {
			a := arr(ctx, r)
			return coll.Reduce(ctx, r.World(), one(), coll.Shared(a, 1), int(a.Len()), coll.Add[int64]())
		}},
		{"allreduce in place slots", "outside array", func(ctx context.Context, r *pgas.Rank) error {
			a := arr(ctx, r)
			return coll.AllreduceInPlace(ctx, r.World(), coll.Shared(a, 5), 3, coll.Add[int64]())
		}},
		{"cyclic chunk not owned", "CyclicChunks: chunk 1", func(ctx context.Context, r *pgas.Rank) error {
			a := arr(ctx, r)
			// chunk 0 on rank 0 (elements 0..3), chunk 1 also on rank 0.
			return coll.ReduceV(ctx, r.World(), one(), coll.Shared(a, 0), []coll.Span{{0, 2}, {2, 2}}, coll.Add[int64](), coll.CyclicChunks())
		}},
		{"cyclic chunk across blocks", "does not lie on rank 0", func(ctx context.Context, r *pgas.Rank) error {
			a := arr(ctx, r)
			return coll.ReduceV(ctx, r.World(), one(), coll.Shared(a, 0), []coll.Span{{2, 4}}, coll.Add[int64](), coll.CyclicChunks())
		}},
		{"cyclic private", "CyclicChunks needs a shared source", func(ctx context.Context, r *pgas.Rank) error {
			return coll.ReduceV(ctx, r.World(), one(), one(), []coll.Span{{0, 1}}, coll.Add[int64](), coll.CyclicChunks())
		}},
		{"negative span", "negative field", func(ctx context.Context, r *pgas.Rank) error {
			return coll.AllreduceV(ctx, r.World(), one(), one(), []coll.Span{{0, -1}}, coll.Add[int64]())
		}},
		{"short prefix destination", "private destination has 1 elements, needs 2", func(ctx context.Context, r *pgas.Rank) error {
			return coll.PrefixReduce(ctx, r.World(), one(), coll.Private(make([]int64, 2)), 2, coll.Add[int64]())
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { reducePanic(t, 2, c.want, c.fn) })
	}
}

// TestReduceNotPointerFree: element types that cannot live in shared
// memory are refused with an error, not staged.
func TestReduceNotPointerFree(t *testing.T) {
	err := pgas.Run(t.Context(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		cat := coll.NonCommFunc("cat", func(a, b string) string { return a + b })
		dst := make([]string, 1)
		return coll.Reduce(ctx, r.World(), coll.Private(dst), coll.Private([]string{"x"}), 1, cat)
	})
	if err == nil || !strings.Contains(err.Error(), "cannot live in shared memory") {
		t.Fatalf("got %v", err)
	}
}

// ExampleReduce multiplies 2x2 matrices held one per rank, in rank order:
// the operator is not commutative, so the result is M0*M1*M2*M3.
func ExampleReduce() {
	type mat [4]int64
	mul := coll.NonCommFunc("matmul", func(a, b mat) mat {
		return mat{a[0]*b[0] + a[1]*b[2], a[0]*b[1] + a[1]*b[3], a[2]*b[0] + a[3]*b[2], a[2]*b[1] + a[3]*b[3]}
	})
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
		mine := []mat{{1, int64(r.ID() + 1), 0, 1}} // shear matrices
		if r.ID() == 3 {
			mine[0] = mat{0, 1, 1, 0} // a swap last
		}
		res := make([]mat, 1)
		if err := coll.Reduce(ctx, r.World(), coll.Private(res), coll.Private(mine), 1, mul); err != nil {
			return err
		}
		if r.ID() == 0 {
			fmt.Println(res[0])
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: [6 1 1 0]
}
