package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgasmr/pgasmr/internal/bench"
	"github.com/pgasmr/pgasmr/mr"
)

// benchExternal is one --external [APP:]NAME=COMMAND: a command bench runs
// beside pgasmr's jobs, at every rank count of --ranks, timed as a whole
// process; its exit status is checked, its output is not compared.
type benchExternal struct {
	app     string // the one app it runs for; "" for every app of --apps
	name    string // its configuration name in the results
	command string // the template, with {input} and {ranks}
}

// externalBuiltins are the configuration names an external cannot take
// (besides the modes, which parseExternal asks mr.ParseOptions about).
var externalBuiltins = []string{"seq", "goroutines", "mrmpi", "none"}

// parseExternal parses one --external value, [APP:]NAME=COMMAND: the
// first = ends the name (COMMAND may hold any character), a : before it
// restricts the command to APP. NAME is made of letters, digits, '.', '_'
// and '-', starts with a letter or digit, and is neither a built-in
// configuration (a baseline or a mode) nor an app; COMMAND holds {input}.
// Whether APP is in --apps and NAME unique per app is the plan's to check.
func parseExternal(v string) (benchExternal, error) {
	spec, command, ok := strings.Cut(v, "=")
	if !ok {
		return benchExternal{}, usagef("--external %q: want [APP:]NAME=COMMAND (like wordcount:phoenix='word_count {input}')", v)
	}
	var e benchExternal
	e.command = strings.TrimSpace(command)
	e.name = strings.TrimSpace(spec)
	if app, name, ok := strings.Cut(e.name, ":"); ok {
		a, err := findApp(strings.TrimSpace(app))
		if err != nil {
			return benchExternal{}, usagef("--external %q: %v", v, err)
		}
		e.app, e.name = a.name, strings.TrimSpace(name)
	}
	if err := checkExternalName(e.name); err != nil {
		return benchExternal{}, usagef("--external %q: %v", v, err)
	}
	switch {
	case e.command == "":
		return benchExternal{}, usagef("--external %q: no command after =", v)
	case !strings.Contains(e.command, "{input}"):
		return benchExternal{}, usagef("--external %q: the command has no {input} (the app's input path goes there)", v)
	}
	return e, nil
}

// checkExternalName says why name cannot name an external, if it cannot.
func checkExternalName(name string) error {
	if name == "" {
		return fmt.Errorf("no name before = (want [APP:]NAME=COMMAND)")
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || i > 0 && (r == '.' || r == '_' || r == '-')
		if !ok {
			return fmt.Errorf("name %q: want letters, digits, '.', '_' and '-', starting with a letter or digit", name)
		}
	}
	if _, err := mr.ParseOptions(name); err == nil || slices.Contains(externalBuiltins, name) {
		return fmt.Errorf("name %q is a built-in configuration (%s or a mode); pick another", name, strings.Join(externalBuiltins, ", "))
	}
	if _, err := findApp(name); err == nil {
		return fmt.Errorf("name %q is an app; to run the command for %s only, write %s:NAME=COMMAND", name, name, name)
	}
	return nil
}

// forApp says whether e runs for app.
func (e benchExternal) forApp(app string) bool { return e.app == "" || e.app == app }

// expand returns e's command for one run: {input} replaced by the input
// paths, each quoted for sh and separated by spaces, and {ranks} by the
// rank count. Both are replaced in one pass, so a path holding "{ranks}"
// stays as it is.
func (e benchExternal) expand(inputs []string, ranks int) string {
	quoted := make([]string, len(inputs))
	for i, in := range inputs {
		quoted[i] = shellQuote(in)
	}
	return strings.NewReplacer("{input}", strings.Join(quoted, " "), "{ranks}", strconv.Itoa(ranks)).Replace(e.command)
}

// shellQuote returns s as one word for sh: as it is if it is made of
// characters sh gives no meaning to, in single quotes otherwise.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// externalStderrLines is how many lines of a failed command's stderr its
// error quotes, externalLineMax how many bytes of each.
const (
	externalStderrLines = 5
	externalLineMax     = 200
)

// runExternal runs command under sh -c, its stdout discarded (through a
// pipe, as a job's output is read in --exec runs) and its stderr kept for
// the error, and returns its wall time, process start and exit included.
// A cancelled ctx kills the command and what it started (on Unix, its
// process group). The error of a command that fails names the command (as
// sh -c 'COMMAND', to paste into a shell), its exit status and the first
// lines of its stderr; the caller names the external.
func runExternal(ctx context.Context, command string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	stderr := headWriter{max: 4096}
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	cmd.WaitDelay = time.Second // a child that keeps the pipes open after sh is killed
	ownProcessGroup(cmd)
	t0 := time.Now()
	err := cmd.Run()
	took := time.Since(t0)
	if err != nil {
		return took, fmt.Errorf("sh -c %s: %w; %s", shellQuote(command), err, stderr.lines())
	}
	return took, nil
}

// headWriter keeps the first max bytes written to it and drops the rest.
type headWriter struct {
	buf []byte
	max int
}

func (w *headWriter) Write(p []byte) (int, error) {
	if n := min(len(p), w.max-len(w.buf)); n > 0 {
		w.buf = append(w.buf, p[:n]...)
	}
	return len(p), nil
}

// lines returns the first non-blank lines kept, for an error: "stderr:
// line; line", each line cut at externalLineMax bytes.
func (w *headWriter) lines() string {
	var out []string
	for line := range strings.Lines(string(w.buf)) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(line) > externalLineMax {
			line = strings.ToValidUTF8(line[:externalLineMax], "") + "..."
		}
		if out = append(out, line); len(out) == externalStderrLines {
			break
		}
	}
	if len(out) == 0 {
		return "no stderr"
	}
	return "stderr: " + strings.Join(out, "; ")
}

// benchRow is one row of mrrun bench's results: a configuration's figures
// and, for an external command, which one. In the JSON an external's row
// has "baseline": NAME and "external": {"command": ..., "output_compared":
// false}; other rows have no "external".
type benchRow struct {
	bench.Result
	External *benchExternalJSON `json:"external,omitempty"`
}

// benchExternalJSON marks an external command's row.
type benchExternalJSON struct {
	Command        string `json:"command"`         // the template, as --external gave it
	OutputCompared bool   `json:"output_compared"` // false: only the exit status is checked
}

// writeBenchTable prints rows as bench.WriteTable does, an external's
// configuration as NAME*, and under the table a footnote on them.
func writeBenchTable(w io.Writer, rows []benchRow) error {
	results := make([]bench.Result, len(rows))
	type note struct {
		name, command string
		apps          []string
	}
	var notes []note
	for i, r := range rows {
		results[i] = r.Result
		if r.External == nil {
			continue
		}
		results[i].Baseline += "*"
		j := slices.IndexFunc(notes, func(n note) bool { return n.name == r.Baseline && n.command == r.External.Command })
		if j < 0 {
			j = len(notes)
			notes = append(notes, note{name: r.Baseline, command: r.External.Command})
		}
		if !slices.Contains(notes[j].apps, r.App) {
			notes[j].apps = append(notes[j].apps, r.App)
		}
	}
	if err := bench.WriteTable(w, results); err != nil {
		return err
	}
	if len(notes) == 0 {
		return nil
	}
	b := []byte("* external command, run by sh -c and timed as a whole process; exit status checked, output not compared with seq's:\n")
	for _, n := range notes {
		b = fmt.Appendf(b, "  %s (%s): %s\n", n.name, strings.Join(n.apps, ", "), n.command)
	}
	_, err := w.Write(b)
	return err
}

// plotResults returns the results to draw: an external's rows each as a
// baseline of its own ("external NAME ranks=N"), a reference line at its
// figure with a marker at its rank count, as seq's. (bench.WritePlot draws
// a baseline as one line at its first figure, which a command run at
// several rank counts is not.)
func plotResults(rows []benchRow) []bench.Result {
	results := make([]bench.Result, len(rows))
	for i, r := range rows {
		results[i] = r.Result
		if r.External != nil {
			results[i].Baseline = fmt.Sprintf("external %s ranks=%d", r.Baseline, r.Ranks)
		}
	}
	return results
}
