// Package golden compares what a test produced with a file under testdata/
// that a person has read and accepted: text reports, CSV, Slack Block Kit
// JSON, rendered pages. It owns the one -update flag of the suite: run the
// tests with -update (make golden) and the files are rewritten from the
// output, so a change of behaviour shows as a diff in review.
//
// The flag is defined by this package, so every test binary that imports it
// gets it; a test package must not define an "update" flag of its own. It is
// imported by tests only, never by production code.
package golden
