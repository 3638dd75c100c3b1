package memlimit

import (
	"slices"
	"testing"
)

func TestParseV2Max(t *testing.T) {
	for _, tc := range []struct {
		in      string
		n       int64
		ok, err bool
	}{
		{"max\n", 0, false, false},
		{"536870912\n", 512 << 20, true, false},
		{"0\n", 0, true, false},
		{"", 0, false, true},
		{"lots\n", 0, false, true},
		{"-1\n", 0, false, true},
	} {
		n, ok, err := parseV2Max(tc.in)
		if n != tc.n || ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("parseV2Max(%q) = %d, %v, %v; want %d, %v, error %v", tc.in, n, ok, err, tc.n, tc.ok, tc.err)
		}
	}
}

func TestParseV1Limit(t *testing.T) {
	for _, tc := range []struct {
		in      string
		n       int64
		ok, err bool
	}{
		{"9223372036854771712\n", 0, false, false}, // unlimited, 4 KiB pages
		{"9223372036854710272\n", 0, false, false}, // unlimited, 64 KiB pages
		{"1073741824\n", 1 << 30, true, false},
		{"max\n", 0, false, true},
	} {
		n, ok, err := parseV1Limit(tc.in)
		if n != tc.n || ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("parseV1Limit(%q) = %d, %v, %v; want %d, %v, error %v", tc.in, n, ok, err, tc.n, tc.ok, tc.err)
		}
	}
}

func TestParseProcCgroup(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     procCgroup
	}{
		{"v2", "0::/user.slice/user-1000.slice/session-2.scope\n", procCgroup{v2: "/user.slice/user-1000.slice/session-2.scope"}},
		{"v1", "9:name=systemd:/\n4:memory:/process_api/c64\n3:cpuset:/\n0::/\n",
			procCgroup{v2: "/", v1: "/process_api/c64"}},
		{"v1 joined controllers", "5:memory,hugetlb:/docker/abc\n", procCgroup{v1: "/docker/abc"}},
		{"no trailing newline", "0::/a", procCgroup{v2: "/a"}},
		{"empty", "", procCgroup{}},
		{"junk", "nonsense\n1\n", procCgroup{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseProcCgroup(tc.in); got != tc.want {
				t.Errorf("parseProcCgroup(%q) = %+v; want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseMountinfo(t *testing.T) {
	const mi = `23 1 0:21 / /sys rw,nosuid shared:7 - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime master:3 - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified\040dir rw,relatime - cgroup2 cgroup2 rw
`
	v2, v1, ok2, ok1 := parseMountinfo(mi)
	if !ok2 || v2 != (cgroupMount{root: "/", dir: "/sys/fs/cgroup/unified dir"}) {
		t.Errorf("parseMountinfo: v2 = %+v, %v; want / at /sys/fs/cgroup/unified dir", v2, ok2)
	}
	if !ok1 || v1 != (cgroupMount{root: "/docker/abc", dir: "/sys/fs/cgroup/memory"}) {
		t.Errorf("parseMountinfo: v1 = %+v, %v; want /docker/abc at /sys/fs/cgroup/memory", v1, ok1)
	}
	if _, _, ok2, ok1 := parseMountinfo("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"); ok2 || ok1 {
		t.Errorf("parseMountinfo(no cgroups) = %v, %v; want false, false", ok2, ok1)
	}
}

func TestCgroupDirs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		m      cgroupMount
		cgPath string
		want   []string
	}{
		{"root", cgroupMount{"/", "/sys/fs/cgroup"}, "/", []string{"/sys/fs/cgroup"}},
		{"nested", cgroupMount{"/", "/sys/fs/cgroup"}, "/a/b",
			[]string{"/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a", "/sys/fs/cgroup"}},
		{"mount root is the cgroup", cgroupMount{"/docker/abc", "/sys/fs/cgroup/memory"}, "/docker/abc",
			[]string{"/sys/fs/cgroup/memory"}},
		{"under the mount root", cgroupMount{"/docker/abc", "/sys/fs/cgroup/memory"}, "/docker/abc/x",
			[]string{"/sys/fs/cgroup/memory/x", "/sys/fs/cgroup/memory"}},
		{"outside the mount root", cgroupMount{"/docker/abc", "/sys/fs/cgroup/memory"}, "/other",
			[]string{"/sys/fs/cgroup/memory"}},
		{"prefix but not a parent", cgroupMount{"/docker/abc", "/m"}, "/docker/abcd", []string{"/m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cgroupDirs(tc.m, tc.cgPath); !slices.Equal(got, tc.want) {
				t.Errorf("cgroupDirs(%+v, %q) = %q; want %q", tc.m, tc.cgPath, got, tc.want)
			}
		})
	}
}

func TestParseStatm(t *testing.T) {
	for _, tc := range []struct {
		in             string
		size, resident int64
		ok             bool
	}{
		{"452355 2505 1617 1097 0 87588 0\n", 452355, 2505, true},
		{"1 2", 1, 2, true},
		{"", 0, 0, false},
		{"12", 0, 0, false},
		{"x 1", 0, 0, false},
		{"99999999999999999999 1", 0, 0, false},
	} {
		size, res, ok := parseStatm([]byte(tc.in))
		if size != tc.size || res != tc.resident || ok != tc.ok {
			t.Errorf("parseStatm(%q) = %d, %d, %v; want %d, %d, %v", tc.in, size, res, ok, tc.size, tc.resident, tc.ok)
		}
	}
}

func TestStatField(t *testing.T) {
	const v1 = "cache 3473408\nrss 1748992\nactive_file 667648\ntotal_inactive_file 2805760\ntotal_active_file 1\n"
	for _, tc := range []struct {
		key  string
		want int64
		ok   bool
	}{
		{"active_file", 667648, true},
		{"total_active_file", 1, true},
		{"total_inactive_file", 2805760, true},
		{"inactive_file", 0, false}, // only as a suffix of another key
		{"rs", 0, false},
		{"shmem", 0, false},
	} {
		got, ok := statField([]byte(v1), tc.key)
		if got != tc.want || ok != tc.ok {
			t.Errorf("statField(%q) = %d, %v; want %d, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
}

func TestAppendSize(t *testing.T) {
	for _, tc := range []struct {
		n     int64
		floor bool
		want  string
	}{
		{0, false, "0 bytes"},
		{1023, false, "1023 bytes"},
		{1024, false, "1 KiB"},
		{512 << 20, false, "512 MiB"},
		{470<<20 + 900<<10, true, "470 MiB"},
		{470<<20 + 900<<10, false, "471 MiB"},
		{1 << 30, false, "1 GiB"},
		{5 << 29, false, "2.5 GiB"},
		{7 << 28, false, "1.75 GiB"},
		{1<<30 + 1<<30/1000, false, "1 GiB"},
		{1<<30 - 1, true, "1023 MiB"},
		{1<<30 - 1, false, "1024 MiB"},
		{(1 << 30) * 95 / 10, false, "9.5 GiB"},
		{(1 << 30) * 999 / 100, false, "9.99 GiB"},
		{(1 << 30) * 9999 / 1000, false, "10 GiB"},
		{(1 << 30) * 9999 / 1000, true, "9.99 GiB"},
		{(1 << 30) * 425 / 10, false, "42.5 GiB"},
		{1<<63 - 1, false, "8 EiB"},
		{1<<63 - 1, true, "7.99 EiB"},
	} {
		if got := string(appendSize(nil, tc.n, tc.floor)); got != tc.want {
			t.Errorf("appendSize(%d, floor %v) = %q; want %q", tc.n, tc.floor, got, tc.want)
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b`: "/a b", `/a\134`: `/a\`, `/plain`: "/plain", `/bad\04`: `/bad\04`, `/bad\9999`: `/bad\9999`,
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q; want %q", in, got, want)
		}
	}
}

// The sampling path must not allocate: it runs every 25 ms in a process
// near its limit.
func TestParseAllocs(t *testing.T) {
	statm := []byte("452355 2505 1617 1097 0 87588 0\n")
	stat := []byte("anon 1\nfile 2\nactive_file 3\ninactive_file 4\n")
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() {
		parseStatm(statm)
		statField(stat, "inactive_file")
		appendSize(buf[:0], 5<<29, true)
	}); n != 0 {
		t.Errorf("parsing allocates %v times per sample; want 0", n)
	}
}
