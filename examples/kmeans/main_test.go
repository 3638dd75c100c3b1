package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// clusters are the known centres the test's points are drawn around.
var clusters = []Point{{0, 0, 0}, {10, 0, 5}, {0, 10, -5}, {10, 10, 10}, {-8, 4, 2}}

// points draws n points from a seed, point i around clusters[i%5] (so
// that the first 5 points, the initial centres, are one of each), with
// normal noise of deviation 2.5 (the clusters touch: points change centre
// for a few iterations), and writes them as CSV with a header.
func points(t *testing.T, n int) ([]Point, string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(13, 2))
	pts := make([]Point, n)
	var b strings.Builder
	b.WriteString("x,y,z\n")
	for i := range pts {
		c := clusters[i%len(clusters)]
		pts[i] = make(Point, len(c))
		for j := range c {
			pts[i][j] = c[j] + 2.5*rng.NormFloat64()
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString(strconv.FormatFloat(pts[i][j], 'g', -1, 64))
		}
		b.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), "points.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return pts, path
}

// oracle is Lloyd's k-means on one goroutine, with kmeans' order of
// additions (each chunk of chunk points summed in order, the chunks' sums
// added in chunk order), printed as kmeans prints it.
func oracle(pts []Point, k, maxIter, chunk int) string {
	dim := len(pts[0])
	centres := make([]Point, k)
	for c := range centres {
		centres[c] = append(Point(nil), pts[c]...)
	}
	var sizes []int64
	iter, converged := 0, false
	for !converged && iter < maxIter {
		iter++
		sum := make([][]float64, k)
		sizes = make([]int64, k)
		for c := range sum {
			sum[c] = make([]float64, dim)
		}
		for lo := 0; lo < len(pts); lo += chunk {
			part := make([][]float64, k)
			for c := range part {
				part[c] = make([]float64, dim)
			}
			for _, p := range pts[lo:min(lo+chunk, len(pts))] {
				best, bestD := 0, math.Inf(1)
				for c, q := range centres {
					var d float64
					for j := range p {
						d += float64((p[j] - q[j]) * (p[j] - q[j]))
					}
					if d < bestD {
						best, bestD = c, d
					}
				}
				for j := range p {
					part[best][j] += p[j]
				}
				sizes[best]++
			}
			for c := range part {
				for j := range part[c] {
					sum[c][j] += part[c][j]
				}
			}
		}
		converged = true
		for c := range centres {
			if sizes[c] == 0 {
				continue
			}
			for j := range centres[c] {
				x := sum[c][j] / float64(sizes[c])
				converged = converged && x == centres[c][j]
				centres[c][j] = x
			}
		}
	}
	verdict := "converged"
	if !converged {
		verdict = "not converged"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d points, %d centres: %d iterations, %s\n", len(pts), k, iter, verdict)
	for c, p := range centres {
		fmt.Fprintf(&b, "%d\t%d", c, sizes[c])
		for _, x := range p {
			fmt.Fprintf(&b, "\t%s", strconv.FormatFloat(x, 'g', -1, 64))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestKMeans: kmeans prints the oracle's centres, bit for bit, at 1, 2 and
// 3 ranks under every gather mode, several distributions and transfers,
// and on any root; and the centres are the known clusters'.
func TestKMeans(t *testing.T) {
	pts, path := points(t, 3001)
	k := len(clusters)
	want := oracle(pts, k, 100, 100)
	if !strings.Contains(want, "converged\n") || strings.Contains(want, "not converged") {
		t.Fatalf("the oracle did not converge:\n%s", want)
	}
	for _, n := range []int{1, 2, 3} {
		for _, mode := range []string{
			"default", "gather-root", "gather-partitioned", "gather-none", "cyclic+no-collectives",
			"balanced+node=on", "gather-partitioned+node=off", fmt.Sprintf("gather-root+root=%d", n-1),
		} {
			args := []string{"-np", fmt.Sprint(n), "-mode", mode, "-k", fmt.Sprint(k), "-chunk", "100", path}
			t.Run(fmt.Sprintf("np=%d/%s", n, mode), func(t *testing.T) {
				if got := runOut(t, args...); got != want {
					t.Fatalf("kmeans %q:\n%s\nwant\n%s", args, got, want)
				}
			})
		}
	}
	// The default chunk (one chunk here), and an iteration limit.
	for _, c := range []struct{ iter, chunk int }{{100, 1024}, {2, 7}} {
		want := oracle(pts, k, c.iter, c.chunk)
		for _, n := range []int{1, 3} {
			args := []string{"-np", fmt.Sprint(n), "-k", fmt.Sprint(k), "-iter", fmt.Sprint(c.iter)}
			if c.chunk != 1024 {
				args = append(args, "-chunk", fmt.Sprint(c.chunk))
			}
			args = append(args, path)
			if got := runOut(t, args...); got != want {
				t.Errorf("kmeans %q:\n%s\nwant\n%s", args, got, want)
			}
		}
	}
	// The centres found are the clusters the points were drawn around.
	for c, line := range strings.Split(strings.TrimSpace(want), "\n")[1:] {
		f := strings.Split(line, "\t")
		for j, s := range f[2:] {
			if x, err := strconv.ParseFloat(s, 64); err != nil || math.Abs(x-clusters[c][j]) > 0.3 {
				t.Errorf("centre %d coordinate %d = %s; want %v ± 0.3", c, j, s, clusters[c][j])
			}
		}
	}
}

// TestEmptyCluster: a centre that no point is nearest (the first two
// points are the same, so the second centre loses every tie) keeps its
// place and prints size 0, as in the oracle.
func TestEmptyCluster(t *testing.T) {
	pts := []Point{{0, 0}, {0, 0}, {5, 5}, {6, 6}, {-1, 1}, {1, -1}}
	path := filepath.Join(t.TempDir(), "points.csv")
	if err := os.WriteFile(path, []byte("0,0\n0,0\n5,5\n6,6\n-1,1\n1,-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := oracle(pts, 3, 100, 2)
	if !strings.Contains(want, "\n1\t0\t0\t0\n") {
		t.Fatalf("the oracle's second centre is not empty:\n%s", want)
	}
	for _, n := range []int{1, 2, 3} {
		for _, mode := range []string{"default", "gather-partitioned", fmt.Sprintf("gather-root+root=%d", n-1)} {
			args := []string{"-np", fmt.Sprint(n), "-mode", mode, "-k", "3", "-chunk", "2", path}
			if got := runOut(t, args...); got != want {
				t.Errorf("kmeans %q:\n%s\nwant\n%s", args, got, want)
			}
		}
	}
}

func runOut(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(args, &out); err != nil {
		t.Fatalf("kmeans %q: %v", args, err)
	}
	return out.String()
}

// TestErrors: a CSV row that is not a point is an error naming the file,
// the line and the value; so is a file that cannot be read.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		csv, args, want string
	}{
		{"1,2\n3,abc\n", "", "bad.csv:2: coordinate 2 is \"abc\", not a finite number"},
		{"x,y\n1,2\n\n3,4\n5\n", "", "bad.csv:5: 1 coordinates, want 2 as the rows before"},
		{"1,2\n3,NaN\n", "", "bad.csv:2: coordinate 2 is \"NaN\""},
		{"1,2\n3,+Inf\n", "", "bad.csv:2: coordinate 2 is \"+Inf\""},
		{"1,2\n3,\"4\n", "", "bad.csv: parse error on line 2"},
		{"x,y\n", "", "bad.csv: no points"},
		{"1,2\n3,4\n", "-k 3", "k = 3 centres of 2 points"},
		{"1,2\n3,4\n", "-mode array", "element-by-element"},
	} {
		path := filepath.Join(dir, "bad.csv")
		if err := os.WriteFile(path, []byte(c.csv), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{"-np", "2"}, strings.Fields(c.args)...), path)
		if err := run(args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("kmeans %q on %q: %v; want an error with %q", args, c.csv, err, c.want)
		}
	}
	missing := filepath.Join(dir, "missing.csv")
	if err := run([]string{missing}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("kmeans on a missing file: %v; want an error naming it", err)
	}
}
