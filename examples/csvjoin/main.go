// Command csvjoin joins two CSV tables on the customer id: orders, with
// the header order_id,customer_id,amount, and customers, with the header
// customer_id,name,country. It is a user's own job on pgasmr, written with
// the public API only:
//
//	go run ./examples/csvjoin -np 4 orders.csv customers.csv
//	go run ./examples/csvjoin -kind full -sort amount orders.csv.gz customers/
//	mrrun exec -np 4 -- ./csvjoin -kind left -split 0 orders.csv customers.csv
//
// Each argument is a file or a directory of files, every file with its
// header row. A file may be compressed with gzip, bzip2 or zstd: mr.AllFiles
// finds the compression from its content and mr.Split reads it
// decompressed, as one split. Other files are cut into splits of -split
// bytes, and each split parses the CSV rows that start in it
// (mr.CSVMap): quoted fields may hold commas and quotes, but a quoted
// line break needs -split 0, whole files.
//
// The map of each table emits (customer id, row) for every row (mr.From),
// and mr.Join moves the two tables' rows by key and turns each key's rows
// into joined rows as -kind says: inner (the orders of known customers),
// left (every order), right (every customer), full (both). It gives every
// rank the whole result unless -mode names another gather mode (mrrun's
// --mode: distribution, gather mode, transfer, root). With -sort amount,
// mr.Sort orders the rows on the root.
//
// Output: CSV with the header customer_id,order_id,amount,name,country,
// one line per joined row, the fields of a missing side empty, amounts
// with two decimals. With -sort customer (the default) rows are in
// customer id order (byte order), and a customer id's rows by order, then
// by customer, each in input order; with -sort amount the largest amount
// comes first, rows without an order last, ties as -sort customer has
// them.
// It does not depend on the rank count, on -split, on compression or on
// -mode.
//
// An error names the file, the offset of the row at fault in it (in the
// decompressed bytes of a compressed file) and the value.
package main

import (
	"cmp"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/mr/job"
	"github.com/pgasmr/pgasmr/pgas"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "csvjoin:", err)
		os.Exit(1)
	}
}

// Order is a row of the orders table, without its key.
type Order struct {
	ID     string
	Amount float64
}

// Customer is a row of the customers table, without its key.
type Customer struct{ Name, Country string }

// Row is a joined row: the customer id, and the order and the customer
// (HasLeft and HasRight say which an outer join's row has).
type Row = mr.Pair[string, Order, Customer]

// The tables' columns, which their header rows name.
var (
	orderColumns    = []string{"order_id", "customer_id", "amount"}
	customerColumns = []string{"customer_id", "name", "country"}
	outputColumns   = []string{"customer_id", "order_id", "amount", "name", "country"}
)

// kinds are -kind's values.
var kinds = map[string]mr.JoinKind{"inner": mr.Inner, "left": mr.LeftOuter, "right": mr.RightOuter, "full": mr.FullOuter}

// Options configure Join.
type Options struct {
	Orders, Customers string // a file or a directory each
	Kind              mr.JoinKind
	SplitBytes        int64 // cut uncompressed files into splits of this size (0: whole files)
	ByAmount          bool  // order the rows by amount (byAmount), not by customer
}

// defaults: the element map only.
var defaults = mr.Defaults{}

// Join is the job every rank runs: it joins the orders with the customers
// as o says and returns the joined rows, in customer order on every rank
// that has the join's result (every rank by default, the root under
// -mode's other gather modes), or with o.ByAmount in byAmount order on
// the job's root.
func Join(ctx context.Context, r *pgas.Rank, o Options) ([]Row, error) {
	fo := mr.FileOptions{Header: true, SplitBytes: o.SplitBytes}
	orderFiles, _, err := mr.AllFiles(ctx, r, fo, o.Orders)
	if err != nil {
		return nil, err
	}
	customerFiles, _, err := mr.AllFiles(ctx, r, fo, o.Customers)
	if err != nil {
		return nil, err
	}
	rows := mr.CSVOptions{FieldsPerRecord: -1} // checkFields names a row's fields
	orders := mr.From(orderFiles, mr.CSVMap(rows, func(_ context.Context, row []string, emit func(string, Order)) error {
		if err := checkFields(row, orderColumns); err != nil {
			return err
		}
		amount, err := strconv.ParseFloat(row[2], 64)
		if err != nil || math.IsNaN(amount) || math.IsInf(amount, 0) {
			return fmt.Errorf("amount %q is not a finite number", row[2])
		}
		emit(row[1], Order{ID: row[0], Amount: amount})
		return nil
	}))
	customers := mr.From(customerFiles, mr.CSVMap(rows, func(_ context.Context, row []string, emit func(string, Customer)) error {
		if err := checkFields(row, customerColumns); err != nil {
			return err
		}
		emit(row[0], Customer{Name: row[1], Country: row[2]})
		return nil
	}))
	joined, err := mr.Join(ctx, r, o.Kind, orders, customers)
	if err != nil || !o.ByAmount {
		return joined.Value, err
	}
	jo, _ := mr.JobOptionsFrom(ctx)
	return mr.Sort(ctx, r, joined.Value, byAmount, jo.Root)
}

// checkFields returns an error naming row's fields if it does not have one
// for each of columns.
func checkFields(row, columns []string) error {
	if len(row) != len(columns) {
		return fmt.Errorf("%d fields %q, want %d: %s", len(row), row, len(columns), strings.Join(columns, ","))
	}
	return nil
}

// byAmount orders rows by amount, the largest first, and the rows without
// an order last. It leaves ties as they are: mr.Sort is stable.
func byAmount(a, b Row) int {
	if a.HasLeft != b.HasLeft {
		if a.HasLeft {
			return -1
		}
		return 1
	}
	return cmp.Compare(b.Left.Amount, a.Left.Amount)
}

// run is main with its arguments and output.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("csvjoin", flag.ContinueOnError)
	jo := job.Flags(fs)
	kind := fs.String("kind", "inner", "the join: inner, left, right or full")
	sortBy := fs.String("sort", "customer", "order the rows by customer or by amount")
	var o Options
	fs.Int64Var(&o.SplitBytes, "split", 64<<20, "cut uncompressed files into splits of `BYTES` (0: whole files)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("usage: csvjoin [-np N] [-mode M] [-kind inner|left|right|full] [-sort customer|amount] [-split BYTES] ORDERS CUSTOMERS")
	}
	o.Orders, o.Customers = fs.Arg(0), fs.Arg(1)
	var ok bool
	if o.Kind, ok = kinds[*kind]; !ok {
		return fmt.Errorf("-kind %q: want inner, left, right or full", *kind)
	}
	if *sortBy != "customer" && *sortBy != "amount" {
		return fmt.Errorf("-sort %q: want customer or amount", *sortBy)
	}
	o.ByAmount = *sortBy == "amount"
	if o.SplitBytes < 0 {
		return fmt.Errorf("-split %d: want bytes >= 0", o.SplitBytes)
	}
	if err := jo.Mode.Validate(defaults); err != nil {
		return fmt.Errorf("-mode: %w", err)
	}
	rows, ok, err := job.Run(*jo, func(ctx context.Context, r *pgas.Rank) ([]Row, error) {
		return Join(ctx, r, o)
	})
	if err != nil || !ok {
		return err
	}
	w := csv.NewWriter(stdout)
	if err := w.Write(outputColumns); err != nil {
		return err
	}
	for _, p := range rows {
		rec := []string{p.Key, "", "", "", ""}
		if p.HasLeft {
			rec[1], rec[2] = p.Left.ID, strconv.FormatFloat(p.Left.Amount, 'f', 2, 64)
		}
		if p.HasRight {
			rec[3], rec[4] = p.Right.Name, p.Right.Country
		}
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}
