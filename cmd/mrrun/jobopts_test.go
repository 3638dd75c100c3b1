package main

import (
	"io"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/reduce"
)

// runOptions parses args as the run flags and returns the job options
// they give app.
func runOptions(t *testing.T, app string, args ...string) (mr.Options, error) {
	t.Helper()
	fs := newFlagSet("mrrun")
	var f runFlags
	f.define(fs)
	if err := parseFlags(fs, args, io.Discard, ""); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	a, err := findApp(app)
	if err != nil {
		t.Fatal(err)
	}
	return f.jobOptions(fs, a)
}

// TestRunOptionFlags: the separate flags and --mode give the same options,
// through mr's one set of rules.
func TestRunOptionFlags(t *testing.T) {
	for _, c := range []struct {
		app   string
		flags []string
		mode  string
		want  mr.Options
	}{
		{"wordcount", nil, "default", mr.Options{}},
		{"wordcount", []string{"--dist", "block"}, "block", mr.Options{Map: mr.MapElement}},
		{"wordcount", []string{"--dist", "cyclic"}, "cyclic", mr.Options{Map: mr.MapElement, Dist: distrib.Cyclic}},
		{"wordcount", []string{"--map", "array", "--dist", "block"}, "array+block", mr.Options{Map: mr.MapArray}},
		{"wordcount", []string{"--map", "", "--gather", ""}, "default", mr.Options{}},
		{"histogram", []string{"--threshold", "1e6", "--dist", "bestfit"}, "threshold=1e6+bestfit", mr.Options{Map: mr.MapElement, Dist: distrib.BestFit, Threshold: 1e6}},
		{"spamcount", []string{"--gather", "root", "--root", "1", "--no-collectives"}, "no-collectives+root=1+gather-root",
			mr.Options{Gather: reduce.GatherRoot, Root: 1, Transfer: reduce.ElementByElement}},
		{"linreg", []string{"--no-collectives=false", "--map", "element"}, "element", mr.Options{Map: mr.MapElement}},
	} {
		got, err := runOptions(t, c.app, c.flags...)
		if err != nil || got != c.want {
			t.Errorf("%s %q: %+v, %v; want %+v", c.app, c.flags, got, err, c.want)
		}
		got, err = runOptions(t, c.app, "--mode", c.mode)
		if err != nil || got != c.want {
			t.Errorf("%s --mode %s: %+v, %v; want %+v", c.app, c.mode, got, err, c.want)
		}
	}
	for _, c := range []struct {
		app  string
		args []string
		want string
	}{
		{"wordcount", []string{"--dist", "zigzag"}, `--dist "zigzag": want block, cyclic, balanced or bestfit`},
		{"wordcount", []string{"--dist", "custom"}, `--dist "custom": want block, cyclic, balanced or bestfit`},
		{"wordcount", []string{"--map", "tree"}, `--map "tree": want element or array`},
		{"wordcount", []string{"--gather", "most"}, `--gather "most": want all, root, none or partitioned`},
		{"wordcount", []string{"--threshold", "-1", "--dist", "bestfit"}, "--threshold -1: want a finite number >= 0"},
		{"wordcount", []string{"--threshold", "NaN", "--dist", "bestfit"}, "--threshold NaN: want a finite number >= 0"},
		{"wordcount", []string{"--root", "-1"}, "--root -1: want a rank >= 0"},
		{"wordcount", []string{"--threshold", "0"}, "--threshold applies to --dist bestfit only"},
		{"wordcount", []string{"--threshold", "5", "--dist", "cyclic"}, "--threshold applies to --dist bestfit only"},
		{"wordcount", []string{"--dist", "cyclic", "--map", "array"}, "--dist cyclic needs the element map"},
		{"spamcount", []string{"--map", "array"}, "--map array: spamcount has only the element-by-element map"},
		{"wordcount", []string{"--mode", "threshold=0"}, "--mode threshold=0: threshold= applies to bestfit only"},
		{"wordcount", []string{"--mode", "array+balanced"}, "--mode array+balanced: the array map gives each rank a contiguous share; it does not combine with balanced"},
		{"spamcount", []string{"--mode", "array"}, "--mode array: spamcount: map array: the job has only the element-by-element map"},
		{"wordcount", []string{"--mode", "cyclic", "--no-collectives"}, "--no-collectives with --mode"},
	} {
		_, err := runOptions(t, c.app, c.args...)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s %q: %v; want %q...", c.app, c.args, err, c.want)
		}
		if code := report(t.Context(), io.Discard, err); code != 2 {
			t.Errorf("%s %q: exit status %d, want 2 (a usage error)", c.app, c.args, code)
		}
	}
}

// TestBenchModesCanonical: --modes entries that give the same options in
// another order run once, named by the options' String form.
func TestBenchModesCanonical(t *testing.T) {
	fs := newFlagSet("mrrun bench")
	var f benchFlags
	f.define(fs)
	if err := parseFlags(fs, []string{"--apps", "wordcount,spamcount", "--modes",
		"gather-all+cyclic,cyclic+gather-all, no-collectives+balanced,default,array+block,array,block,element"}, io.Discard, ""); err != nil {
		t.Fatal(err)
	}
	p, err := f.plan(fs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range p.modes {
		names = append(names, m.name)
	}
	if got, want := strings.Join(names, ","), "cyclic+gather-all,balanced+no-collectives,default,array,element"; got != want {
		t.Errorf("modes %s; want %s", got, want)
	}
	// The entry as written names a mode that no app can run.
	f.apps, f.modes = []string{"spamcount"}, []string{"block+array"}
	if _, err := f.plan(fs); err == nil || err.Error() != "--modes block+array: none of the apps has the array map" {
		t.Errorf("plan: %v", err)
	}
}
