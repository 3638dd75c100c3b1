// Package size parses and prints byte counts as people write them: 1GiB,
// 150MB, 64k, 1.5GB, 4096; "11.7 GiB".
package size

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes Parse accepts: SI (powers of 1000) and
// IEC (powers of 1024), with or without a trailing B; case-insensitive
// except that a bare number is bytes.
var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40}, {"pib", 1 << 50}, {"eib", 1 << 60},
	{"ki", 1 << 10}, {"mi", 1 << 20}, {"gi", 1 << 30}, {"ti", 1 << 40}, {"pi", 1 << 50}, {"ei", 1 << 60},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"pb", 1e15}, {"eb", 1e18},
	{"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12}, {"p", 1e15},
	{"b", 1},
}

// ErrTooBig is wrapped by Parse's error for a size past 4 EiB.
var ErrTooBig = errors.New("too big")

// Parse parses a byte count such as 1GiB, 150MB, 64k, 1.5GB or 4096.
func Parse(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional suffix (k, MB, MiB, GB, GiB, ...)", s)
	}
	v *= mult
	if v < 0 {
		return 0, fmt.Errorf("size %q: negative", s)
	}
	if v > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q: %w (at most 4 EiB)", s, ErrTooBig)
	}
	return int64(math.Round(v)), nil
}

// String prints n bytes for people: "512 B", "48 KiB", "11.7 GiB".
func String(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + string("KMGTP"[i]) + "iB"
}
