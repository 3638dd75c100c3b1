//go:build race

package pgastest_test

// raceEnabled: the race detector reports the data races that some faults
// cause on purpose.
const raceEnabled = true
