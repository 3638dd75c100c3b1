package main

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// tables writes an orders and a customers table, generated from a seed,
// into dir and returns their paths. Customers c000 to c039, c000, c007,
// c014 ... twice (with another name); orders of customers c005 to c049,
// several each, so that c000 to c004 have no order and c040 to c049 no
// customer. Names and countries hold commas and quotes; amounts are
// negative, whole or with one or two decimals; the orders have a blank
// line, the customers CRLF line ends.
func tables(t *testing.T, dir string, seed uint64) (orders, customers string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	names := []string{"Ada", "Lovelace, Ada", `Grace "Amazing" Hopper`, "Dijkstra, Edsger W.", "Zoë", "O'Neil", "a,b,c", `""`, ""}
	countries := []string{"UK", "Korea, Republic of", "Bonaire, Sint Eustatius and Saba", "Côte d'Ivoire", `The "Netherlands"`, ""}
	var cs [][]string
	for i := range 40 {
		copies := 1
		if i%7 == 0 { // c000, c007 ... twice
			copies = 2
		}
		for range copies {
			cs = append(cs, []string{fmt.Sprintf("c%03d", i), names[rng.IntN(len(names))], countries[rng.IntN(len(countries))]})
		}
	}
	var ords [][]string
	for i := range 300 {
		amount := fmt.Sprintf("%d.%02d", rng.IntN(1000), rng.IntN(100))
		switch rng.IntN(6) {
		case 0:
			amount = strconv.Itoa(rng.IntN(50))
		case 1:
			amount = fmt.Sprintf("-%d.%d", rng.IntN(20), rng.IntN(10))
		}
		ords = append(ords, []string{fmt.Sprintf("o%05d", i), fmt.Sprintf("c%03d", 5+rng.IntN(45)), amount})
	}
	orders = filepath.Join(dir, "orders.csv")
	customers = filepath.Join(dir, "customers.csv")
	writeCSV(t, orders, append([][]string{orderColumns}, ords...), false, 150)
	writeCSV(t, customers, append([][]string{customerColumns}, cs...), true, -1)
	return orders, customers
}

// writeCSV writes rows to path as encoding/csv writes them, with CRLF
// line ends if crlf, and a blank line before row blank (if >= 0).
func writeCSV(t *testing.T, path string, rows [][]string, crlf bool, blank int) {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = crlf
	for i, row := range rows {
		if i == blank {
			w.Flush()
			b.WriteString("\n")
		}
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readCSV reads the rows of a CSV file after its header with encoding/csv.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows[1:]
}

// oracle joins the tables on one goroutine, with nested loops over their
// rows for each key in byte order, and prints the rows as csvjoin does.
func oracle(t *testing.T, ordersPath, customersPath, kind, sortBy string) string {
	t.Helper()
	orders, customers := readCSV(t, ordersPath), readCSV(t, customersPath)
	var keys []string
	for _, o := range orders {
		keys = append(keys, o[1])
	}
	for _, c := range customers {
		keys = append(keys, c[0])
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	left := kind == "left" || kind == "full"
	right := kind == "right" || kind == "full"
	type row struct {
		order  []string // nil if none
		amount float64
		rec    []string
	}
	var rows []row
	add := func(k string, o, c []string) {
		rw := row{order: o, rec: []string{k, "", "", "", ""}}
		if o != nil {
			a, err := strconv.ParseFloat(o[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			rw.amount = a
			rw.rec[1], rw.rec[2] = o[0], strconv.FormatFloat(a, 'f', 2, 64)
		}
		if c != nil {
			rw.rec[3], rw.rec[4] = c[1], c[2]
		}
		rows = append(rows, rw)
	}
	for _, k := range keys {
		hasOrder := false
		for _, o := range orders {
			if o[1] != k {
				continue
			}
			hasOrder = true
			matched := false
			for _, c := range customers {
				if c[0] == k {
					add(k, o, c)
					matched = true
				}
			}
			if !matched && left {
				add(k, o, nil)
			}
		}
		if !hasOrder && right {
			for _, c := range customers {
				if c[0] == k {
					add(k, nil, c)
				}
			}
		}
	}
	if sortBy == "amount" {
		slices.SortStableFunc(rows, func(a, b row) int {
			switch {
			case (a.order == nil) != (b.order == nil) && a.order == nil:
				return 1
			case (a.order == nil) != (b.order == nil):
				return -1
			case a.amount > b.amount:
				return -1
			case a.amount < b.amount:
				return 1
			}
			return 0
		})
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(outputColumns)
	for _, r := range rows {
		w.Write(r.rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func runOut(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(args, &out); err != nil {
		t.Fatalf("csvjoin %q: %v", args, err)
	}
	return out.String()
}

var allKinds = []string{"inner", "left", "right", "full"}

// TestOracle: the test's tables hold what the join must get right, and the
// oracle's joins differ as their kinds say.
func TestOracle(t *testing.T) {
	orders, customers := tables(t, t.TempDir(), 1)
	n := map[string]int{}
	for _, kind := range allKinds {
		out := oracle(t, orders, customers, kind, "customer")
		n[kind] = strings.Count(out, "\n") - 1
	}
	inner, left, right, full := n["inner"], n["left"], n["right"], n["full"]
	if inner == 0 || left <= inner || right <= inner || full != left+right-inner {
		t.Fatalf("rows inner %d, left %d, right %d, full %d: want 0 < inner < left, right and full = left + right - inner", inner, left, right, full)
	}
	out := oracle(t, orders, customers, "full", "customer")
	for _, s := range []string{`"Lovelace, Ada"`, `"Korea, Republic of"`, `"Grace ""Amazing"" Hopper"`, "\nc000,,,", "\nc049,o", ",-"} {
		if !strings.Contains(out, s) {
			t.Errorf("the full join lacks %q:\n%s", s, out)
		}
	}
	// c007's orders, each joined with its two customers: a cross product.
	c007 := 0
	for _, o := range readCSV(t, orders) {
		if o[1] == "c007" {
			c007++
		}
	}
	if out := oracle(t, orders, customers, "inner", "customer"); c007 < 2 || strings.Count(out, "\nc007,") != 2*c007 {
		t.Errorf("c007's %d orders are not each joined with its two customers:\n%s", c007, out)
	}
	if cs := readCSV(t, customers); len(cs) != 46 {
		t.Errorf("%d customers, want 46 (6 ids twice)", len(cs))
	}
}

// TestJoin: csvjoin prints the oracle's rows at 1, 2 and 3 ranks, for
// every kind and order, under every gather mode, several distributions
// and transfers, on any root, with the files cut into many splits.
func TestJoin(t *testing.T) {
	orders, customers := tables(t, t.TempDir(), 1)
	want := map[string]string{}
	for _, kind := range allKinds {
		for _, by := range []string{"customer", "amount"} {
			want[kind+by] = oracle(t, orders, customers, kind, by)
		}
	}
	for _, n := range []int{1, 2, 3} {
		for _, mode := range []string{
			"default", "gather-all", "gather-root", "gather-none", "gather-partitioned",
			"cyclic", "cyclic+gather-partitioned", "balanced+no-collectives+node=on",
			fmt.Sprintf("root=%d", n-1), fmt.Sprintf("gather-root+root=%d", n-1),
			fmt.Sprintf("bestfit+gather-partitioned+root=%d", n-1),
		} {
			t.Run(fmt.Sprintf("np=%d/%s", n, mode), func(t *testing.T) {
				for _, kind := range allKinds {
					for _, by := range []string{"customer", "amount"} {
						args := []string{"-np", fmt.Sprint(n), "-mode", mode, "-kind", kind, "-sort", by, "-split", "61", orders, customers}
						if got := runOut(t, args...); got != want[kind+by] {
							t.Fatalf("csvjoin %q:\n%s\nwant\n%s", args, got, want[kind+by])
						}
					}
				}
			})
		}
	}
}

// TestSplits: the output does not depend on the split size, from 1 byte
// (every row read by the split it starts in, past the split's end) to
// whole files.
func TestSplits(t *testing.T) {
	orders, customers := tables(t, t.TempDir(), 2)
	for _, kind := range allKinds {
		want := oracle(t, orders, customers, kind, "customer")
		for _, split := range []string{"1", "7", "20", "333", "4096", "0"} {
			for _, mode := range []string{"default", "cyclic+gather-partitioned"} {
				args := []string{"-np", "3", "-mode", mode, "-kind", kind, "-split", split, orders, customers}
				if got := runOut(t, args...); got != want {
					t.Errorf("csvjoin %q:\n%s\nwant\n%s", args, got, want)
				}
			}
		}
	}
}

// TestCompressed: tables compressed with gzip, zstd and (if the bzip2
// command is there) bzip2, named as such or not, give the bytes the
// uncompressed tables give, mixed with uncompressed ones too.
func TestCompressed(t *testing.T) {
	dir := t.TempDir()
	orders, customers := tables(t, dir, 3)
	compress := map[string]func(t *testing.T, src, dst string){
		"gz":  gzipFile,
		"zst": zstdFile,
	}
	if _, err := exec.LookPath("bzip2"); err == nil {
		compress["bz2"] = bzip2File
	} else {
		t.Log("no bzip2 command: bzip2 not tested")
	}
	want := map[string]string{} // of the uncompressed tables
	for _, kind := range allKinds {
		args := []string{"-np", "2", "-kind", kind, "-sort", "amount", "-split", "50", orders, customers}
		if want[kind] = runOut(t, args...); want[kind] != oracle(t, orders, customers, kind, "amount") {
			t.Fatalf("csvjoin %q is not the oracle's", args)
		}
	}
	for ext, z := range compress {
		zo, zc := orders+"."+ext, filepath.Join(dir, "customers-"+ext) // one without its extension
		z(t, orders, zo)
		z(t, customers, zc)
		for _, kind := range allKinds {
			for _, n := range []string{"1", "3"} {
				for _, in := range [][2]string{{zo, zc}, {zo, customers}, {orders, zc}} {
					args := []string{"-np", n, "-kind", kind, "-sort", "amount", "-split", "50", in[0], in[1]}
					if got := runOut(t, args...); got != want[kind] {
						t.Errorf("csvjoin %q:\n%s\nwant (uncompressed)\n%s", args, got, want[kind])
					}
				}
			}
		}
	}
}

func gzipFile(t *testing.T, src, dst string) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	compressFile(t, src, dst, zw, &b)
}

func zstdFile(t *testing.T, src, dst string) {
	t.Helper()
	var b bytes.Buffer
	zw, err := zstd.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	compressFile(t, src, dst, zw, &b)
}

func compressFile(t *testing.T, src, dst string, zw interface {
	Write([]byte) (int, error)
	Close() error
}, b *bytes.Buffer) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func bzip2File(t *testing.T, src, dst string) {
	t.Helper()
	out, err := exec.Command("bzip2", "-c", src).Output()
	if err != nil {
		t.Fatalf("bzip2 -c %s: %v", src, err)
	}
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestQuotedLineBreak: a quoted line break is read in whole files
// (-split 0), and an error naming the file and the row where splits cut
// the file.
func TestQuotedLineBreak(t *testing.T) {
	dir := t.TempDir()
	orders, customers := tables(t, dir, 4)
	cs := append([][]string{customerColumns}, readCSV(t, customers)...)
	cs[3][1] = "two\nlines, and a comma"
	writeCSV(t, customers, cs, false, -1)
	for _, n := range []string{"1", "3"} {
		args := []string{"-np", n, "-kind", "full", "-split", "0", orders, customers}
		if got, want := runOut(t, args...), oracle(t, orders, customers, "full", "customer"); got != want {
			t.Errorf("csvjoin %q:\n%s\nwant\n%s", args, got, want)
		}
	}
	err := run([]string{"-np", "2", "-split", "64", orders, customers}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), customers+": CSV row at offset") || !strings.Contains(err.Error(), "line break inside quotes") {
		t.Errorf("csvjoin -split 64 on a quoted line break: %v; want an error naming the file and the row", err)
	}
}

// TestErrors: a row that is not an order or a customer is an error naming
// the file, the row's offset and the value, in a compressed file too (the
// offset in its decompressed bytes); so are bad flags and inputs that
// cannot be read.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	orders, customers := tables(t, dir, 5)
	cases := []struct {
		table      string // "orders" or "customers"
		row, value string
	}{
		{"orders", "o90000,c010,12.x\n", `amount "12.x" is not a finite number`},
		{"orders", "o90001,c010,NaN\n", `amount "NaN" is not a finite number`},
		{"orders", "o90002,c010\n", `2 fields ["o90002" "c010"], want 3: order_id,customer_id,amount`},
		{"orders", "o90003,c010,1,\"x, y\"\n", `4 fields ["o90003" "c010" "1" "x, y"], want 3`},
		{"customers", "c090,\"Doe, Jane\"\r\n", `2 fields ["c090" "Doe, Jane"], want 3: customer_id,name,country`},
		{"orders", "o90004,c0\"10,1\n", csv.ErrBareQuote.Error()}, // encoding/csv's
	}
	for _, c := range cases {
		src := map[string]string{"orders": orders, "customers": customers}[c.table]
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		// The bad row goes at the start of the 20th line.
		off := 0
		for range 19 {
			off += 1 + bytes.IndexByte(b[off:], '\n')
		}
		path := filepath.Join(t.TempDir(), filepath.Base(src))
		if err := os.WriteFile(path, slices.Concat(b[:off], []byte(c.row), b[off:]), 0o644); err != nil {
			t.Fatal(err)
		}
		zpath := path + ".gz"
		gzipFile(t, path, zpath)
		for _, p := range []string{path, zpath} {
			for _, split := range []string{"0", "40"} {
				args := []string{"-np", "3", "-split", split, orders, customers}
				if c.table == "orders" {
					args[len(args)-2] = p
				} else {
					args[len(args)-1] = p
				}
				want := fmt.Sprintf("%s: CSV row at offset %d: %s", p, off, c.value)
				if err := run(args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("csvjoin %q: %v; want an error with %q", args, err, want)
				}
			}
		}
	}
	missing := filepath.Join(dir, "missing.csv")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-np", "2", missing, customers}, missing},
		{[]string{"-np", "2", orders, missing}, missing},
		{[]string{"-np", "2", "-kind", "outer", orders, customers}, `-kind "outer"`},
		{[]string{"-np", "2", "-sort", "name", orders, customers}, `-sort "name"`},
		{[]string{"-np", "2", "-split", "-1", orders, customers}, "-split -1"},
		{[]string{"-np", "2", "-mode", "array", orders, customers}, "element-by-element"},
		{[]string{"-np", "2", "-mode", "root=2", orders, customers}, "root 2 is not a rank"},
		{[]string{"-np", "2", orders}, "usage"},
	} {
		if err := run(c.args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("csvjoin %q: %v; want an error naming %q", c.args, err, c.want)
		}
	}
}
