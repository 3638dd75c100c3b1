//go:build !race

package pgastest_test

const raceEnabled = false
