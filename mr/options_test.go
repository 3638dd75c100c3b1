package mr

import (
	"errors"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/reduce"
)

func TestParseOptions(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Options
	}{
		{"default", Options{}},
		{"array", Options{Map: MapArray}},
		{"element", Options{Map: MapElement}},
		{"block", Options{Map: MapElement}},
		{"array+block", Options{Map: MapArray}},
		{"cyclic", Options{Map: MapElement, Dist: distrib.Cyclic}},
		{"no-collectives+cyclic", Options{Map: MapElement, Dist: distrib.Cyclic, Transfer: reduce.ElementByElement}},
		{"bestfit+threshold=1e6", Options{Map: MapElement, Dist: distrib.BestFit, Threshold: 1e6}},
		{"default+gather-root+root=3", Options{Gather: reduce.GatherRoot, Root: 3}},
		{"gather-none", Options{Gather: reduce.GatherNone}},
		{"array+cyclic", Options{Map: MapArray, Dist: distrib.Cyclic}},
		{"gather-partitioned+element+balanced", Options{Map: MapElement, Dist: distrib.Balanced, Gather: reduce.GatherPartitioned}},
		{"node=off+gather-all", Options{Gather: reduce.GatherAll, Node: reduce.NodeOff}},
		{"node=on", Options{Node: reduce.NodeOn}},
		{"node=auto", Options{}},
		{"node=on+node-budget=4096", Options{Node: reduce.NodeOn, NodeBudget: 4096}},
		{"node-budget=-1", Options{NodeBudget: -1}},
	} {
		got, err := ParseOptions(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseOptions(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, err string }{
		{"", "no mode"},
		{"fast", `unknown mode "fast"`},
		{"cyclic+balanced", "two distributions (cyclic and balanced)"},
		{"array+element", "two map modes (array and element)"},
		{"no-collectives+no-collectives", "no-collectives given twice"},
		{"threshold=5", "threshold= applies to bestfit only"},
		{"bestfit+threshold=-1", "threshold=-1: want a finite number >= 0"},
		{"bestfit+threshold=NaN", "want a finite number"},
		{"root=x", "root=x: want a rank >= 0"},
		{"gather-some", `unknown gather mode "gather-some"`},
		{"default+", `unknown mode ""`},
		{"threshold=0", "threshold= applies to bestfit only"},
		{"root=2+threshold=1e3+cyclic", "threshold= applies to bestfit only"},
		{"threshold=", "threshold=: want a finite number >= 0"},
		{"gather-all+gather-root", "two gather modes (gather-all and gather-root)"},
		{"node=maybe", "node=maybe: want auto, on or off"},
		{"node=on+node=off", "two node-combine settings (node=on and node=off)"},
		{"node-budget=lots", "node-budget=lots: want an integer"},
		{"node-budget=1+node-budget=2", "node-budget"},
	} {
		_, err := ParseOptions(c.in)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("ParseOptions(%q) = %v; want an error containing %q", c.in, err, c.err)
		}
	}
}

// TestOptionsSet: settings by field name, as mrrun's flags give them, with
// the rules ParseOptions applies too.
func TestOptionsSet(t *testing.T) {
	for _, c := range []struct {
		in   []Setting
		want Options
	}{
		{nil, Options{}},
		{[]Setting{{"dist", "block"}}, Options{Map: MapElement}},
		{[]Setting{{"dist", "cyclic"}, {"map", "array"}}, Options{Map: MapArray, Dist: distrib.Cyclic}},
		{[]Setting{{"map", "array"}, {"dist", "cyclic"}}, Options{Map: MapArray, Dist: distrib.Cyclic}},
		{[]Setting{{"threshold", "1e+06"}, {"dist", "bestfit"}}, Options{Map: MapElement, Dist: distrib.BestFit, Threshold: 1e6}},
		{[]Setting{{"gather", "root"}, {"root", "3"}, {"transfer", "element"}}, Options{Gather: reduce.GatherRoot, Root: 3, Transfer: reduce.ElementByElement}},
		{[]Setting{{"transfer", "element"}, {"transfer", "collective"}}, Options{}},
	} {
		var o Options
		if err := o.Set(c.in...); err != nil || o != c.want {
			t.Errorf("Set(%v) = %+v, %v; want %+v", c.in, o, err, c.want)
		}
	}
	for _, c := range []struct {
		in   []Setting
		want SettingError
	}{
		{[]Setting{{"map", "tree"}}, SettingError{Setting: Setting{"map", "tree"}, Want: "element or array"}},
		{[]Setting{{"dist", "custom"}}, SettingError{Setting: Setting{"dist", "custom"}, Want: "block, cyclic, balanced or bestfit"}},
		{[]Setting{{"threshold", "-1"}}, SettingError{Setting: Setting{"threshold", "-1"}, Want: "a finite number >= 0"}},
		{[]Setting{{"threshold", "Inf"}, {"dist", "bestfit"}}, SettingError{Setting: Setting{"threshold", "Inf"}, Want: "a finite number >= 0"}},
		{[]Setting{{"gather", "most"}}, SettingError{Setting: Setting{"gather", "most"}, Want: "all, root, none or partitioned"}},
		{[]Setting{{"root", "-1"}}, SettingError{Setting: Setting{"root", "-1"}, Want: "a rank >= 0"}},
		{[]Setting{{"transfer", "pigeon"}}, SettingError{Setting: Setting{"transfer", "pigeon"}, Want: "collective or element"}},
		{[]Setting{{"threshold", "0"}, {"dist", "cyclic"}}, SettingError{Setting: Setting{"threshold", "0"}, Needs: Setting{"dist", "bestfit"}}},
	} {
		var o Options
		err := o.Set(c.in...)
		var se *SettingError
		if !errors.As(err, &se) || *se != c.want {
			t.Errorf("Set(%v) = %v; want %+v", c.in, err, c.want)
		}
	}
	if err := new(Options).Set(Setting{"threshold", "0"}); err == nil || err.Error() != "threshold applies to dist bestfit only" {
		t.Errorf("Set(threshold) = %v", err)
	}
	if err := new(Options).Set(Setting{"colour", "red"}); err == nil || !strings.Contains(err.Error(), `no field "colour"`) {
		t.Errorf("Set(colour) = %v", err)
	}
}

// allOptions returns every valid combination of the fields' values (roots
// 0 and 2, thresholds 0 and 1.5 where they apply).
func allOptions() []Options {
	var out []Options
	for _, m := range []MapMode{MapDefault, MapElement, MapArray} {
		for _, d := range []distrib.Kind{distrib.Block, distrib.Cyclic, distrib.Balanced, distrib.BestFit} {
			for _, th := range []float64{0, 1.5} {
				for _, g := range []reduce.Gather{reduce.GatherDefault, reduce.GatherPartitioned, reduce.GatherAll, reduce.GatherRoot, reduce.GatherNone} {
					for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
						for _, root := range []int{0, 2} {
							out = append(out, Options{Map: m, Dist: d, Threshold: th, Gather: g, Root: root, Transfer: tr})
						}
					}
				}
			}
		}
	}
	return out
}

// TestOptionsRoundTrip: the String form of every valid Options parses back
// to options that resolve the same under every Defaults, and Parse of a
// String form prints the same string.
func TestOptionsRoundTrip(t *testing.T) {
	defaults := []Defaults{{}, {ArrayMap: true}, {Gather: reduce.GatherRoot}, {ArrayMap: true, Gather: reduce.GatherAll}}
	for _, o := range allOptions() {
		s := o.String()
		p, err := ParseOptions(s)
		if err != nil {
			t.Errorf("%+v: ParseOptions(%q): %v", o, s, err)
			continue
		}
		for _, d := range defaults {
			if o.Validate(d) != nil {
				continue
			}
			if a, b := o.Resolve(d), p.Resolve(d); a != b {
				t.Errorf("%+v prints %q, which parses to %+v: resolved with %+v %+v, want %+v", o, s, p, d, b, a)
			}
		}
		if p.String() != s {
			t.Errorf("%+v prints %q; parsed back it prints %q", o, s, p.String())
		}
		// The text form (a flag.TextVar) is the same round trip.
		b, _ := o.MarshalText()
		var q Options
		if err := q.UnmarshalText(b); err != nil || q != p {
			t.Errorf("%+v: UnmarshalText(%q) = %+v, %v; want %+v", o, b, q, err, p)
		}
	}
	var q Options
	if err := q.UnmarshalText([]byte("sideways")); err == nil {
		t.Errorf("UnmarshalText(sideways): no error")
	}
}

func TestOptionsResolve(t *testing.T) {
	wc := Defaults{ArrayMap: true}
	hist := Defaults{ArrayMap: true, Gather: reduce.GatherRoot}
	spam := Defaults{}
	for _, c := range []struct {
		o    Options
		d    Defaults
		want Options
	}{
		{Options{}, wc, Options{Map: MapArray, Gather: reduce.GatherPartitioned}},
		{Options{}, hist, Options{Map: MapArray, Gather: reduce.GatherRoot}},
		{Options{}, spam, Options{Map: MapElement, Gather: reduce.GatherPartitioned}},
		{Options{Dist: distrib.Cyclic}, wc, Options{Map: MapElement, Dist: distrib.Cyclic, Gather: reduce.GatherPartitioned}},
		{Options{Map: MapElement, Gather: reduce.GatherAll}, hist, Options{Map: MapElement, Gather: reduce.GatherAll}},
	} {
		if got := c.o.Resolve(c.d); got != c.want {
			t.Errorf("%+v.Resolve(%+v) = %+v; want %+v", c.o, c.d, got, c.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range allOptions() {
		if err := o.Validate(Defaults{ArrayMap: true}); err != nil {
			t.Errorf("%v: %v", o, err)
		}
	}
	bad := Options{Map: 7, Dist: distrib.Custom, Threshold: -1, Gather: 9, Root: -1, Transfer: 5}
	err := bad.Validate(Defaults{})
	for _, want := range []string{"map mode MapMode(7)", "distribution custom", "threshold -1", "gather mode Gather(9)", "root -1", "transfer mode 5"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%+v) = %v; want it to report %q", bad, err, want)
		}
	}
	for _, c := range []struct {
		o    Options
		d    Defaults
		want string
	}{
		{Options{Map: MapArray}, Defaults{}, "map array: the job has only the element-by-element map"},
	} {
		if err := c.o.Validate(c.d); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v.Validate(%+v) = %v; want %q", c.o, c.d, err, c.want)
		}
	}
	if err := (Options{Map: MapArray, Root: -1}).Validate(Defaults{}); !errors.Is(err, ErrNoArrayMap) {
		t.Errorf("Validate = %v; want it to wrap ErrNoArrayMap", err)
	}
	if err := (Options{Root: 2}).CheckRanks(2); err == nil || err.Error() != "root 2 is not a rank (ranks are 0 to 1)" {
		t.Errorf("CheckRanks = %v", err)
	}
	if err := (Options{Root: 1}).CheckRanks(2); err != nil {
		t.Errorf("CheckRanks = %v", err)
	}
}

// TestReduceOptions: the gather modes that leave pairs spread are merged
// to the root, once, in one place.
func TestReduceOptions(t *testing.T) {
	for _, c := range []struct {
		o     Options
		d     Defaults
		merge bool
		g     reduce.Gather
	}{
		{Options{}, Defaults{}, true, reduce.GatherPartitioned},
		{Options{}, Defaults{Gather: reduce.GatherRoot}, false, reduce.GatherRoot},
		{Options{Gather: reduce.GatherNone}, Defaults{Gather: reduce.GatherRoot}, true, reduce.GatherNone},
		{Options{Gather: reduce.GatherAll}, Defaults{}, false, reduce.GatherAll},
	} {
		var ro redOpts
		for _, f := range c.o.ReduceOptions(c.d) {
			f(&ro)
		}
		if ro.o.Gather != c.g || ro.o.Merge != c.merge || ro.o.Root != c.o.Root {
			t.Errorf("%v with %+v: gather %v merge %v; want %v %v", c.o, c.d, ro.o.Gather, ro.o.Merge, c.g, c.merge)
		}
		NoMerge()(&ro)
		if ro.o.Merge || ro.o.Gather != c.g {
			t.Errorf("%v with %+v, then NoMerge: gather %v merge %v", c.o, c.d, ro.o.Gather, ro.o.Merge)
		}
	}
}
