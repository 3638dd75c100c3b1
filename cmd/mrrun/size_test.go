package main

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"4096": 4096, "1GiB": 1 << 30, "1gib": 1 << 30, "150MB": 150_000_000, "150mb": 150_000_000,
		"64k": 64_000, "64Ki": 65_536, "1.5GB": 1_500_000_000, "2M": 2_000_000, "10B": 10, " 3 MiB ": 3 << 20,
	} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "-1MB", "1XB", "NaN", "1e30GB"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}
