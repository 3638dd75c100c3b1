package coll_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll/colltest"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
	"github.com/pgasmr/pgasmr/pgas/transport/transporttest"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// suiteConfigs are the jobs the conformance suite runs in: 1 to 8 ranks,
// several rank-to-node maps (which select the broadcast trees), argument
// checking on and off, and a fragment size small enough to split every
// transfer into many messages.
var suiteConfigs = []pgas.Config{
	{Ranks: 1},
	{Ranks: 2},
	{Ranks: 3, RanksPerNode: 2},
	{Ranks: 5, RanksPerNode: 2, NoCheck: true},
	{Ranks: 5, RanksPerNode: 3, FragmentBytes: 40},
	{Ranks: 8, RanksPerNode: 3},
}

func suiteName(c pgas.Config) string {
	s := fmt.Sprintf("ranks=%d", c.Ranks)
	if c.RanksPerNode > 0 {
		s += fmt.Sprintf(",per-node=%d", c.RanksPerNode)
	}
	if c.NoCheck {
		s += ",nocheck"
	}
	if c.FragmentBytes > 0 {
		s += fmt.Sprintf(",fragment=%d", c.FragmentBytes)
	}
	return s
}

// TestSuite runs the colltest conformance suite on the in-process
// transport.
func TestSuite(t *testing.T) {
	for _, cfg := range suiteConfigs {
		t.Run(suiteName(cfg), func(t *testing.T) { colltest.Test(t, cfg) })
	}
}

// TestSuiteNative runs the data-movement checks on a transport with
// native collectives (transporttest.Native), which private calls on the
// world team hand over to: directly, and through a stack of every wrapper
// of package wrap, which must pass the collectives on (and count them).
func TestSuiteNative(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		t.Run(fmt.Sprintf("wrapped=%v", wrapped), func(t *testing.T) {
			nt := transporttest.NewNative(inproc.New())
			var tr transport.Transport = nt
			var c *wrap.Counting
			if wrapped {
				c = wrap.NewCounting(wrap.NewFaulty(wrap.NewLatency(nt, 0), 0, -1))
				tr = c
			}
			cfg := pgas.Config{Ranks: 4, RanksPerNode: 2, Transport: tr, SyncTimeout: time.Minute}
			var native int64
			for _, ch := range colltest.Checks() {
				if !strings.HasPrefix(ch.Name, "move-") {
					continue
				}
				t.Run(ch.Name, func(t *testing.T) {
					if err := pgas.Run(t.Context(), cfg, ch.Run); err != nil {
						t.Fatal(err)
					}
				})
				if c != nil {
					tot := c.Total()
					native += tot.Ops[wrap.OpBroadcast] + tot.Ops[wrap.OpAllgatherv] + tot.Ops[wrap.OpAlltoallv]
				}
			}
			if nt.Calls() == 0 {
				t.Fatal("the native collectives were not used")
			}
			if wrapped && native != nt.Calls() {
				t.Errorf("Counting counted %d native calls; the transport made %d", native, nt.Calls())
			}
		})
	}
}

// TestSuiteChecks: the suite's checks have distinct, usable names, and the
// data-movement checks are registered.
func TestSuiteChecks(t *testing.T) {
	seen := map[string]bool{}
	moves := 0
	for _, c := range colltest.Checks() {
		if c.Name == "" || strings.ContainsAny(c.Name, " /") || seen[c.Name] || c.MinRanks < 1 || c.Run == nil {
			t.Errorf("bad check %+v", c)
		}
		seen[c.Name] = true
		if strings.HasPrefix(c.Name, "move-") {
			moves++
		}
	}
	for _, name := range []string{"move-broadcast", "move-permute-in-place", "move-team-allthr", "move-sync"} {
		if !seen[name] {
			t.Errorf("check %s is not registered", name)
		}
	}
	if moves < 12 {
		t.Errorf("%d move- checks registered; want at least 12", moves)
	}
}
