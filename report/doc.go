// Package report renders reconcile runs and findings for people and for
// programs: text (a summary and a table with thousands separators and masked
// counterparties), JSON in the shape docs/formats.md describes, and CSV.
// Output is deterministic for the same input. It also draws a progress bar
// on a terminal for long runs.
//
// It only formats what it is given: it reads no store and decides nothing
// about findings.
package report
