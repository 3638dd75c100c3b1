package reduce

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The operations a spill test plays into a store.
const (
	opEmit = iota
	opTag
	opMap
	opPairs
	opRun
)

type spillOp[K, V any] struct {
	kind int
	k    K
	v    V
	idx  int64
	keys []K
	vals []V
}

// spillCase is a kind of store and how to make its keys and values.
type spillCase[K comparable, V any] struct {
	name string
	mk   func() (*Store[K, V], error)
	key  func(*rand.Rand) K
	val  func(*rand.Rand) V
	// comm: the combiner is commutative (DrainCombined's pairs, sorted
	// and combined, are Drain's); fixed: the spill estimate of the pairs
	// held is exact (no value grows as it combines).
	comm, fixed bool
}

// genOps makes n operations: emits, tags, map calls and, for a store that
// combines, pairs and runs added whole.
func genOps[K comparable, V any](rng *rand.Rand, c spillCase[K, V], ref *Store[K, V], n int) []spillOp[K, V] {
	whole := !ref.Combiner().KeepsAll()
	var ops []spillOp[K, V]
	for range n {
		switch r := rng.IntN(24); {
		case r == 0:
			ops = append(ops, spillOp[K, V]{kind: opMap})
		case r <= 3:
			ops = append(ops, spillOp[K, V]{kind: opTag, idx: rng.Int64N(1000)})
		case r <= 5 && whole:
			seen := map[K]bool{}
			op := spillOp[K, V]{kind: opPairs}
			if r == 5 {
				op.kind = opRun
			}
			for range 1 + rng.IntN(8) {
				if k := c.key(rng); !seen[k] {
					seen[k] = true
					op.keys = append(op.keys, k)
				}
			}
			if op.kind == opRun {
				slices.SortFunc(op.keys, ref.Compare)
			}
			for range op.keys {
				op.vals = append(op.vals, c.val(rng))
			}
			ops = append(ops, op)
		default:
			ops = append(ops, spillOp[K, V]{kind: opEmit, k: c.key(rng), v: c.val(rng)})
		}
	}
	return ops
}

// play makes the calls of ops on s, each with slices of its own, through
// the emitter package mr would take, and returns the first error AddPairs
// or AddRun returned.
func play[K comparable, V any](s *Store[K, V], ops []spillOp[K, V]) error {
	emit := s.Emitter()
	var first error
	for _, op := range ops {
		var err error
		switch op.kind {
		case opEmit:
			emit(op.k, op.v)
		case opTag:
			s.SetTag(op.idx)
		case opMap:
			s.BeginMap()
		case opPairs:
			err = s.AddPairs(slices.Clone(op.keys), slices.Clone(op.vals))
		case opRun:
			err = s.AddRun(Run[K, V]{Keys: slices.Clone(op.keys), Vals: slices.Clone(op.vals)})
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// withFanIn sets spillFanIn for a test.
func withFanIn(t testing.TB, n int) {
	old := spillFanIn
	spillFanIn = n
	t.Cleanup(func() { spillFanIn = old })
}

// spillFiles lists the files left in the spill directory.
func spillFiles(t *testing.T, sp *Spill) []string {
	t.Helper()
	if sp.Path() == "" {
		return nil
	}
	ents, err := os.ReadDir(sp.Path())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// spillBudgets: a file a new key, one every few, every few dozen, none.
var spillBudgets = []int64{1, 200, 3000, 1 << 40}

// testSpillCase checks, for several seeds and budgets, that a store that
// spills drains (Drain, DrainCombined, DrainStream) what the same store
// without spilling drains, and leaves no file behind.
func testSpillCase[K comparable, V any](t *testing.T, c spillCase[K, V]) {
	withFanIn(t, 3) // levels of merged files even in a small test
	mk := func(t *testing.T) *Store[K, V] {
		s, err := c.mk()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	seeds := uint64(2)
	if testing.Short() {
		seeds = 1
	}
	for seed := range seeds {
		for _, budget := range spillBudgets {
			t.Run(fmt.Sprintf("%s/seed=%d/budget=%d", c.name, seed, budget), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 13))
				ref := mk(t)
				n := 300
				if budget == 1 {
					n = 80 // a file a new key: creating files is the cost of the test
				}
				ops := genOps(rng, c, ref, n)
				if err := play(ref, ops); err != nil {
					t.Fatal(err)
				}
				want := ref.Drain()
				sp := &Spill{Dir: t.TempDir()}
				defer sp.Close()
				drains := []struct {
					name  string
					drain func(s *Store[K, V]) (Run[K, V], error)
				}{
					{"Drain", func(s *Store[K, V]) (Run[K, V], error) { return s.Drain(), s.Err() }},
					{"DrainStream", func(s *Store[K, V]) (Run[K, V], error) {
						r, err := s.DrainStream()
						if err != nil {
							return Run[K, V]{}, err
						}
						return s.ReadAll(r)
					}},
					{"DrainCombined", func(s *Store[K, V]) (Run[K, V], error) {
						e := s.DrainCombined()
						if c.comm && !s.Combiner().KeepsAll() {
							e = s.SortCombined(e)
						}
						return e, s.Err()
					}},
				}
				for _, d := range drains {
					s := mk(t)
					s.SetSpill(sp, budget)
					if err := play(s, ops); err != nil {
						t.Fatal(err)
					}
					if err := s.Err(); err != nil {
						t.Fatal(err)
					}
					if c.fixed {
						if got, want := s.sp.mem, s.estimate(); got != want {
							t.Errorf("estimate counted as pairs came %v; afresh %v", got, want)
						}
					}
					files, _ := s.Spilled()
					if budget == 1<<40 && (files > 0 || sp.Path() != "") {
						t.Fatalf("a budget of %d spilled %d runs into %q", budget, files, sp.Path())
					}
					if budget == 1 && files == 0 {
						t.Fatalf("a budget of 1 spilled nothing")
					}
					got, err := d.drain(s)
					if err != nil {
						t.Fatalf("%s: %v", d.name, err)
					}
					switch {
					case d.name != "DrainCombined" || s.Combiner().KeepsAll() || c.comm:
						if diff := diffRuns(got, want); diff != "" {
							t.Errorf("%s of a store spilled %d times: %s", d.name, files, diff)
						}
					default: // each part combined apart: the same keys
						keys := slices.Clone(got.Keys)
						slices.SortFunc(keys, s.Compare)
						keys = slices.CompactFunc(keys, func(a, b K) bool { return s.Compare(a, b) == 0 })
						if !reflect.DeepEqual(keys, want.Keys) {
							t.Errorf("DrainCombined of a store spilled %d times: keys %v, want %v", files, keys, want.Keys)
						}
					}
					if left := spillFiles(t, sp); len(left) > 0 {
						t.Errorf("%s left %v", d.name, left)
					}
					if n := s.Keys(); n != 0 || s.Emitted() != 0 {
						t.Errorf("after %s: %d keys, %d emitted; want an empty store", d.name, n, s.Emitted())
					}
				}
				if err := sp.Close(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// pt is a key without a natural order.
type pt struct {
	X    int32
	Name string
}

func comparePt(a, b pt) int {
	if c := cmp.Compare(a.X, b.X); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

func TestSpillMatchesMemory(t *testing.T) {
	strK := func(r *rand.Rand) string { return strKey(r.IntN(80)) }
	ptK := func(r *rand.Rand) pt { return pt{int32(r.IntN(9)) - 4, strKey(r.IntN(9))} }
	u16K := func(r *rand.Rand) uint16 { return uint16(r.IntN(300)) }
	i64V := func(r *rand.Rand) int64 { return r.Int64N(2000) - 1000 }
	strV := func(r *rand.Rand) string { return string(rune('a' + r.IntN(26))) }
	cat := Func("concat", concat2, false)

	testSpillCase(t, spillCase[string, int64]{name: "hash/sum", key: strK, val: i64V, comm: true, fixed: true,
		mk: func() (*Store[string, int64], error) { return NewHashStore[string, int64](Sum[int64]()) }})
	testSpillCase(t, spillCase[string, string]{name: "hash/concat", key: strK, val: strV,
		mk: func() (*Store[string, string], error) { return NewHashStore[string, string](cat) }})
	testSpillCase(t, spillCase[string, int32]{name: "hash/all", key: strK, val: func(r *rand.Rand) int32 { return r.Int32() }, fixed: true,
		mk: func() (*Store[string, int32], error) { return NewHashStore[string, int32](KeepAll[int32]()) }})
	testSpillCase(t, spillCase[pt, int64]{name: "func/min", key: ptK, val: i64V, comm: true, fixed: true,
		mk: func() (*Store[pt, int64], error) { return NewHashStoreFunc[pt, int64](comparePt, Min[int64]()) }})
	testSpillCase(t, spillCase[pt, string]{name: "func/all", key: ptK, val: strV, fixed: true,
		mk: func() (*Store[pt, string], error) { return NewHashStoreFunc[pt, string](comparePt, KeepAll[string]()) }})
	testSpillCase(t, spillCase[pt, int64]{name: "encoded/sum", key: ptK, val: i64V, comm: true, fixed: true,
		mk: func() (*Store[pt, int64], error) { return NewEncodedHashStore[pt, int64](Sum[int64]()) }})
	testSpillCase(t, spillCase[pt, string]{name: "encoded/concat", key: ptK, val: strV,
		mk: func() (*Store[pt, string], error) { return NewEncodedHashStore[pt, string](cat) }})
	testSpillCase(t, spillCase[uint16, int64]{name: "array/sum", key: u16K, val: i64V, comm: true, fixed: true,
		mk: func() (*Store[uint16, int64], error) { return NewArrayStore[uint16, int64](300, Sum[int64]()) }})
	testSpillCase(t, spillCase[uint16, string]{name: "array/concat", key: u16K, val: strV,
		mk: func() (*Store[uint16, string], error) { return NewArrayStore[uint16, string](300, cat) }})
	testSpillCase(t, spillCase[uint16, string]{name: "array/all", key: u16K, val: strV, fixed: true,
		mk: func() (*Store[uint16, string], error) { return NewArrayStore[uint16, string](300, KeepAll[string]()) }})
}

// spillOne makes a store that has spilled n pairs into one file, and
// returns it with the file's path.
func spillOne(t *testing.T, all bool, n int) (*Store[string, string], string) {
	comb := Func("concat", concat2, false)
	if all {
		comb = KeepAll[string]()
	}
	s, err := NewHashStore[string, string](comb)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		s.SetTag(int64(i % 3))
		s.Emit(strKey(i%7), strconv.Itoa(i))
	}
	sp := &Spill{Dir: t.TempDir()}
	t.Cleanup(func() { sp.Close() })
	s.SetSpill(sp, 1)
	s.Emit(strKey(100), "last") // spills
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(s.sp.files[partEmitted]) != 1 {
		t.Fatalf("%d files, want 1", len(s.sp.files[partEmitted]))
	}
	return s, s.sp.files[partEmitted][0].path
}

// TestSpillFileCorrupt cuts a spill file at every length and changes each
// of its bytes: every one is an error naming the file, never a run read
// as if whole.
func TestSpillFileCorrupt(t *testing.T) {
	for _, all := range []bool{false, true} {
		s, path := spillOne(t, all, 20)
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		bad := filepath.Join(t.TempDir(), "bad.run")
		check := func(what string, b []byte) {
			t.Helper()
			if err := os.WriteFile(bad, b, 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := openRun(s, bad, false)
			if err == nil {
				for r.Next() {
				}
				err = r.Err()
				r.Close()
			}
			switch {
			case err == nil:
				t.Errorf("all=%v, %s: read whole", all, what)
			case !strings.Contains(err.Error(), bad) || !errors.Is(err, ErrCorruptSpill):
				t.Errorf("all=%v, %s: error %q does not name %s and wrap ErrCorruptSpill", all, what, err, bad)
			}
		}
		for n := range len(orig) {
			check(fmt.Sprintf("cut to %d of %d bytes", n, len(orig)), orig[:n])
		}
		for i := range orig {
			for _, x := range []byte{0x01, 0x80, 0xff} {
				b := slices.Clone(orig)
				b[i] ^= x
				check(fmt.Sprintf("byte %d ^ %#x", i, x), b)
			}
		}
		check("a byte appended", append(slices.Clone(orig), 0))
		// The other kind's reader refuses the file by its header.
		other, _ := spillOne(t, !all, 3)
		if _, err := openRun(other, path, false); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("all=%v file read as all=%v: %v", all, !all, err)
		}
	}
}

// TestDrainCorruptSpill: Drain of a store whose spilled run was cut
// short records an error naming the file, and leaves no file behind.
func TestDrainCorruptSpill(t *testing.T) {
	for _, name := range []string{"Drain", "DrainCombined", "DrainStream"} {
		s, path := spillOne(t, false, 20)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, fi.Size()-1); err != nil {
			t.Fatal(err)
		}
		dir := s.sp.sp.Path()
		switch name {
		case "Drain":
			s.Drain()
			err = s.Err()
		case "DrainCombined":
			s.DrainCombined()
			err = s.Err()
		case "DrainStream":
			var r RunReader[string, string]
			if r, err = s.DrainStream(); err == nil {
				_, err = s.ReadAll(r)
			}
		}
		if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, ErrCorruptSpill) {
			t.Errorf("%s of a cut spill file: error %v; want one naming %s", name, err, path)
		}
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			t.Errorf("%s left %d files", name, len(ents))
		}
	}
}

// failWriter fails with ENOSPC once the files of a Spill have taken left
// bytes.
type failWriter struct {
	w    io.Writer
	left *int
}

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > *f.left {
		n, _ := f.w.Write(p[:*f.left])
		*f.left = 0
		return n, fmt.Errorf("write: %w", syscall.ENOSPC)
	}
	*f.left -= len(p)
	return f.w.Write(p)
}

// TestSpillWriteFails fills the disk at several points: the error names
// the directory and budget, and Drain still gives every pair.
func TestSpillWriteFails(t *testing.T) {
	c := spillCase[string, int64]{key: func(r *rand.Rand) string { return strKey(r.IntN(300)) }, val: func(r *rand.Rand) int64 { return r.Int64N(9) }}
	for _, after := range []int{0, 20, 300, 3000, 30000} {
		for _, whole := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(uint64(after), 1))
			ref, err := NewHashStore[string, int64](Sum[int64]())
			if err != nil {
				t.Fatal(err)
			}
			ops := genOps(rng, c, ref, 2000)
			if !whole {
				ops = slices.DeleteFunc(ops, func(op spillOp[string, int64]) bool { return op.kind == opPairs || op.kind == opRun })
			}
			play(ref, ops)
			want := ref.Drain()

			sp := &Spill{Dir: t.TempDir()}
			left := after
			sp.wrap = func(w io.Writer) io.Writer { return &failWriter{w, &left} }
			s, err := NewHashStore[string, int64](Sum[int64]())
			if err != nil {
				t.Fatal(err)
			}
			s.SetSpill(sp, 300)
			addErr := play(s, ops)
			err = s.Err()
			if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "budget of 300 bytes") || !strings.Contains(err.Error(), sp.Path()) {
				t.Fatalf("after=%d: Err() = %v; want ENOSPC naming the budget and %s", after, err, sp.Path())
			}
			if addErr != nil && addErr != err {
				t.Errorf("after=%d: AddPairs or AddRun returned %v, Err %v", after, addErr, err)
			}
			if got := s.Drain(); !reflect.DeepEqual(got, want) {
				t.Errorf("after=%d whole=%v: Drain after a failed spill: %s", after, whole, diffRuns(got, want))
			}
			if err := s.Err(); err != nil {
				t.Errorf("after=%d: Drain: %v", after, err)
			}
			if left := spillFiles(t, sp); len(left) > 0 {
				t.Errorf("after=%d: files %v left", after, left)
			}
			sp.Close()
		}
	}
}

// TestSpillDirUnusable spills into a read-only directory, a file, and a
// closed Spill: the error names the directory and the budget, and no pair
// is lost.
func TestSpillDirUnusable(t *testing.T) {
	ro := t.TempDir()
	if err := os.Chmod(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o700) })
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	closed := &Spill{Dir: t.TempDir()}
	closed.Close()
	for _, tc := range []struct {
		name string
		sp   *Spill
		is   error
	}{
		{"read-only", &Spill{Dir: ro}, fs.ErrPermission},
		{"file", &Spill{Dir: file}, syscall.ENOTDIR},
		{"closed", closed, ErrSpillClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "read-only" {
				if f, err := os.CreateTemp(ro, "probe"); err == nil {
					f.Close()
					os.Remove(f.Name())
					t.Skip("this user writes into a read-only directory (root)")
				}
			}
			s, err := NewHashStore[string, int64](Sum[int64]())
			if err != nil {
				t.Fatal(err)
			}
			s.SetSpill(tc.sp, 40)
			for i := range 100 {
				s.Emit(strKey(i%30), 1)
			}
			err = s.Err()
			if err == nil || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), "budget of 40 bytes") ||
				(tc.sp.Dir != "" && tc.is != ErrSpillClosed && !strings.Contains(err.Error(), tc.sp.Dir)) {
				t.Fatalf("Err() = %v; want %v naming %s and the budget", err, tc.is, tc.sp.Dir)
			}
			if err := s.AddPairs([]string{"x"}, []int64{1}); err != nil {
				t.Errorf("AddPairs after a failed spill (the store spills no more): %v", err)
			}
			e := s.Drain()
			if len(e.Keys) != 31 {
				t.Errorf("Drain after a failed spill: %d keys, want 31", len(e.Keys))
			}
		})
	}
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if p, err := exec.LookPath("true"); err == nil {
		cmd = exec.Command(p)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("run a child: %v", err)
	}
	return cmd.Process.Pid
}

func TestCleanStale(t *testing.T) {
	parent := t.TempDir()
	live := &Spill{Dir: parent}
	defer live.Close()
	s, err := NewHashStore[string, int64](Sum[int64]())
	if err != nil {
		t.Fatal(err)
	}
	s.SetSpill(live, 1)
	s.Emit("a", 1)
	if s.Err() != nil || live.Path() == "" {
		t.Fatalf("no spill: %v", s.Err())
	}
	// A dead job's directory: this one's name with a dead pid.
	name := filepath.Base(live.Path())
	rest := strings.SplitN(strings.TrimPrefix(name, spillPrefix), "-", 2)
	stale := func() string {
		p := filepath.Join(parent, spillPrefix+strconv.Itoa(deadPID(t))+"-"+rest[1])
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "000001.run"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dead := stale()
	removed, err := CleanStale(parent)
	if err != nil || !slices.Equal(removed, []string{dead}) {
		t.Errorf("CleanStale = %q, %v; want [%s]", removed, err, dead)
	}
	if _, err := os.Stat(live.Path()); err != nil {
		t.Errorf("the live job's directory: %v", err)
	}
	// The next job's first spill removes stale directories.
	dead = stale()
	next := &Spill{Dir: parent}
	defer next.Close()
	s.SetSpill(next, 1)
	s.Emit("b", 1)
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a job's first spill left the stale %s: %v", dead, err)
	}
	if _, err := os.Stat(live.Path()); err != nil {
		t.Errorf("a job's first spill removed the live %s: %v", live.Path(), err)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Errorf("after Close: %d directories in %s, want the next job's", len(ents), parent)
	}
}

// TestDrainStreamClose: a stream closed before its end removes the files
// it had not read.
func TestDrainStreamClose(t *testing.T) {
	sp := &Spill{Dir: t.TempDir()}
	defer sp.Close()
	s, err := NewHashStore[string, int64](Sum[int64]())
	if err != nil {
		t.Fatal(err)
	}
	s.SetSpill(sp, 100)
	for i := range 1000 {
		s.Emit(strKey(i%200), int64(i))
	}
	if files, _ := s.Spilled(); files < 2 {
		t.Fatalf("%d files spilled", files)
	}
	r, err := s.DrainStream()
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if !r.Next() {
			t.Fatal(r.Err())
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if r.Next() {
		t.Error("Next after Close")
	}
	if left := spillFiles(t, sp); len(left) > 0 {
		t.Errorf("files %v left", left)
	}
}

// TestSpillShared: the stores of several ranks spill into one Spill at
// once.
func TestSpillShared(t *testing.T) {
	sp := &Spill{Dir: t.TempDir()}
	defer sp.Close()
	const ranks = 4
	errs := make(chan error, ranks)
	for r := range ranks {
		go func() {
			errs <- func() error {
				s, err := NewHashStore[string, int64](Sum[int64]())
				if err != nil {
					return err
				}
				s.SetSpill(sp, 150)
				for i := range 400 {
					s.Emit(strKey((i*7+r)%90), int64(i))
				}
				if err := s.Err(); err != nil {
					return err
				}
				if files, _ := s.Spilled(); files == 0 {
					return fmt.Errorf("rank %d spilled nothing", r)
				}
				e := s.Drain()
				if err := s.Err(); err != nil {
					return err
				}
				var sum int64
				for _, v := range e.Vals {
					sum += v
				}
				if len(e.Keys) != 90 || sum != 399*400/2 {
					return fmt.Errorf("rank %d: %d keys summing to %d; want 90, %d", r, len(e.Keys), sum, 399*400/2)
				}
				return nil
			}()
		}()
	}
	for range ranks {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if files, _ := sp.Written(); files == 0 {
		t.Error("Written() counts no file")
	}
	if left := spillFiles(t, sp); len(left) > 0 {
		t.Errorf("files %v left", left)
	}
}

// TestSetSpillOff: a store whose spilling is turned off keeps new pairs in
// memory and still drains the runs it spilled.
func TestSetSpillOff(t *testing.T) {
	sp := &Spill{Dir: t.TempDir()}
	defer sp.Close()
	s, err := NewHashStore[string, int64](Sum[int64]())
	if err != nil {
		t.Fatal(err)
	}
	s.SetSpill(sp, 100)
	for i := range 100 {
		s.Emit(strKey(i), 1)
	}
	before, _ := s.Spilled()
	s.SetSpill(nil, 0)
	for i := range 200 {
		s.Emit(strKey(i), 1)
	}
	if after, _ := s.Spilled(); before == 0 || after != before {
		t.Fatalf("spilled %d runs, then %d with spilling off", before, after)
	}
	e := s.Drain()
	if len(e.Keys) != 200 || e.Vals[0] != 2 || e.Vals[199] != 1 {
		t.Errorf("Drain: %d keys, first %d, last %d", len(e.Keys), e.Vals[0], e.Vals[len(e.Vals)-1])
	}
	if left := spillFiles(t, sp); len(left) > 0 {
		t.Errorf("files %v left", left)
	}
}

func ExampleStore_SetSpill() {
	sp := &Spill{} // the zero value spills into os.TempDir(); set Dir for another
	defer sp.Close()
	st, err := NewHashStore[string, int64](Sum[int64]())
	if err != nil {
		panic(err)
	}
	st.SetSpill(sp, 200) // bytes of pairs in memory
	emit := st.Emitter()
	for i := range 1000 {
		emit(fmt.Sprintf("w%d", i%40), 1)
	}
	if err := st.Err(); err != nil {
		panic(err)
	}
	files, _ := st.Spilled()
	fmt.Println("spilled:", files > 0)
	e := st.Drain() // the spilled runs merged with the pairs in memory
	if err := st.Err(); err != nil {
		panic(err)
	}
	fmt.Println(len(e.Keys), "keys;", e.Keys[0], "=", e.Vals[0])
	left, _ := os.ReadDir(sp.Path())
	fmt.Println("files left:", len(left))
	// Output:
	// spilled: true
	// 40 keys; w0 = 25
	// files left: 0
}

// BenchmarkSpill fills a store with 1M mostly distinct string keys and
// drains it, with no budget and with one of 8 MiB.
func BenchmarkSpill(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]string, n)
	var size int64
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%08x", rng.Uint32())
		size += int64(len(keys[i]) + 8)
	}
	for _, bc := range []struct {
		name   string
		budget int64
	}{{"budget=unbounded", 0}, {"budget=8MiB", 8 << 20}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var written, files int64
			for b.Loop() {
				sp := &Spill{Dir: b.TempDir()}
				s, err := NewHashStore[string, int64](Sum[int64]())
				if err != nil {
					b.Fatal(err)
				}
				s.SetSpill(sp, bc.budget)
				emit := s.Emitter()
				for _, k := range keys {
					emit(k, 1)
				}
				e := s.Drain()
				if err := s.Err(); err != nil || len(e.Keys) == 0 {
					b.Fatal(err)
				}
				f, w := sp.Written()
				files += f
				written += w
				if err := sp.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(written)/float64(b.N), "spill-B/op")
			b.ReportMetric(float64(files)/float64(b.N), "files/op")
		})
	}
}
