package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// graph writes a random graph of n nodes as an edge list: most nodes
// link to a few others (duplicates and self-links included), some to none
// (dangling), some appear only as targets; with comments and blank lines.
// It returns the file and the edges.
func graph(t *testing.T, n, seed int) (string, [][2]string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(seed), 9))
	var b strings.Builder
	var edges [][2]string
	b.WriteString("# from to\n")
	for i := range n {
		if i%7 == 3 {
			continue // only a target, if anyone links to it, else absent
		}
		for range rng.IntN(4) {
			e := [2]string{fmt.Sprintf("n%03d", i), fmt.Sprintf("n%03d", rng.IntN(n))}
			edges = append(edges, e)
			fmt.Fprintf(&b, "%s\t %s\n", e[0], e[1])
			if rng.IntN(10) == 0 {
				b.WriteString("\n")
			}
		}
	}
	path := filepath.Join(t.TempDir(), "edges.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, edges
}

// oracle is PageRank on one goroutine, with the job's integer arithmetic,
// printed as pagerank prints it.
func oracle(edges [][2]string, iter int, damping int64, top int) string {
	links := map[string][]string{}
	for _, e := range edges {
		links[e[0]] = append(links[e[0]], e[1])
		if _, ok := links[e[1]]; !ok {
			links[e[1]] = nil
		}
	}
	n := int64(len(links))
	rank := map[string]int64{}
	for v := range links {
		rank[v] = Scale / n
	}
	it := 0
	for changed := true; changed && it < iter; it++ {
		var dangling int64
		recv := map[string]int64{}
		for v, ls := range links {
			if len(ls) == 0 {
				dangling += rank[v]
			}
			for _, to := range ls {
				recv[to] += rank[v] / int64(len(ls))
			}
		}
		base := (100 - damping) * Scale / (100 * n)
		changed = false
		next := map[string]int64{}
		for v := range links {
			next[v] = base + damping*(dangling/n+recv[v])/100
			changed = changed || next[v] != rank[v]
		}
		rank = next
	}
	var names []string
	for v := range links {
		names = append(names, v)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(rank[b], rank[a]), strings.Compare(a, b)) })
	var b strings.Builder
	fmt.Fprintf(&b, "%d nodes, %d iterations\n", len(names), it)
	if top > 0 && top < len(names) {
		names = names[:top]
	}
	for _, v := range names {
		fmt.Fprintf(&b, "%d.%012d\t%s\n", rank[v]/Scale, rank[v]%Scale, v)
	}
	return b.String()
}

func runArgs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(args, &out)
	return out.String(), err
}

// TestOracle: the job's output is the oracle's, byte for byte, at 1, 2 and
// 3 ranks, in every gather mode, with other distributions and roots, and
// with split sizes that cut lines.
func TestOracle(t *testing.T) {
	path, edges := graph(t, 120, 1)
	for _, iter := range []int{0, 1, 60} {
		want := oracle(edges, iter, 85, 0)
		if iter == 60 && !strings.Contains(want, "iterations") {
			t.Fatal("oracle printed nothing")
		}
		for _, np := range []string{"1", "2", "3"} {
			for _, mode := range []string{"default", "gather-all", "gather-root+root=2", "gather-none", "gather-partitioned+root=1", "cyclic", "balanced+no-collectives", "node=off"} {
				for _, split := range []string{"0", "37", "4096"} {
					if (mode == "gather-root+root=2" && np != "3") || (mode == "gather-partitioned+root=1" && np == "1") {
						continue
					}
					got, err := runArgs(t, "-np", np, "-mode", mode, "-split", split, "-iter", fmt.Sprint(iter), path)
					if err != nil {
						t.Fatalf("np %s mode %s split %s iter %d: %v", np, mode, split, iter, err)
					}
					if got != want {
						t.Fatalf("np %s mode %s split %s iter %d:\ngot\n%s\nwant\n%s", np, mode, split, iter, head(got), head(want))
					}
				}
			}
		}
	}
	// The run converges before 200 iterations: it stops when no rank
	// changes, as the oracle does.
	want := oracle(edges, 200, 85, 5)
	got, err := runArgs(t, "-np", "2", "-iter", "200", "-top", "5", path)
	if err != nil || got != want || strings.Contains(want, " 200 iterations") {
		t.Fatalf("200 iterations: %v\n%s\nwant\n%s", err, got, want)
	}
}

func head(s string) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(len(lines), 8)], "")
}

// TestCompressed: a gzip-compressed edge list gives the same bytes.
func TestCompressed(t *testing.T) {
	path, _ := graph(t, 60, 2)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(t.TempDir(), "edges.txt.gz")
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(raw)
	zw.Close()
	if err := os.WriteFile(gz, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := runArgs(t, "-np", "2", path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := runArgs(t, "-np", "2", gz)
	if err != nil || got != want {
		t.Fatalf("gzip: %v\n%s\nwant\n%s", err, head(got), head(want))
	}
	bad := filepath.Join(t.TempDir(), "cut.txt.gz")
	if err := os.WriteFile(bad, b.Bytes()[:b.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runArgs(t, "-np", "2", bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("a truncated gzip file: %v", err)
	}
}

// TestBadLine: a line that is not an edge is an error naming the file and
// the offset.
func TestBadLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(path, []byte("a b\nb c d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runArgs(t, "-np", "2", path)
	if err == nil || !strings.Contains(err.Error(), path+": line at offset 4 has 3 names") {
		t.Fatalf("err = %v", err)
	}
	if strings.Count(err.Error(), "\n") > 0 {
		t.Fatalf("the error is several lines:\n%v", err)
	}
}
