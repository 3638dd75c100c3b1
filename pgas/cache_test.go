package pgas_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

func TestCacheConfigParse(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"", "off"},
		{"off", "off"},
		{"on", fmt.Sprintf("lines=%d,line=%d,victim=%d", pgas.DefaultCacheLines, pgas.DefaultCacheLineBytes, pgas.DefaultVictimLines)},
		{"lines=64", "lines=64,line=1024,victim=16"},
		{"lines=64,line=256", "lines=64,line=256,victim=16"},
		{" lines = 8 , line=8, victim=0", "lines=8,line=8,victim=0"},
		{"on,line=2048,victim=3", "lines=256,line=2048,victim=3"},
	} {
		c, err := pgas.ParseCacheConfig(tc.in)
		if err != nil {
			t.Errorf("ParseCacheConfig(%q): %v", tc.in, err)
			continue
		}
		if got := c.String(); got != tc.want {
			t.Errorf("ParseCacheConfig(%q) = %s, want %s", tc.in, got, tc.want)
		}
		back, err := pgas.ParseCacheConfig(c.String())
		if err != nil || back != c {
			t.Errorf("ParseCacheConfig(%q) = %+v, %v; want %+v (round trip)", c.String(), back, err, c)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"lines=0", "lines= missing"},
		{"line=64", "lines= missing"},
		{"lines=x", `"x" is not an integer`},
		{"lines=4,size=3", `unknown key "size"`},
		{"lines=4,line=100", "power of two"},
		{"lines=4,line=4", "power of two"},
		{"lines=4,line=4194304", "power of two"},
		{"lines=4,victim=-1", "negative"},
		{"lines=-3", "negative"},
		{"lines=4,bogus", `"bogus" is not on, off or key=value`},
		{"lines=99999999", "at most"},
	} {
		_, err := pgas.ParseCacheConfig(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCacheConfig(%q) error %v; want one containing %q", tc.in, err, tc.want)
		}
	}
	if err := (pgas.Config{Ranks: 2, Cache: pgas.CacheConfig{Lines: 4, LineBytes: 24}}).Validate(); err == nil || !strings.Contains(err.Error(), "cache line = 24") {
		t.Errorf("Config.Validate with a 24-byte line: %v", err)
	}
}

// odd is an element of 12 bytes, so that elements straddle lines.
type odd struct {
	A int64
	B int32
}

// TestCacheOracle: rank 0 makes a long random sequence of element gets
// and puts (of 1, 8 and 12 bytes, some straddling lines), bulk gets and
// puts, fences and atomics on arrays owned by the other ranks, through
// caches small enough to evict all the time; every value it reads must
// be what a plain memory holding its writes would give (a rank reads its
// own writes), and at the end every owner's memory must hold exactly
// that memory's contents. The counters must add up: every fetch and
// write-back is a counted remote message.
func TestCacheOracle(t *testing.T) {
	for _, cc := range []pgas.CacheConfig{
		{Lines: 1, LineBytes: 8, VictimLines: -1},
		{Lines: 2, LineBytes: 16, VictimLines: 1},
		{Lines: 4, LineBytes: 64, VictimLines: 2},
		{Lines: 3, LineBytes: 128},
		{Lines: 64, LineBytes: 1024},
	} {
		t.Run(cc.String(), func(t *testing.T) {
			for _, ranks := range []int{2, 3} {
				cacheOracle(t, ranks, cc, uint64(ranks)*7+uint64(cc.Lines))
			}
		})
	}
}

func cacheOracle(t *testing.T, ranks int, cc pgas.CacheConfig, seed uint64) {
	const (
		nb  = 3000 // bytes
		n8  = 400  // int64s
		nod = 300  // odds
		ops = 20000
	)
	runJob(t, pgas.Config{Ranks: ranks, Cache: cc}, func(ctx context.Context, r *pgas.Rank) error {
		// Arrays dealt so that rank 0 owns little: blocks of varied sizes.
		ab, err := pgas.AllAllocArray[byte](ctx, r, nb, 37)
		if err != nil {
			return err
		}
		a8, err := pgas.AllAllocArray[int64](ctx, r, n8, 9)
		if err != nil {
			return err
		}
		ao, err := pgas.AllAllocArray[odd](ctx, r, nod, 5)
		if err != nil {
			return err
		}
		if r.ID() == 0 {
			mb := make([]byte, nb)
			m8 := make([]int64, n8)
			mo := make([]odd, nod)
			rng := rand.New(rand.NewPCG(seed, 1))
			for op := range ops {
				switch k := rng.IntN(1000); {
				case k < 200:
					i := rng.Int64N(nb)
					v, err := ab.Get(ctx, i)
					if err != nil {
						return err
					}
					if v != mb[i] {
						return fmt.Errorf("op %d: byte %d = %d, want %d", op, i, v, mb[i])
					}
				case k < 350:
					i, v := rng.Int64N(nb), byte(rng.Uint32())
					if err := ab.Put(ctx, i, v); err != nil {
						return err
					}
					mb[i] = v
				case k < 500:
					i := rng.Int64N(n8)
					v, err := a8.Get(ctx, i)
					if err != nil {
						return err
					}
					if v != m8[i] {
						return fmt.Errorf("op %d: int64 %d = %d, want %d", op, i, v, m8[i])
					}
				case k < 620:
					i, v := rng.Int64N(n8), rng.Int64()
					if err := a8.Put(ctx, i, v); err != nil {
						return err
					}
					m8[i] = v
				case k < 720:
					i := rng.Int64N(nod)
					v, err := ao.Get(ctx, i)
					if err != nil {
						return err
					}
					if v != mo[i] {
						return fmt.Errorf("op %d: odd %d = %+v, want %+v", op, i, v, mo[i])
					}
				case k < 800:
					i, v := rng.Int64N(nod), odd{rng.Int64(), rng.Int32()}
					if err := ao.Put(ctx, i, v); err != nil {
						return err
					}
					mo[i] = v
				case k < 860: // a bulk get across blocks
					i := rng.Int64N(nb)
					buf := make([]byte, rng.Int64N(min(200, nb-i))+1)
					if err := ab.GetRange(ctx, buf, i); err != nil {
						return err
					}
					if got, want := buf, mb[i:i+int64(len(buf))]; string(got) != string(want) {
						return fmt.Errorf("op %d: GetRange(%d, %d) differs from the oracle", op, i, len(buf))
					}
				case k < 920: // a bulk put
					i := rng.Int64N(n8)
					src := make([]int64, rng.Int64N(min(30, n8-i))+1)
					for j := range src {
						src[j] = rng.Int64()
					}
					if rng.IntN(2) == 0 {
						if err := a8.PutRange(ctx, i, src); err != nil {
							return err
						}
					} else if err := a8.PutRangeAsync(ctx, i, src).Wait(ctx); err != nil {
						return err
					}
					copy(m8[i:], src)
				case k < 925:
					if err := r.Fence(ctx); err != nil {
						return err
					}
				case k < 990: // an async element get goes around the cache
					i := rng.Int64N(n8)
					var v int64
					if err := a8.GetAsync(ctx, i, &v).Wait(ctx); err != nil {
						return err
					}
					if v != m8[i] {
						return fmt.Errorf("op %d: GetAsync int64 %d = %d, want %d", op, i, v, m8[i])
					}
				default: // an atomic is a strict access
					i := rng.Int64N(n8)
					old, err := pgas.FetchAdd(ctx, a8, i, 1)
					if err != nil {
						return err
					}
					if old != m8[i] {
						return fmt.Errorf("op %d: FetchAdd of int64 %d saw %d, want %d", op, i, old, m8[i])
					}
					m8[i]++
				}
			}
			st := r.Stats()
			c := st.Cache
			t.Logf("%d ranks %s: %+v miss rate %.3f", ranks, cc, c, c.MissRate())
			if c.Hits == 0 || c.Misses == 0 || c.Fetches == 0 || c.WriteBacks == 0 || c.Flushes == 0 || c.Bypasses == 0 {
				return fmt.Errorf("the sequence left a counter at zero: %+v", c)
			}
			if cc.Lines <= 4 && c.Evictions == 0 {
				return fmt.Errorf("no evictions in a cache of %d lines: %+v", cc.Lines, c)
			}
			if cc.VictimLines > 0 && cc.Lines <= 4 && c.VictimHits == 0 {
				return fmt.Errorf("no victim hits: %+v", c)
			}
			if c.Fetches > c.Misses {
				return fmt.Errorf("%d fetches for %d misses", c.Fetches, c.Misses)
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			return errors.Join(ownerCheck(ctx, r, ab, mb), ownerCheck(ctx, r, a8, m8), ownerCheck(ctx, r, ao, mo))
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		return errors.Join(ownerCheck(ctx, r, ab, nil), ownerCheck(ctx, r, a8, nil), ownerCheck(ctx, r, ao, nil))
	})
}

// ownerCheck is collective: after rank 0's sequence each owner keeps a
// copy of its part of a (what rank 0's cache wrote back), rank 0 puts
// want (the oracle) over the array around the cache, and each owner
// compares.
func ownerCheck[T comparable](ctx context.Context, r *pgas.Rank, a *pgas.Array[T], want []T) error {
	got := append([]T(nil), a.Local()...)
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if r.ID() == 0 {
		if err := a.PutRange(ctx, 0, want); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	for k, v := range a.Local() {
		if got[k] != v {
			return fmt.Errorf("local element %d of rank %d held %v after the sequence, want %v", k, r.ID(), got[k], v)
		}
	}
	return nil
}

// TestCacheCounts: the counters of a known sequence, and that a fetch and
// a write-back are counted as remote messages.
func TestCacheCounts(t *testing.T) {
	cc := pgas.CacheConfig{Lines: 4, LineBytes: 64, VictimLines: -1}
	runJob(t, pgas.Config{Ranks: 2, Cache: cc}, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int64](ctx, r, 2*64, 64) // 64 int64s = 8 lines per rank
		if err != nil {
			return err
		}
		if r.ID() == 1 {
			return r.Barrier(ctx)
		}
		r.ResetStats()
		// Line 0 of rank 1's block: a read miss, 7 hits.
		for i := int64(64); i < 72; i++ {
			if _, err := a.Get(ctx, i); err != nil {
				return err
			}
		}
		// Line 1: a write miss with no fetch, a hit on the byte written, then
		// a read of a byte not written: a miss that fetches.
		if err := a.Put(ctx, 72, 5); err != nil {
			return err
		}
		if v, err := a.Get(ctx, 72); err != nil || v != 5 {
			return fmt.Errorf("Get after Put = %d, %v", v, err)
		}
		if _, err := a.Get(ctx, 73); err != nil {
			return err
		}
		// Line 4 takes line 0's slot (4 lines): an eviction, no victim.
		if _, err := a.Get(ctx, 64+32); err != nil {
			return err
		}
		want := pgas.CacheStats{Hits: 7 + 1, Misses: 1 + 1 + 1 + 1, Fetches: 3, Evictions: 1}
		if got := r.Stats().Cache; got != want {
			return fmt.Errorf("cache counters %+v, want %+v", got, want)
		}
		if got := r.Stats().Remote[pgas.OpGet]; got != 3 {
			return fmt.Errorf("remote gets %d, want the 3 fetches", got)
		}
		if err := r.Fence(ctx); err != nil {
			return err
		}
		st := r.Stats()
		if st.Cache.WriteBacks != 1 || st.Remote[pgas.OpPut] != 1 || st.Peers[1].BytesSent != 8 || st.Cache.Flushes != 1 {
			return fmt.Errorf("after the fence: %+v, remote puts %d, bytes sent %d; want one 8-byte write-back", st.Cache, st.Remote[pgas.OpPut], st.Peers[1].BytesSent)
		}
		// The fence dropped every line: the next read misses.
		if _, err := a.Get(ctx, 64); err != nil {
			return err
		}
		if got := r.Stats().Cache.Misses; got != 5 {
			return fmt.Errorf("misses after the fence %d, want 5", got)
		}
		return r.Barrier(ctx)
	})
}

// TestCacheFaults: a transport failing at any operation of a rank that
// works through its cache fails the job with an error (the cache's loads
// and write-backs name themselves), never a hang or a wrong value.
func TestCacheFaults(t *testing.T) {
	cc := pgas.CacheConfig{Lines: 2, LineBytes: 64, VictimLines: 1}
	seen := map[string]bool{}
	for op := int64(0); op < 60; op++ {
		f := wrap.NewFaulty(inproc.New(), 0, op)
		err := runJobErr(t, pgas.Config{Ranks: 2, Cache: cc, Transport: f}, func(ctx context.Context, r *pgas.Rank) error {
			a, err := pgas.AllAllocArray[int64](ctx, r, 2*512, 512)
			if err != nil {
				return err
			}
			if r.ID() == 0 {
				for i := int64(512); i < 1024; i += 8 {
					if err := a.Put(ctx, i, i); err != nil {
						return err
					}
					if v, err := a.Get(ctx, i+1); err != nil {
						return err
					} else if v != 0 {
						return fmt.Errorf("element %d = %d, want 0", i+1, v)
					}
				}
			}
			return r.Barrier(ctx)
		})
		if !f.Injected() {
			continue
		}
		if !errors.Is(err, wrap.ErrInjected) {
			t.Fatalf("operation %d failed: job error %v; want the injected error", op, err)
		}
		for _, w := range []string{"cache load", "cache write-back"} {
			if strings.Contains(err.Error(), w) {
				seen[w] = true
			}
		}
	}
	t.Logf("errors named: %v", seen)
	if !seen["cache load"] || !seen["cache write-back"] {
		t.Errorf("errors named: %v; want both cache load and cache write-back", seen)
	}
}

// TestCacheRuns: a dirty run longer than a mask word goes home in one
// put, two runs in two.
func TestCacheRuns(t *testing.T) {
	cc := pgas.CacheConfig{Lines: 2, LineBytes: 256}
	runJob(t, pgas.Config{Ranks: 2, Cache: cc}, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int64](ctx, r, 2*64, 64)
		if err != nil {
			return err
		}
		if r.ID() == 0 {
			r.ResetStats()
			for i := int64(64); i < 64+20; i++ { // 160 bytes from the line's start
				if err := a.Put(ctx, i, i); err != nil {
					return err
				}
			}
			for i := int64(64 + 22); i < 64+25; i++ { // 24 bytes after a gap
				if err := a.Put(ctx, i, i); err != nil {
					return err
				}
			}
			if err := r.Fence(ctx); err != nil {
				return err
			}
			// Each run is one put per line it touches.
			lines := func(i, n int64) int64 {
				_, off := a.Locate(i)
				return (off+8*n-1)/256 - off/256 + 1
			}
			want := lines(64, 20) + lines(64+22, 3)
			if st := r.Stats(); st.Cache.WriteBacks != want || st.Remote[pgas.OpPut] != want || st.Peers[1].BytesSent != 184 {
				return fmt.Errorf("%+v, %d remote puts, %d bytes sent; want %d write-backs of 184 bytes", st.Cache, st.Remote[pgas.OpPut], st.Peers[1].BytesSent, want)
			}
		}
		return r.Barrier(ctx)
	})
}

// TestCacheFalseSharingFull: rank 0 loads a line of rank 1 (so it holds
// all of it), rank 1 then changes other bytes of that line in its own
// memory, rank 0 writes one byte and passes a barrier: rank 1's bytes
// survive, because only rank 0's dirty byte goes home. The two ranks are
// put in step by a channel, which is not a pgas synchronisation and so
// leaves rank 0's line in its cache.
func TestCacheFalseSharingFull(t *testing.T) {
	cc := pgas.CacheConfig{Lines: 4, LineBytes: 128}
	loaded, changed := make(chan struct{}), make(chan struct{})
	runJob(t, pgas.Config{Ranks: 2, Cache: cc}, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[byte](ctx, r, 2*128, 128)
		if err != nil {
			return err
		}
		switch r.ID() {
		case 0:
			if _, err := a.Get(ctx, 128+5); err != nil {
				return err
			}
			close(loaded)
			<-changed
			if err := a.Put(ctx, 128+5, 42); err != nil {
				return err
			}
			if st := r.Stats().Cache; st.Fetches != 1 || st.Hits != 1 {
				return fmt.Errorf("cache %+v; want the put to hit the loaded line", st)
			}
		case 1:
			<-loaded
			for k := range a.Local() {
				if k != 5 {
					a.Local()[k] = byte(k + 1)
				}
			}
			close(changed)
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == 1 {
			for k, v := range a.Local() {
				want := byte(k + 1)
				if k == 5 {
					want = 42
				}
				if v != want {
					return fmt.Errorf("byte %d of rank 1 = %d, want %d", k, v, want)
				}
			}
		}
		return nil
	})
}
