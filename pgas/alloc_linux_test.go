//go:build linux

package pgas_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas"
)

// resident counts the resident bytes of b's pages (mincore).
func resident(t *testing.T, b []byte) int64 {
	t.Helper()
	page := os.Getpagesize()
	lo := uintptr(unsafe.Pointer(&b[0])) &^ uintptr(page-1)
	hi := uintptr(unsafe.Pointer(&b[len(b)-1])) + 1
	vec := make([]byte, (int(hi-lo)+page-1)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	var n int64
	for _, v := range vec {
		if v&1 != 0 {
			n += int64(page)
		}
	}
	return n
}

// TestAllAllocLeavesFreshPages: a symmetric region above every block
// handed out before is zero already, and AllAlloc must not clear it
// again: at 64 in-process ranks that made every rank's node-combining
// region (2 MiB of which a few KiB were used) resident. A region reusing
// freed memory is zeroed (TestAllAllocZeroedAndSymmetric).
func TestAllAllocLeavesFreshPages(t *testing.T) {
	// A segment size no other test uses, so that the in-process pool has
	// no warm (resident) mapping of this length to hand out.
	const seg = 24<<20 + 3*8192
	runJob(t, pgas.Config{Ranks: 2, SegmentBytes: seg}, func(ctx context.Context, r *pgas.Rank) error {
		small, err := r.AllAlloc(ctx, 4096)
		if err != nil {
			return err
		}
		big, err := r.AllAlloc(ctx, 16<<20)
		if err != nil {
			return err
		}
		if res := resident(t, r.Segment()[big.Off:big.Off+big.Size]); res > 64<<10 {
			t.Errorf("rank %d: %d bytes of a fresh 16 MiB AllAlloc region are resident; want at most 64 KiB", r.ID(), res)
		}
		// Written in its first KiB only (and by another rank too), freed
		// with AllFreeUsed: allocated again, it is zero and still not
		// resident beyond what was used.
		seg := r.Segment()[big.Off : big.Off+big.Size]
		for i := range 1024 {
			seg[i] = byte(i + 1)
		}
		if err := r.PutBytes(ctx, (r.ID()+1)%r.N(), big.Off+2048, []byte("from a neighbour")); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if err := r.AllFreeUsed(ctx, big, 4096); err != nil {
			return err
		}
		again, err := r.AllAlloc(ctx, 20<<20)
		if err != nil {
			return err
		}
		seg = r.Segment()[again.Off : again.Off+again.Size]
		if again.Off != big.Off {
			t.Errorf("rank %d: the second region is at %d, the first was at %d: the test wants it reused", r.ID(), again.Off, big.Off)
		}
		for i, b := range seg[:8192] {
			if b != 0 {
				t.Fatalf("rank %d: byte %d of a region allocated over one freed with AllFreeUsed is %#x", r.ID(), i, b)
			}
		}
		if res := resident(t, seg); res > 64<<10 {
			t.Errorf("rank %d: %d bytes of a 20 MiB AllAlloc over a region freed with AllFreeUsed are resident; want at most 64 KiB", r.ID(), res)
		}
		for _, reg := range []pgas.Region{small, again} {
			if err := r.AllFree(ctx, reg); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestOutOfMemoryNamesTheFlag: running out of segment space says which
// setting to raise, in the library and in mrrun, and to what.
func TestOutOfMemoryNamesTheFlag(t *testing.T) {
	const seg = 1 << 20
	err := runJobErr(t, pgas.Config{Ranks: 2, SegmentBytes: seg}, func(ctx context.Context, r *pgas.Rank) error {
		_, err := r.AllAlloc(ctx, 3<<20)
		return err
	})
	var oom *pgas.OutOfMemoryError
	if !errors.As(err, &oom) {
		t.Fatalf("AllAlloc of 3 MiB in 1 MiB segments: %v; want an OutOfMemoryError", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "Config.SegmentBytes") || !strings.Contains(msg, "--segment-bytes") {
		t.Errorf("%q: want it to name Config.SegmentBytes and --segment-bytes", msg)
	}
	// 1 MiB segments short by 2 MiB and a little (the header): 3 MiB and
	// a little, plus a MiB of room, rounded up to whole MiB.
	if !strings.Contains(msg, "to 5 MiB or more") {
		t.Errorf("%q: want it to ask for 5 MiB or more", msg)
	}
}
