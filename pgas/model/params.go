package model

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// PaperGB is the byte count of the "GB" in seeds/000's bandwidths: 1000
// MiB. With it, eq. 23 gives every T_comp of the paper's Table 5 to the
// printed digits (3*5000*5000*8 B / (75/16 GB/s) * 1000 steps = 122.07 s);
// with 10^9 or 2^30 bytes none of them match (TestPaperTable5Comp).
const PaperGB = 1000 << 20

// Params are the platform parameters of the models: seeds/000 §5.4's four
// hardware numbers, the extensions a software transport needs (each zero
// value falls back to the paper's assumption), and seeds/001 §6.4's pattern
// costs. Times are in seconds and bandwidths in bytes per second.
//
// The zero value is not usable; PaperParams gives the paper's Abel cluster
// and Calibrate measures the transport in use.
type Params struct {
	// WPriv is W_thread^private (§5.1): the aggregate bandwidth of a STREAM
	// run with Workers workers at once on one node, divided by Workers. It
	// counts bytes read plus bytes written, as STREAM does, so copying n
	// bytes costs 2n/WPriv (the factor 2 of eqs. 11, 13 and 14).
	WPriv float64 `json:"w_priv"`
	// Workers is the number of workers (ranks per host) WPriv was measured
	// with. The models do not use it; WPriv is only valid at this count.
	Workers int `json:"workers"`
	// WRem is W_node^remote (§5.2.2): the inter-node bandwidth of one node,
	// from a ping-pong between two nodes. Zero when there is one node.
	WRem float64 `json:"w_rem"`
	// Tau is τ (§5.2.2, Listing 6): the time of one individual inter-node
	// access, measured with every rank reading random remote elements at
	// once. It is also the start-up of every inter-node message in eqs. 11
	// and 13 unless MsgRemote is set. Zero when there is one node.
	Tau float64 `json:"tau"`
	// CacheLine is the last-level cache line in bytes (CL in eqs. 9 and
	// 15).
	CacheLine int `json:"cache_line"`

	// WLocal is W_thread^local (eq. 8), the bandwidth of contiguous
	// transfers between ranks of one node, counted like WPriv (a copy of n
	// bytes costs 2n/WLocal). Zero means WPriv, the paper's assumption.
	WLocal float64 `json:"w_local,omitempty"`
	// TauLocal is T_indv^local, one individual access to another rank on
	// the same node. Zero means CacheLine/WLocal (eq. 9). Through a
	// software transport it is a call, not a cache line, and is measured
	// like Tau.
	TauLocal float64 `json:"tau_local,omitempty"`
	// TauOwn is one individual access through the runtime (an element
	// Get) to an element the rank owns itself. A UPC compiler turns such
	// an access into a load (the paper counts it as private work); a
	// software runtime makes it a call. Zero: free, the paper's model.
	TauOwn float64 `json:"tau_own,omitempty"`
	// TauHit is one access served by the remote-reference cache
	// (pgas.Config.Cache), used by PredictV1Cache. Zero means TauOwn.
	TauHit float64 `json:"tau_hit,omitempty"`
	// MsgLocal is the start-up of one bulk message between ranks of a node
	// (the intercept of the ping-pong fit). The paper has none: zero.
	MsgLocal float64 `json:"msg_local,omitempty"`
	// MsgRemote is the start-up of one inter-node message. Zero means Tau,
	// the paper's choice in eqs. 11 and 13.
	MsgRemote float64 `json:"msg_remote,omitempty"`
	// Barrier is the cost of one barrier, charged for the barriers a
	// Problem declares and for v3's own (eq. 18). The paper does not price
	// barriers: zero.
	Barrier float64 `json:"barrier,omitempty"`

	// Patterns are the access costs of seeds/001's four patterns and of
	// private memory, for the pattern-rate model (eq. 6.1). The SpMV
	// models do not use them.
	Patterns PatternRates `json:"patterns,omitzero"`
}

// PaperParams returns the parameters of seeds/000 Table 4 (Abel: 16 threads
// per node, W_priv = 75/16 GB/s, W_rem = 6 GB/s, τ = 3.4 µs) with GB =
// PaperGB. The paper never prints the cache line; cl is it (64 on Abel's
// Sandy Bridge). Which GB W_rem is in cannot be told from the paper: no
// printed number depends on it alone.
func PaperParams(cl int) Params {
	return Params{
		WPriv:     75.0 / 16 * PaperGB,
		Workers:   16,
		WRem:      6 * PaperGB,
		Tau:       3.4e-6,
		CacheLine: cl,
	}
}

// wLocal, tauLocal and msgRemote apply the fallbacks documented on Params.
func (p Params) wLocal() float64 {
	if p.WLocal > 0 {
		return p.WLocal
	}
	return p.WPriv
}

func (p Params) tauLocal() float64 {
	if p.TauLocal > 0 {
		return p.TauLocal
	}
	return float64(p.CacheLine) / p.wLocal() // eq. 9
}

func (p Params) tauHit() float64 {
	if p.TauHit > 0 {
		return p.TauHit
	}
	return p.TauOwn
}

func (p Params) msgRemote() float64 {
	if p.MsgRemote > 0 {
		return p.MsgRemote
	}
	return p.Tau
}

// Validate reports every problem with p, joined into one error, or nil:
// WPriv and CacheLine must be positive, every other number finite and not
// negative. A zero WRem or Tau is valid (one node); a prediction that
// needs them is then +Inf or 0, visibly wrong.
func (p Params) Validate() error {
	var errs []error
	if !(p.WPriv > 0) || math.IsInf(p.WPriv, 0) {
		errs = append(errs, fmt.Errorf("model: WPriv = %v, want a positive finite bandwidth", p.WPriv))
	}
	if p.CacheLine <= 0 {
		errs = append(errs, fmt.Errorf("model: CacheLine = %d, want at least 1", p.CacheLine))
	}
	if p.Workers < 0 {
		errs = append(errs, fmt.Errorf("model: Workers = %d is negative", p.Workers))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"WRem", p.WRem}, {"Tau", p.Tau}, {"WLocal", p.WLocal}, {"TauLocal", p.TauLocal}, {"TauOwn", p.TauOwn}, {"TauHit", p.TauHit},
		{"MsgLocal", p.MsgLocal}, {"MsgRemote", p.MsgRemote}, {"Barrier", p.Barrier},
	} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			errs = append(errs, fmt.Errorf("model: %s = %v, want a finite value >= 0", f.name, f.v))
		}
	}
	if err := p.Patterns.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// div is bytes/w, but 0 when nothing moves (so an unmeasured bandwidth of a
// class no rank uses does not make a NaN).
func div(bytes, w float64) float64 {
	if bytes == 0 {
		return 0
	}
	return bytes / w
}

// times is n*t, but 0 when n is 0.
func times(n int64, t float64) float64 {
	if n == 0 {
		return 0
	}
	return float64(n) * t
}

// String formats the SpMV parameters in readable units (GB = 10^9 bytes),
// those that are zero (unmeasured, or the paper's fallback) left out.
func (p Params) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "W_priv %.3g GB/s x%d workers, CL %d B", p.WPriv/1e9, p.Workers, p.CacheLine)
	for _, f := range []struct {
		name string
		v    float64
		bw   bool
	}{
		{"W_local", p.WLocal, true}, {"tau_local", p.TauLocal, false}, {"tau_own", p.TauOwn, false}, {"tau_hit", p.TauHit, false}, {"msg_local", p.MsgLocal, false},
		{"W_rem", p.WRem, true}, {"tau", p.Tau, false}, {"msg_remote", p.MsgRemote, false},
		{"barrier", p.Barrier, false},
	} {
		switch {
		case f.v == 0:
		case f.bw:
			fmt.Fprintf(&b, ", %s %.3g GB/s", f.name, f.v/1e9)
		default:
			fmt.Fprintf(&b, ", %s %s", f.name, time.Duration(math.Round(f.v*1e9)))
		}
	}
	return b.String()
}
