package linreg

import (
	"bytes"
	"context"
	"strconv"
	"testing"
)

// csvOracle parses a whole CSV file by the documented rules, line by line
// with the bytes package: the number of points, the sum of x in file
// order, and whether a line is bad.
func csvOracle(data []byte) (n int64, sx float64, bad bool) {
	for i, l := range bytes.Split(data, []byte("\n")) {
		l = bytes.Trim(bytes.TrimSuffix(l, []byte("\r")), " \t")
		if len(l) == 0 {
			continue
		}
		f := bytes.Split(l, []byte(","))
		if len(f) != 2 {
			return n, sx, true
		}
		xs, ys := string(bytes.Trim(f[0], " \t")), string(bytes.Trim(f[1], " \t"))
		if i == 0 && xs == "x" && ys == "y" {
			continue
		}
		x, err1 := strconv.ParseFloat(xs, 64)
		y, err2 := strconv.ParseFloat(ys, 64)
		if err1 != nil || err2 != nil || !finite(x) || !finite(y) {
			return n, sx, true
		}
		n++
		sx += x
	}
	return n, sx, false
}

// FuzzCSV checks the CSV reader, cut into chunks of 16 bytes (lines
// straddling many chunks) and of 1 MiB (one chunk), against the oracle.
func FuzzCSV(f *testing.F) {
	for _, s := range []string{"1,2\n3,4\n", "x,y\r\n1,2", " 1 , 2 \n\n\n-3e2,4\n", "1,2,3\n", "nan,1\n", "1,inf\n", "0x1p3,5\n", ",\n", "1,2\nx,y\n", "\r\n\r\n1,1\r\n"} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := write(t, dir, "f.csv", data)
		n, sx, bad := csvOracle(data)
		for _, chunk := range []int64{16, 1 << 20} {
			_, s, err := seqSums(context.Background(), []string{path}, Options{Format: "csv", ChunkBytes: chunk})
			if (err != nil) != bad {
				t.Fatalf("chunk %d: error %v; oracle says bad line: %v", chunk, err, bad)
			}
			if err != nil {
				continue
			}
			if s.N != n {
				t.Fatalf("chunk %d: n = %d; want %d", chunk, s.N, n)
			}
			if chunk == 1<<20 && s.FX != sx {
				t.Fatalf("one chunk: Σx = %v; want %v", s.FX, sx)
			}
		}
	})
}
