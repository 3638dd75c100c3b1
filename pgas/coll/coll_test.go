package coll_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll/colltest"
	"github.com/pgasmr/pgasmr/pgas/inproc"
)

// suiteConfigs are the jobs the conformance suite runs in: 1 to 8 ranks,
// several rank-to-node maps (which select the broadcast trees), argument
// checking on and off, and a fragment size small enough to split every
// transfer into many messages.
var suiteConfigs = []pgas.Config{
	{Ranks: 1},
	{Ranks: 2},
	{Ranks: 3, RanksPerNode: 2, Check: true},
	{Ranks: 5, RanksPerNode: 2},
	{Ranks: 5, RanksPerNode: 3, FragmentBytes: 40, Check: true},
	{Ranks: 8, RanksPerNode: 3, Check: true},
}

func suiteName(c pgas.Config) string {
	s := fmt.Sprintf("ranks=%d", c.Ranks)
	if c.RanksPerNode > 0 {
		s += fmt.Sprintf(",per-node=%d", c.RanksPerNode)
	}
	if c.Check {
		s += ",check"
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
// native collectives (native_test.go), which private calls on the world
// team hand over to.
func TestSuiteNative(t *testing.T) {
	nt := &nativeTransport{inner: inproc.New()}
	cfg := pgas.Config{Ranks: 4, RanksPerNode: 2, Transport: nt, SyncTimeout: time.Minute}
	for _, c := range colltest.Checks() {
		if !strings.HasPrefix(c.Name, "move-") {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			if err := pgas.Run(t.Context(), cfg, c.Run); err != nil {
				t.Fatal(err)
			}
		})
	}
	if nt.calls.Load() == 0 {
		t.Fatal("the native collectives were not used")
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
