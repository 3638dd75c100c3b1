package mr

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/reduce"
)

// MapMode selects how a job's map runs.
type MapMode int

// The map modes.
const (
	// MapDefault is the zero value: the job's fast path (see
	// Defaults.ArrayMap), or the element map when Options.Dist is not
	// Block.
	MapDefault MapMode = iota
	// MapElement maps element by element (ApplyMap), dealt by Dist.
	MapElement
	// MapArray calls the job's array-based map once per rank
	// (ApplyMapArray) over a contiguous share of the input.
	MapArray
)

func (m MapMode) String() string {
	switch m {
	case MapDefault:
		return "default"
	case MapElement:
		return "element"
	case MapArray:
		return "array"
	}
	return fmt.Sprintf("MapMode(%d)", int(m))
}

// Options are the settings every MapReduce job has, whatever its map and
// reduce functions: which map runs, how its input is dealt to the ranks,
// how the reduce stage moves pairs and which rank gets the result. The
// zero value is valid: every field then takes the job's default (see
// Defaults and Resolve). Applications embed Options in their own options
// type; mrrun parses them once, from its flags (Set) or from the String
// form (ParseOptions).
//
// The String form is a list of modes joined by "+", one for each field that
// differs from the zero value, in this order (what mrrun's --mode and mrrun
// bench's --modes take):
//
//	array | element           Map (element is left out when Dist implies it)
//	cyclic | balanced | bestfit
//	                          Dist (block, the zero value, is left out)
//	threshold=T               Threshold (bestfit only)
//	gather-all | gather-root | gather-none | gather-partitioned
//	                          Gather
//	no-collectives            Transfer = reduce.ElementByElement
//	node=on | node=off        Node (reduce.NodeOn, reduce.NodeOff)
//	node-budget=N             NodeBudget
//	root=N                    Root
//
// The zero Options prints as "default", and "default" may appear among the
// modes of a parsed string, where it sets nothing.
type Options struct {
	// Map selects the element-by-element or the array-based map.
	Map MapMode
	// Dist deals the input elements to the ranks (default distrib.Block,
	// contiguous shares); any other distribution implies MapElement under
	// MapDefault.
	Dist distrib.Kind
	// Threshold is best-fit's threshold on the largest load difference
	// (in the input's weight unit; bytes for the apps). Other
	// distributions ignore it.
	Threshold float64
	// Gather is the reduce stage's gather mode; GatherDefault is the job's
	// (Defaults.Gather).
	Gather reduce.Gather
	// Root is the rank that gets the result (under GatherAll every rank
	// computes it).
	Root int
	// Transfer moves the pairs with collectives (the default) or element
	// by element.
	Transfer reduce.Transfer
	// Node says whether the ranks of a node combine their pairs into one
	// node-level table before pairs move (reduce.NodeCombine; the zero
	// value, NodeAuto, where it is correct and pays).
	Node reduce.NodeCombine
	// NodeBudget bounds the pairs the ranks of a node hold while they map
	// with node combining (reduce.Options.NodeBudget: 0 is the default,
	// negative is no bound).
	NodeBudget int
}

// Defaults are what a job makes of Options' zero fields: they are part of
// the job (an application declares its own once), not of a run.
type Defaults struct {
	// ArrayMap says the job has an array-based map, its fast path: under
	// MapDefault it runs when Dist is Block. A job without one maps
	// element by element only.
	ArrayMap bool
	// Gather replaces GatherDefault; GatherDefault here too is resolved
	// by reduce.Gather.Resolve (to GatherPartitioned).
	Gather reduce.Gather
}

// Resolve returns o with the defaults applied: Map is MapElement or
// MapArray, Gather is never GatherDefault, and Threshold is zero unless
// Dist is BestFit. Resolve does not validate.
func (o Options) Resolve(d Defaults) Options {
	if o.Dist != distrib.BestFit {
		o.Threshold = 0
	}
	if o.Map == MapDefault {
		o.Map = MapElement
		if d.ArrayMap && o.Dist == distrib.Block {
			o.Map = MapArray
		}
	}
	if o.Gather == reduce.GatherDefault {
		o.Gather = d.Gather.Resolve()
	}
	return o
}

// ErrNoArrayMap is the problem Validate reports, wrapped and naming the
// field, with MapArray for a job that has no array map.
var ErrNoArrayMap = errors.New("the job has only the element-by-element map")

// Validate reports every problem with o for a job with defaults d, joined;
// nil if there is none. Each names the field and the value.
func (o Options) Validate(d Defaults) error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch o.Map {
	case MapDefault, MapElement:
	case MapArray:
		if !d.ArrayMap {
			errs = append(errs, fmt.Errorf("map array: %w", ErrNoArrayMap))
		}
	default:
		add("map mode %v: want default, element or array", o.Map)
	}
	switch o.Dist {
	case distrib.Block, distrib.Cyclic, distrib.Balanced, distrib.BestFit:
	default:
		add("distribution %v: want block, cyclic, balanced or bestfit", o.Dist)
	}
	if math.IsNaN(o.Threshold) || math.IsInf(o.Threshold, 0) || o.Threshold < 0 {
		add("threshold %v: want a finite number >= 0", o.Threshold)
	}
	switch o.Gather {
	case reduce.GatherDefault, reduce.GatherPartitioned, reduce.GatherAll, reduce.GatherRoot, reduce.GatherNone:
	default:
		add("gather mode %v: want all, root, none or partitioned", o.Gather)
	}
	if o.Root < 0 {
		add("root %d: want a rank >= 0", o.Root)
	}
	if o.Transfer != reduce.Collective && o.Transfer != reduce.ElementByElement {
		add("transfer mode %d: want collective or element", int(o.Transfer))
	}
	return errors.Join(errs...)
}

// CheckRanks reports whether o's root is a rank of a job of ranks ranks.
func (o Options) CheckRanks(ranks int) error {
	if o.Root < 0 || o.Root >= ranks {
		return fmt.Errorf("root %d is not a rank (ranks are 0 to %d)", o.Root, ranks-1)
	}
	return nil
}

// MapOptions returns the ApplyMap options o selects: the distribution and
// best-fit's threshold.
func (o Options) MapOptions() []MapOption {
	return []MapOption{WithDistribution(o.Dist), WithThreshold(o.Threshold)}
}

// ReduceOptions returns the ApplyReduce options of a job whose result is
// wanted on Root: the gather mode (resolved with d), the root and the
// transfer, and Merge where the gather leaves the pairs spread over the
// ranks (GatherNone, GatherPartitioned), so that Root sees every key.
func (o Options) ReduceOptions(d Defaults) []ReduceOption {
	g := o.Resolve(d).Gather
	ro := []ReduceOption{Gather(g), Root(o.Root), WithTransfer(o.Transfer), WithNodeCombine(o.Node), WithNodeBudget(o.NodeBudget)}
	if g == reduce.GatherNone || g == reduce.GatherPartitioned {
		ro = append(ro, Merge())
	}
	return ro
}

// MarshalText returns o's String form, and UnmarshalText parses one
// (ParseOptions), so that an Options is a command-line flag:
//
//	var o mr.Options
//	flag.TextVar(&o, "mode", mr.Options{}, "the job's modes, joined by +")
func (o Options) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText sets o from its String form (see MarshalText).
func (o *Options) UnmarshalText(b []byte) error {
	v, err := ParseOptions(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// String returns o's String form (see Options): "default" for the zero
// value, else the parts of the non-zero fields joined by "+". An invalid
// field prints as its Go value and does not parse.
func (o Options) String() string {
	var parts []string
	switch {
	case o.Map == MapElement && o.Dist != distrib.Block: // implied by Dist
	case o.Map != MapDefault:
		parts = append(parts, o.Map.String())
	}
	if o.Dist != distrib.Block {
		parts = append(parts, o.Dist.String())
	}
	if o.Threshold != 0 && o.Dist == distrib.BestFit {
		parts = append(parts, "threshold="+strconv.FormatFloat(o.Threshold, 'g', -1, 64))
	}
	if o.Gather != reduce.GatherDefault {
		parts = append(parts, "gather-"+o.Gather.String())
	}
	switch o.Transfer {
	case reduce.Collective:
	case reduce.ElementByElement:
		parts = append(parts, "no-collectives")
	default:
		parts = append(parts, fmt.Sprintf("transfer=%d", int(o.Transfer)))
	}
	if o.Node != reduce.NodeAuto {
		parts = append(parts, "node="+o.Node.String())
	}
	if o.NodeBudget != 0 {
		parts = append(parts, "node-budget="+strconv.Itoa(o.NodeBudget))
	}
	if o.Root != 0 {
		parts = append(parts, "root="+strconv.Itoa(o.Root))
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, "+")
}

// ModeNames are the modes of the String form that take no value, in
// the order mrrun's help lists them.
var ModeNames = []string{"default", "array", "element", "cyclic", "balanced", "bestfit",
	"no-collectives", "gather-all", "gather-root", "gather-none", "gather-partitioned"}

// A Setting gives one field of Options by name, as a command-line flag
// does: Field is the field's name in lower case (map, dist, threshold,
// gather, root, transfer or node) and Value what the field's type prints
// (array, cyclic, 1e+06, all, 2, element, off).
type Setting struct{ Field, Value string }

// A SettingError is a setting that Set refuses: a Value its Field does not
// take (Want says what it takes), or a field given without the value of
// another field that it applies to (Needs; Want is then empty). Callers
// name the setting in their own words: a flag, a part of the String form.
type SettingError struct {
	Setting
	Want  string
	Needs Setting
}

func (e *SettingError) Error() string {
	if e.Want == "" {
		return fmt.Sprintf("%s applies to %s %s only", e.Field, e.Needs.Field, e.Needs.Value)
	}
	return fmt.Sprintf("%s %q: want %s", e.Field, e.Value, e.Want)
}

// Set sets the fields of o that settings give, in order (a later setting
// of a field replaces an earlier one), and applies the rules that tie the
// fields together, the same for mrrun's flags and for ParseOptions: a
// distribution (block too) turns MapDefault into MapElement, since it
// deals the elements of the element map, and a threshold applies to dist
// bestfit only. It returns the first problem, a *SettingError (or an
// error naming a Field that Options lacks), with o partly set; it does not
// check a job's defaults (see Validate).
func (o *Options) Set(settings ...Setting) error {
	given := map[string]Setting{}
	for _, s := range settings {
		if err := o.set(s); err != nil {
			return err
		}
		given[s.Field] = s
	}
	if _, ok := given["dist"]; ok && o.Map == MapDefault {
		o.Map = MapElement
	}
	if t, ok := given["threshold"]; ok && o.Dist != distrib.BestFit {
		return &SettingError{Setting: t, Needs: Setting{"dist", distrib.BestFit.String()}}
	}
	return nil
}

// set sets the one field s gives.
func (o *Options) set(s Setting) error {
	bad := func(want string) error { return &SettingError{Setting: s, Want: want} }
	switch s.Field {
	case "map":
		switch s.Value {
		case "element":
			o.Map = MapElement
		case "array":
			o.Map = MapArray
		default:
			return bad("element or array")
		}
	case "dist":
		k, err := distrib.ParseKind(s.Value)
		if err != nil || k == distrib.Custom {
			return bad("block, cyclic, balanced or bestfit")
		}
		o.Dist = k
	case "threshold":
		t, err := strconv.ParseFloat(s.Value, 64)
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
			return bad("a finite number >= 0")
		}
		o.Threshold = t
	case "gather":
		g, err := ParseGather(s.Value)
		if err != nil {
			return bad("all, root, none or partitioned")
		}
		o.Gather = g
	case "root":
		n, err := strconv.Atoi(s.Value)
		if err != nil || n < 0 {
			return bad("a rank >= 0")
		}
		o.Root = n
	case "transfer":
		switch s.Value {
		case reduce.Collective.String():
			o.Transfer = reduce.Collective
		case reduce.ElementByElement.String():
			o.Transfer = reduce.ElementByElement
		default:
			return bad("collective or element")
		}
	case "node":
		n, err := reduce.ParseNodeCombine(s.Value)
		if err != nil {
			return bad("auto, on or off")
		}
		o.Node = n
	case "node-budget":
		n, err := strconv.Atoi(s.Value)
		if err != nil {
			return bad("an integer (0: the default, negative: no bound)")
		}
		o.NodeBudget = n
	default:
		return fmt.Errorf("mr: Options has no field %q (want map, dist, threshold, gather, root, transfer, node or node-budget)", s.Field)
	}
	return nil
}

// ParseOptions parses the String form: parts joined by "+", in any order,
// each at most once. Each part but "default" is a Setting, applied by Set
// with its rules: a distribution part ("block" too) sets MapElement unless
// "array" is given, as mrrun's --dist does, and threshold= needs bestfit.
// It rejects unknown parts, contradictions (two distributions) and what
// Set refuses with an error naming the part (and not the whole string:
// callers name their source, "--modes cyclic+x: ..."); it does not check
// a job's defaults (see Validate). ParseOptions(o.String()) resolves to
// what o resolves to for every valid o.
func ParseOptions(s string) (Options, error) {
	var o Options
	if strings.TrimSpace(s) == "" {
		return o, errors.New("no mode (want \"default\" or modes joined by +)")
	}
	nouns := map[string]string{"map": "map mode", "dist": "distribution", "threshold": "threshold",
		"gather": "gather mode", "root": "root", "transfer": "transfer mode", "node": "node-combine setting", "node-budget": "node budget"}
	given := map[string]string{} // field → part that gave it
	var settings []Setting
	for _, part := range strings.Split(s, "+") {
		if part == "default" {
			continue
		}
		st, err := partSetting(part)
		if err != nil {
			return o, err
		}
		if prev, ok := given[st.Field]; ok {
			if prev == part {
				return o, fmt.Errorf("%s given twice", part)
			}
			return o, fmt.Errorf("two %ss (%s and %s)", nouns[st.Field], prev, part)
		}
		given[st.Field] = part
		settings = append(settings, st)
	}
	if err := o.Set(settings...); err != nil {
		var se *SettingError
		switch {
		case !errors.As(err, &se):
			return o, err
		case se.Want == "":
			return o, fmt.Errorf("%s= applies to %s only", se.Field, se.Needs.Value)
		default:
			return o, fmt.Errorf("%s: want %s", given[se.Field], se.Want)
		}
	}
	return o, nil
}

// partSetting returns the Setting that part, a part of the String form
// other than "default", stands for.
func partSetting(part string) (Setting, error) {
	name, val, hasVal := strings.Cut(part, "=")
	switch {
	case part == "array" || part == "element":
		return Setting{"map", part}, nil
	case part == "block" || part == "cyclic" || part == "balanced" || part == "bestfit":
		return Setting{"dist", part}, nil
	case strings.HasPrefix(part, "gather-"):
		g := strings.TrimPrefix(part, "gather-")
		if _, err := ParseGather(g); err != nil {
			return Setting{}, fmt.Errorf("unknown gather mode %q (want gather-all, gather-root, gather-none or gather-partitioned)", part)
		}
		return Setting{"gather", g}, nil
	case part == "no-collectives":
		return Setting{"transfer", reduce.ElementByElement.String()}, nil
	case hasVal && (name == "threshold" || name == "root" || name == "node" || name == "node-budget"):
		return Setting{name, val}, nil
	}
	return Setting{}, fmt.Errorf("unknown mode %q (want %s, threshold=T, root=N, node=on|off or node-budget=N, or several joined by +)", part, strings.Join(ModeNames, ", "))
}

// ParseGather parses a gather mode's name as reduce.Gather's String
// prints it: all, root, none or partitioned.
func ParseGather(s string) (reduce.Gather, error) {
	for _, g := range []reduce.Gather{reduce.GatherAll, reduce.GatherRoot, reduce.GatherNone, reduce.GatherPartitioned} {
		if g.String() == s {
			return g, nil
		}
	}
	return reduce.GatherDefault, fmt.Errorf("unknown gather mode %q (want all, root, none or partitioned)", s)
}
