package distrib

import (
	"fmt"
	"strconv"
)

// Kind names a work distribution algorithm.
type Kind int

// The distribution algorithms. Plan.Kind never returns BestFit: a best-fit
// plan reports the kind it picked.
const (
	Block    Kind = iota // contiguous ranges
	Cyclic               // element i on rank i mod N
	Balanced             // greedy: next element to the least loaded rank
	BestFit              // the first of Block, Cyclic under a threshold, else Balanced
	Custom               // user-defined owners
)

var kindNames = [...]string{
	Block:    "block",
	Cyclic:   "cyclic",
	Balanced: "balanced",
	BestFit:  "bestfit",
	Custom:   "custom",
}

// String returns the lower-case name of k ("block", "cyclic", "balanced",
// "bestfit", "custom"), or "Kind(k)" for an unknown value.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind returns the Kind whose String is s.
func ParseKind(s string) (Kind, error) {
	for k, name := range kindNames {
		if s == name {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("distrib: unknown distribution %q (want block, cyclic, balanced, bestfit or custom)", s)
}
