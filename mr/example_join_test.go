package mr_test

import (
	"cmp"
	"context"
	"fmt"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// Join orders with their customers, each rank joining the customers it is
// given (GatherPartitioned), then sort the joined rows by amount, largest
// first, on rank 0. The order with no known customer is dropped by the
// inner join; a left outer join would keep it with HasRight false.
func ExampleJoin() {
	type Order struct {
		ID       int
		Customer string
		Amount   int
	}
	type Customer struct{ ID, Name string }
	orders := []Order{{1, "c2", 120}, {2, "c1", 40}, {3, "c3", 75}, {4, "c2", 300}, {5, "c9", 10}}
	customers := []Customer{{"c1", "Ada"}, {"c2", "Grace"}, {"c3", "Edsger"}, {"c4", "Barbara"}}
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
		byCustomer := mr.From(mr.Slice(orders), func(ctx context.Context, o Order, emit func(string, Order)) error {
			emit(o.Customer, o)
			return nil
		})
		byID := mr.From(mr.Slice(customers), func(ctx context.Context, c Customer, emit func(string, Customer)) error {
			emit(c.ID, c)
			return nil
		})
		rows, err := mr.Join(ctx, r, mr.Inner, byCustomer, byID, mr.Gather(reduce.GatherPartitioned))
		if err != nil {
			return err
		}
		sorted, err := mr.Sort(ctx, r, rows.Value, func(a, b mr.Pair[string, Order, Customer]) int {
			return cmp.Compare(b.Left.Amount, a.Left.Amount)
		}, 0)
		if err != nil {
			return err
		}
		for _, p := range sorted { // nil but on rank 0
			fmt.Printf("order %d  %-6s %3d\n", p.Left.ID, p.Right.Name, p.Left.Amount)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// order 4  Grace  300
	// order 1  Grace  120
	// order 3  Edsger  75
	// order 2  Ada     40
}
