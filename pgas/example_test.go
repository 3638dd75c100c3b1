package pgas_test

import (
	"context"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
)

// Run starts the same function on every rank; each rank knows its ID and
// the number of ranks, and Run returns once all are done.
func ExampleRun() {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == 0 {
			fmt.Printf("rank %d of %d\n", r.ID(), r.N())
		}
		return nil
	})
	fmt.Println("err:", err)

	// A failing rank fails the job, and Run names it.
	err = pgas.Run(context.Background(), pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == 2 {
			return fmt.Errorf("bad input")
		}
		return r.Barrier(ctx) // the others are released with an error
	})
	fmt.Println("err:", err)
	// Output:
	// rank 0 of 4
	// err: <nil>
	// err: pgas: rank 2: bad input
}

// An Array is distributed block-cyclically; each rank fills its own part
// through the privatised view, and any rank reads any element.
func ExampleArray() {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int32](ctx, r, 10, 2) // shared [2] int32 a[10]
		if err != nil {
			return err
		}
		for g, blk := range a.MyBlocks() {
			for j := range blk {
				blk[j] = int32(100*r.ID()) + int32(g) + int32(j)
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == 0 {
			for i := range a.Len() {
				v, err := a.Get(ctx, i)
				if err != nil {
					return err
				}
				fmt.Printf("a[%d]=%d on rank %d\n", i, v, a.Layout().Owner(i))
			}
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// a[0]=0 on rank 0
	// a[1]=1 on rank 0
	// a[2]=102 on rank 1
	// a[3]=103 on rank 1
	// a[4]=204 on rank 2
	// a[5]=205 on rank 2
	// a[6]=6 on rank 0
	// a[7]=7 on rank 0
	// a[8]=108 on rank 1
	// a[9]=109 on rank 1
}

// GetRange copies a range that spans blocks and ranks into private memory
// with one transfer per remote block piece.
func ExampleArray_GetRange() {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[float64](ctx, r, 16, 4)
		if err != nil {
			return err
		}
		for g, blk := range a.MyBlocks() {
			for j := range blk {
				blk[j] = float64(g+int64(j)) / 2
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == 0 {
			dst := make([]float64, 7)
			r.ResetStats()
			if err := a.GetRange(ctx, dst, 6); err != nil {
				return err
			}
			s := r.Stats()
			fmt.Println(dst)
			fmt.Println("messages to ranks 1, 2, 3:", s.Peers[1].Messages, s.Peers[2].Messages, s.Peers[3].Messages)
			fmt.Println("bytes from ranks 1, 2, 3:", s.Peers[1].BytesReceived, s.Peers[2].BytesReceived, s.Peers[3].BytesReceived)
			fmt.Println("local elements read:", s.LocalBytes/8)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// [3 3.5 4 4.5 5 5.5 6]
	// messages to ranks 1, 2, 3: 1 1 1
	// bytes from ranks 1, 2, 3: 16 32 8
	// local elements read: 0
}

// A split-phase barrier lets a rank do independent work between announcing
// it has arrived and waiting for the others.
func ExampleRank_Barrier() {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int64](ctx, r, int64(r.N()), pgas.Cyclic)
		if err != nil {
			return err
		}
		// Each rank writes into its right neighbour's element.
		right := int64((r.ID() + 1) % r.N())
		if err := a.Put(ctx, right, int64(r.ID())); err != nil {
			return err
		}
		if err := r.Notify(ctx); err != nil { // fences the put
			return err
		}
		busy := 0
		for i := range 1000 {
			busy += i
		}
		if err := r.Wait(ctx); err != nil {
			return err
		}
		left := a.Local()[0]
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == 3 {
			fmt.Println("rank 3 got", left, "from its left neighbour", busy > 0)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// rank 3 got 2 from its left neighbour true
}

// A Lock serialises a read-modify-write of shared data; ranks take it in
// ticket order.
func ExampleLock() {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
		lock, err := r.AllLockAlloc(ctx)
		if err != nil {
			return err
		}
		total, err := pgas.AllAllocArray[int64](ctx, r, 1, pgas.Indefinite) // on rank 0
		if err != nil {
			return err
		}
		for range 10 {
			if err := lock.Lock(ctx); err != nil {
				return err
			}
			v, err := total.Get(ctx, 0)
			if err != nil {
				return err
			}
			if err := total.Put(ctx, 0, v+int64(r.ID())); err != nil {
				return err
			}
			if err := lock.Unlock(ctx); err != nil { // fences the put
				return err
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == 0 {
			v, _ := total.Get(ctx, 0)
			fmt.Println("total:", v)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// total: 60
}
