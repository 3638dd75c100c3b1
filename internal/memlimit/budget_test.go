package memlimit

import (
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBudgetOf(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		phys int64
		ls   []Limit
		want int64
		from string
	}{
		{24 * gib, nil, 12 * gib, "half of 24 GiB of physical memory"},
		{24 * gib, []Limit{{Kind: Cgroup, Bytes: 2 * gib, File: "/sys/fs/cgroup/job/memory.max"}}, gib, "half of 2 GiB of the cgroup memory.max 2 GiB limit"},
		{24 * gib, []Limit{{Kind: AddressSpace, Bytes: 4 * gib}}, (4*gib - asReserve) / 2, "RLIMIT_AS 4 GiB"},
		{24 * gib, []Limit{{Kind: AddressSpace, Bytes: gib}}, 0, "RLIMIT_AS"},
		{gib, []Limit{{Kind: Cgroup, Bytes: 8 * gib, File: "memory.max"}}, gib / 2, "of physical memory"},
	} {
		got, from := budgetOf(c.phys, c.ls)
		if got != c.want || !strings.Contains(from, c.from) {
			t.Errorf("budgetOf(%d, %v) = %d, %q; want %d, %q", c.phys, c.ls, got, from, c.want, c.from)
		}
	}
}

func TestDefaultBudget(t *testing.T) {
	b, from := DefaultBudget()
	phys, err := Physical()
	if err != nil {
		t.Skip(err)
	}
	if b <= 0 || b > phys/2 || !strings.HasPrefix(from, "half of ") {
		t.Fatalf("DefaultBudget() = %d, %q with %d bytes of physical memory", b, from, phys)
	}
}

// TestGoLimit: the least active limit applies, a higher one leaves it,
// and the limit found first comes back when the last stops.
func TestGoLimit(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set")
	}
	base := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(base)
	a := GoLimit(300 << 20)
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Fatalf("limit %d after GoLimit(300 MiB)", got)
	}
	b := GoLimit(100 << 20)
	c := GoLimit(500 << 20)
	if got := debug.SetMemoryLimit(-1); got != 100<<20 {
		t.Fatalf("limit %d with 300, 100 and 500 MiB active, want 100 MiB", got)
	}
	b()
	b() // once
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Fatalf("limit %d after the 100 MiB one stopped, want 300 MiB", got)
	}
	a()
	c()
	if got := debug.SetMemoryLimit(-1); got != base {
		t.Fatalf("limit %d after every one stopped, want %d", got, base)
	}
}

func TestParseBudget(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		from string
		ok   bool
	}{
		{"256MiB", 256 << 20, "--memory", true},
		{"0", 0, "no bound", true},
		{"auto", -1, "half of ", true},
		{"lots", 0, "", false},
		{"-1", 0, "", false},
	} {
		n, from, err := ParseBudget(c.in)
		if (err == nil) != c.ok || !strings.HasPrefix(from, c.from) || c.want >= 0 && n != c.want {
			t.Errorf("ParseBudget(%q) = %d, %q, %v", c.in, n, from, err)
		}
	}
}
