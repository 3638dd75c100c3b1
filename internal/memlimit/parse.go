package memlimit

import (
	"bytes"
	"math/bits"
	"strconv"
	"strings"
)

// This file holds the pure parsers: strings and byte slices in, numbers
// out, no file system. The parsers on the sampling path (parseStatm,
// statField, parseUint) take byte slices and do not allocate.

// v1Unlimited is where cgroup v1 memory.limit_in_bytes values start to
// mean "no limit": the kernel writes its page counter's maximum rounded
// down to a page (9223372036854771712 on 4 KiB pages), and nothing real is
// anywhere near 2^60 bytes.
const v1Unlimited = 1 << 60

// parseV2Max parses a cgroup v2 memory.max: a byte count, or "max" for no
// limit (ok false).
func parseV2Max(s string) (n int64, ok bool, err error) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return 0, false, nil
	}
	v, err := strconv.ParseUint(s, 10, 63)
	if err != nil {
		return 0, false, err
	}
	return int64(v), true, nil
}

// parseV1Limit parses a cgroup v1 memory.limit_in_bytes: a byte count, a
// huge one (from 2^60) meaning no limit (ok false).
func parseV1Limit(s string) (n int64, ok bool, err error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, false, err
	}
	if v >= v1Unlimited {
		return 0, false, nil
	}
	return int64(v), true, nil
}

// procCgroup is what /proc/self/cgroup says about the memory controller:
// the process's cgroup v2 path (the "0::" line) and its cgroup v1 memory
// controller path (the line whose controller list has "memory"); either
// may be empty.
type procCgroup struct {
	v2, v1 string
}

// parseProcCgroup parses /proc/self/cgroup ("hierarchy-ID:controllers:path"
// lines).
func parseProcCgroup(s string) procCgroup {
	var pc procCgroup
	for line := range strings.Lines(s) {
		id, rest, ok := strings.Cut(strings.TrimRight(line, "\n"), ":")
		if !ok {
			continue
		}
		ctrls, path, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		if id == "0" && ctrls == "" {
			pc.v2 = path
			continue
		}
		for c := range strings.SplitSeq(ctrls, ",") {
			if c == "memory" {
				pc.v1 = path
			}
		}
	}
	return pc
}

// cgroupMount is one cgroup file system mount from /proc/self/mountinfo:
// root is the cgroup path of the mount's root directory (not "/" when a
// container bind-mounts its own cgroup), dir where it is mounted.
type cgroupMount struct {
	root, dir string
}

// parseMountinfo finds the cgroup v2 mount and the cgroup v1 mount of the
// memory controller in /proc/self/mountinfo. Lines are
//
//	36 25 0:31 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
//
// (mount ID, parent ID, device, root, mount point, options, optional
// fields, "-", file system type, source, super options); mount points
// escape spaces as \040.
func parseMountinfo(s string) (v2, v1 cgroupMount, ok2, ok1 bool) {
	for line := range strings.Lines(s) {
		pre, post, ok := strings.Cut(strings.TrimRight(line, "\n"), " - ")
		if !ok {
			continue
		}
		f, p := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(p) < 1 {
			continue
		}
		m := cgroupMount{root: unescapeMount(f[3]), dir: unescapeMount(f[4])}
		switch p[0] {
		case "cgroup2":
			if !ok2 {
				v2, ok2 = m, true
			}
		case "cgroup":
			if ok1 || len(p) < 3 {
				continue
			}
			for o := range strings.SplitSeq(p[2], ",") {
				if o == "memory" {
					v1, ok1 = m, true
				}
			}
		}
	}
	return v2, v1, ok2, ok1
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, \011,
// \012, \134).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupDirs returns the directories to read a limit from, the process's
// own cgroup first and then each parent up to the mount's root: cgPath is
// the process's cgroup path from /proc/self/cgroup, m the mount. A path
// outside the mount's root (a cgroup namespace that hides the host path)
// is read as the mount's root itself.
func cgroupDirs(m cgroupMount, cgPath string) []string {
	rel := cgPath
	if m.root != "/" {
		r, ok := strings.CutPrefix(cgPath, m.root)
		if !ok || (r != "" && r[0] != '/') {
			r = "/"
		}
		rel = r
	}
	rel = strings.Trim(rel, "/")
	var dirs []string
	for {
		if rel == "" {
			return append(dirs, m.dir)
		}
		dirs = append(dirs, m.dir+"/"+rel)
		i := strings.LastIndexByte(rel, '/')
		if i < 0 {
			rel = ""
		} else {
			rel = rel[:i]
		}
	}
}

// parseStatm returns the first two fields of /proc/self/statm, the
// process's virtual size and resident set, in pages.
func parseStatm(b []byte) (size, resident int64, ok bool) {
	var n int
	size, n, ok = parseUint(b)
	if !ok {
		return 0, 0, false
	}
	b = b[n:]
	if len(b) == 0 || b[0] != ' ' {
		return 0, 0, false
	}
	resident, _, ok = parseUint(b[1:])
	return size, resident, ok
}

// statField returns the value of key in a cgroup memory.stat ("key value"
// lines).
func statField(b []byte, key string) (int64, bool) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) > len(key) && line[len(key)] == ' ' && string(line[:len(key)]) == key {
			v, _, ok := parseUint(line[len(key)+1:])
			return v, ok
		}
	}
	return 0, false
}

// parseUint parses the decimal number at the start of b and returns it and
// how many bytes it took.
func parseUint(b []byte) (v int64, n int, ok bool) {
	for n < len(b) && '0' <= b[n] && b[n] <= '9' {
		d := int64(b[n] - '0')
		if v > (1<<63-1-d)/10 {
			return 0, 0, false
		}
		v = v*10 + d
		n++
	}
	return v, n, n > 0
}

// appendSize appends n bytes in IEC units for a message: "512 MiB",
// "2.5 GiB", "1.75 GiB", "900 KiB": two decimals under 10 of the unit, one
// under 100, none from 100, trailing zeros dropped. floor rounds down (for
// "more than" figures), otherwise to nearest. It does not allocate when dst
// has room.
func appendSize(dst []byte, n int64, floor bool) []byte {
	if n < 1024 {
		dst = strconv.AppendInt(dst, n, 10)
		return append(dst, " bytes"...)
	}
	units := [...]string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u, scale := 0, uint64(1024)
	for u+1 < len(units) && uint64(n)/scale >= 1024 {
		u, scale = u+1, scale<<10
	}
	whole, rem := uint64(n)/scale, uint64(n)%scale
	dec, pow := 0, uint64(1)
	switch {
	case whole < 10:
		dec, pow = 2, 100
	case whole < 100:
		dec, pow = 1, 10
	}
	hi, lo := bits.Mul64(rem, pow) // rem < scale, so the quotient fits
	frac, r := bits.Div64(hi, lo, scale)
	if !floor && r >= scale-r {
		frac++
	}
	if frac == pow {
		whole, frac = whole+1, 0
	}
	dst = strconv.AppendUint(dst, whole, 10)
	if frac > 0 {
		var digits [2]byte
		for i := dec - 1; i >= 0; i-- {
			digits[i] = byte('0' + frac%10)
			frac /= 10
		}
		d := digits[:dec]
		for d[len(d)-1] == '0' {
			d = d[:len(d)-1]
		}
		dst = append(append(dst, '.'), d...)
	}
	return append(append(dst, ' '), units[u]...)
}
