//go:build race

package ledgertest

// underRace is true when the suite runs with the race detector, which
// slows the SQLite engine (Go translated from C) some twentyfold: the
// heaviest exercises contend over fewer keys under it.
const underRace = true
