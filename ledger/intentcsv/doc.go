// Package intentcsv reads intents from another system's CSV export (the
// format is in docs/formats.md) and imports them into the ledger atomically:
// the whole file is accepted, or nothing is imported and every rejected row
// is quarantined with the line, column and reason. Re-importing the same
// file changes nothing. Intents imported in a final state are history; the
// caller decides how a pending one is created (the CLI enqueues its charge in
// the same transaction).
package intentcsv
