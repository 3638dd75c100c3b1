package memlimit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeTree writes files (path → contents, paths from /) under a temporary
// directory and returns it, for System.Root.
func fakeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// rlimit returns a System.AddressSpace that returns n.
func rlimit(n uint64) func() (uint64, error) {
	return func() (uint64, error) { return n, nil }
}

const (
	v2Mountinfo = "41 31 0:38 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n"
	v1Mountinfo = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	v2Stat      = "anon 100\nfile 300\nkernel 5\nshmem 0\nactive_file 100\ninactive_file 200\n"
	v1Stat      = "cache 1\nrss 2\nactive_file 9\ntotal_active_file 1048576\ntotal_inactive_file 2097152\n"
)

func TestLimits(t *testing.T) {
	noAS := rlimit(unix.RLIM_INFINITY)
	for _, tc := range []struct {
		name  string
		files map[string]string
		as    func() (uint64, error)
		want  []string // Limit.String() of each
		file  string   // the cgroup limit's File, under the root
	}{
		{name: "none", files: map[string]string{}, as: noAS},
		{name: "RLIMIT_AS", files: map[string]string{}, as: rlimit(512 << 20),
			want: []string{"RLIMIT_AS 512 MiB (prlimit/ulimit -v)"}},
		{name: "v2 own cgroup", as: noAS, files: map[string]string{
			"/proc/self/cgroup":                 "0::/a/b\n",
			"/proc/self/mountinfo":              v2Mountinfo,
			"/sys/fs/cgroup/a/b/memory.max":     "1073741824\n",
			"/sys/fs/cgroup/a/b/memory.current": "4096\n",
			"/sys/fs/cgroup/a/b/memory.stat":    v2Stat,
			"/sys/fs/cgroup/a/memory.max":       "max\n",
		}, want: []string{"cgroup memory.max 1 GiB"}, file: "/sys/fs/cgroup/a/b/memory.max"},
		{name: "v2 parent tighter", as: noAS, files: map[string]string{
			"/proc/self/cgroup":               "0::/a/b\n",
			"/sys/fs/cgroup/a/b/memory.max":   "max\n",
			"/sys/fs/cgroup/a/memory.max":     "536870912\n",
			"/sys/fs/cgroup/memory.max":       "1073741824\n", // no root limit exists; still the smaller wins
			"/sys/fs/cgroup/a/memory.stat":    v2Stat,
			"/sys/fs/cgroup/a/memory.current": "0\n",
		}, want: []string{"cgroup memory.max 512 MiB"}, file: "/sys/fs/cgroup/a/memory.max"},
		{name: "v2 max everywhere", as: noAS, files: map[string]string{
			"/proc/self/cgroup":           "0::/a\n",
			"/proc/self/mountinfo":        v2Mountinfo,
			"/sys/fs/cgroup/a/memory.max": "max\n",
		}},
		{name: "v1", as: noAS, files: map[string]string{
			"/proc/self/cgroup":                                           "4:memory:/process_api/c64\n0::/\n",
			"/proc/self/mountinfo":                                        v1Mountinfo,
			"/sys/fs/cgroup/memory/memory.limit_in_bytes":                 "9223372036854771712\n",
			"/sys/fs/cgroup/memory/process_api/c64/memory.limit_in_bytes": "2147483648\n",
			"/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes":     "9223372036854771712\n",
		}, want: []string{"cgroup memory.limit_in_bytes 2 GiB"},
			file: "/sys/fs/cgroup/memory/process_api/c64/memory.limit_in_bytes"},
		{name: "v1 unlimited", as: noAS, files: map[string]string{
			"/proc/self/cgroup":                             "4:memory:/x\n",
			"/sys/fs/cgroup/memory/x/memory.limit_in_bytes": "9223372036854771712\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes":   "9223372036854771712\n",
		}},
		{name: "v1 namespaced", as: noAS, files: map[string]string{
			// The container sees its own cgroup as the mount's root.
			"/proc/self/cgroup":                           "4:memory:/docker/abc\n",
			"/proc/self/mountinfo":                        "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n",
		}, want: []string{"cgroup memory.limit_in_bytes 1 GiB"}, file: "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{name: "no cgroup files", as: noAS, files: map[string]string{"/proc/self/cgroup": "0::/a\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeTree(t, tc.files)
			ls, err := System{Root: root, AddressSpace: tc.as}.Limits()
			if err != nil {
				t.Fatalf("Limits() error: %v", err)
			}
			var got []string
			for _, l := range ls {
				got = append(got, l.String())
				if l.Kind == Cgroup && l.File != root+tc.file {
					t.Errorf("Limits(): %v from %s; want %s", l, l.File, root+tc.file)
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("Limits() = %q; want %q", got, tc.want)
			}
		})
	}
}

func TestLimitsErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		as    func() (uint64, error)
	}{
		{"getrlimit", map[string]string{}, func() (uint64, error) { return 0, unix.EPERM }},
		{"bad memory.max", map[string]string{
			"/proc/self/cgroup":           "0::/a\n",
			"/sys/fs/cgroup/a/memory.max": "lots\n",
		}, rlimit(unix.RLIM_INFINITY)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls, err := System{Root: fakeTree(t, tc.files), AddressSpace: tc.as}.Limits()
			if err == nil {
				t.Errorf("Limits() = %v, nil; want an error", ls)
			}
		})
	}
}

// With both limits, the one with the least room left comes first.
func TestLimitsEffective(t *testing.T) {
	files := map[string]string{
		"/proc/self/cgroup":               "0::/a\n",
		"/proc/self/statm":                "262144 100 0 0 0 0 0\n", // 1 GiB of 4 KiB pages
		"/sys/fs/cgroup/a/memory.max":     "1073741824\n",
		"/sys/fs/cgroup/a/memory.current": "104857600\n", // 100 MiB, 300 bytes of file cache
		"/sys/fs/cgroup/a/memory.stat":    v2Stat,
	}
	if os.Getpagesize() != 4096 {
		t.Skip("the fake statm counts 4 KiB pages")
	}
	root := fakeTree(t, files)
	for _, tc := range []struct {
		as   uint64
		want Kind
	}{
		{2 << 30, Cgroup},              // room: RLIMIT_AS 1 GiB, cgroup about 924 MiB
		{1<<30 + 50<<20, AddressSpace}, // room: RLIMIT_AS 50 MiB
		{4 << 30, Cgroup},
	} {
		ls, err := System{Root: root, AddressSpace: rlimit(tc.as)}.Limits()
		if err != nil {
			t.Fatal(err)
		}
		if len(ls) != 2 || ls[0].Kind != tc.want {
			t.Errorf("Limits() with RLIMIT_AS %d = %v; want 2 limits, kind %d first", tc.as, ls, tc.want)
		}
	}
}

func TestUsage(t *testing.T) {
	if os.Getpagesize() != 4096 {
		t.Skip("the fake statm counts 4 KiB pages")
	}
	root := fakeTree(t, map[string]string{
		"/proc/self/statm":          "262144 100 0 0 0 0 0\n",
		"/v2/memory.current":        "104857600\n",
		"/v2/memory.stat":           v2Stat,
		"/v1/memory.usage_in_bytes": "104857600\n",
		"/v1/memory.stat":           v1Stat,
		"/bad/memory.current":       "104857600\n",
		"/bad/memory.stat":          "anon 1\n",
	})
	s := System{Root: root}
	for _, tc := range []struct {
		l    Limit
		want int64
		err  bool
	}{
		{Limit{Kind: AddressSpace, Bytes: 1}, 1 << 30, false},
		{Limit{Kind: Cgroup, Bytes: 1, dir: root + "/v2"}, 100<<20 - 300, false},
		{Limit{Kind: Cgroup, Bytes: 1, dir: root + "/v1", v1: true}, 100<<20 - 3<<20, false},
		{Limit{Kind: Cgroup, Bytes: 1, dir: root + "/bad"}, 0, true},
		{Limit{Kind: Cgroup, Bytes: 1, dir: root + "/missing"}, 0, true},
	} {
		got, err := s.Usage(tc.l)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("Usage(%+v) = %d, %v; want %d, error %v", tc.l, got, err, tc.want, tc.err)
		}
		if err != nil && tc.err && tc.l.dir == root+"/bad" && !errors.Is(err, errParse) {
			t.Errorf("Usage(%+v) error %v; want %v", tc.l, err, errParse)
		}
	}
}

// The real /proc: the virtual size is there and plausible.
func TestUsageThisProcess(t *testing.T) {
	u, err := System{}.Usage(Limit{Kind: AddressSpace, Bytes: 1})
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	if u < 1<<20 {
		t.Errorf("Usage(RLIMIT_AS) = %d; want this process's virtual size, more than 1 MiB", u)
	}
}
