package model

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine identifies the machine a calibration was measured on.
type Machine struct {
	Hostname   string `json:"hostname"`
	CPU        string `json:"cpu"` // model name from /proc/cpuinfo, else GOARCH
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	GoVersion  string `json:"go_version"`
}

// ThisMachine describes the machine the calling process runs on.
func ThisMachine() Machine {
	return Machine{
		Hostname:   hostname(),
		CPU:        cpuModel(),
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		GoVersion:  runtime.Version(),
	}
}

// hostname is the host's name, "unknown" if the system does not say.
func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// sysCache reads a size ("32768K") or number from the first CPU's cache
// description in sysfs, or returns 0.
func sysCache(index, file string) int64 {
	b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cache/" + index + "/" + file)
	if err != nil {
		return 0
	}
	s := strings.TrimSpace(string(b))
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return v * mul
}

// lastLevelCache is the largest cache of CPU 0, 32 MiB if unknown.
func lastLevelCache() int64 {
	var best int64
	for _, idx := range []string{"index3", "index2", "index1"} {
		best = max(best, sysCache(idx, "size"))
	}
	if best == 0 {
		return 32 << 20
	}
	return best
}

// cacheLine is the last-level cache's line, 64 if unknown.
func cacheLine() int {
	for _, idx := range []string{"index3", "index2", "index0"} {
		if v := sysCache(idx, "coherency_line_size"); v > 0 {
			return int(v)
		}
	}
	return 64
}

// Calibration is a set of measured parameters with what they were measured
// on. It is saved as JSON.
type Calibration struct {
	// Transport is the transport's name, wrappers included
	// ("inproc+latency").
	Transport string `json:"transport"`
	// Ranks and RanksPerNode are the job's.
	Ranks        int     `json:"ranks"`
	RanksPerNode int     `json:"ranks_per_node"`
	Machine      Machine `json:"machine"`
	// Time is when the calibration ran (UTC).
	Time    time.Time        `json:"time"`
	Options CalibrateOptions `json:"options"`
	Params  Params           `json:"params"`
	// PingSameNode and PingOtherNode are the raw ping-pong curves the
	// link parameters were fitted to (nil when no pair of the class
	// existed).
	PingSameNode  []SizePoint `json:"ping_same_node,omitempty"`
	PingOtherNode []SizePoint `json:"ping_other_node,omitempty"`
}

// Key names what the calibration is valid for: the transport, ranks, ranks
// per node and machine (host name, CPU model, GOMAXPROCS, GOARCH). It is
// safe in a file name: "inproc-np2-rpn2-" and 16 hex digits.
func (c *Calibration) Key() string {
	h := sha256.New()
	m := c.Machine
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%s", m.Hostname, m.CPU, m.GOMAXPROCS, m.GOARCH)
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '_' {
			return r
		}
		return '_'
	}, c.Transport)
	return fmt.Sprintf("%s-np%d-rpn%d-%s", name, c.Ranks, c.RanksPerNode, hex.EncodeToString(h.Sum(nil)[:8]))
}

// Matches reports whether c was measured for this transport, job shape and
// machine, that is whether its Key equals the Key of a calibration with
// these values.
func (c *Calibration) Matches(transport string, ranks, ranksPerNode int, m Machine) bool {
	o := Calibration{Transport: transport, Ranks: ranks, RanksPerNode: ranksPerNode, Machine: m}
	return c.Key() == o.Key()
}

// Save writes c to w as indented JSON. It returns an error if c's
// parameters are invalid (JSON cannot hold an infinite time) or w fails.
func Save(w io.Writer, c *Calibration) error {
	if err := c.Params.Validate(); err != nil {
		return fmt.Errorf("model: save calibration %s: %w", c.Key(), err)
	}
	b, err := json.MarshalIndent(c, "", "\t")
	if err != nil {
		return fmt.Errorf("model: save calibration %s: %w", c.Key(), err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("model: save calibration %s: %w", c.Key(), err)
	}
	return nil
}

// Load reads a calibration Save wrote and validates its parameters.
// Unknown fields are an error, so a file from an incompatible version is
// not half-read.
func Load(r io.Reader) (*Calibration, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var c Calibration
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("model: load calibration: %w", err)
	}
	if err := c.Params.Validate(); err != nil {
		return nil, fmt.Errorf("model: load calibration %s: %w", c.Key(), err)
	}
	return &c, nil
}

// WriteFile saves c to path, through a temporary file renamed into place
// so that a reader never sees half a file.
func WriteFile(path string, c *Calibration) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".calibration-*")
	if err != nil {
		return fmt.Errorf("model: write %s: %w", path, err)
	}
	fail := func(err error) error {
		return errors.Join(fmt.Errorf("model: write %s: %w", path, err), tmp.Close(), os.Remove(tmp.Name()))
	}
	if err := Save(tmp, c); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return errors.Join(fmt.Errorf("model: write %s: %w", path, err), os.Remove(tmp.Name()))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return errors.Join(fmt.Errorf("model: write %s: %w", path, err), os.Remove(tmp.Name()))
	}
	return nil
}

// ReadFile loads the calibration saved at path.
func ReadFile(path string) (*Calibration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	defer f.Close()
	c, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return c, nil
}
