//go:build !race

package dbtest

// Race is true when the tests run with the race detector, which slows the
// SQLite engine (Go translated from C) some twentyfold: randomized tests
// draw less under it.
const Race = false
