// Package report renders reconcile runs and findings for people and for
// programs: text (a summary and a table with thousands separators and masked
// counterparties), JSON in the shape docs/formats.md describes, and CSV.
// Output is deterministic for the same input. It also draws a progress bar
// on a terminal for long runs.
//
// It formats what it is given and decides nothing about findings. The one
// place it reads the books is an import's dry run (CheckIntents,
// CheckStatement): a file read as its import would read it, its keys
// looked up, and nothing written.
package report
