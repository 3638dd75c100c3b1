package main

import (
	"fmt"
	"io"
	"strings"
)

// cmdList is mrrun list: the apps, their input formats and flags.
func cmdList(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return usagef("list takes no arguments (got %q)", strings.Join(args, " "))
	}
	for i, a := range apps {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "%s: %s\n", a.name, a.summary)
		fmt.Fprintf(stdout, "  input:   %s\n", a.input)
		maps := "element (any --dist)"
		if a.defaults.ArrayMap {
			maps = "array (default, the fast path), element (any --dist)"
		}
		fmt.Fprintf(stdout, "  map:     %s\n", maps)
		fmt.Fprintf(stdout, "  gather:  %s by default\n", a.defaults.Gather)
		fmt.Fprintf(stdout, "  output:  text (default), tsv, csv, json\n")
		for _, f := range a.flags {
			fmt.Fprintf(stdout, "  --%s: %s\n", f, strings.SplitN(appFlags[f], ": ", 2)[1])
		}
	}
	return nil
}
