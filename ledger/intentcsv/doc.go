// Package intentcsv reads intents from another system's CSV export (DESIGN.md
// section 6) and imports them into the ledger atomically: the whole file is
// accepted, or nothing is imported and every rejected row is quarantined with
// the line, column and reason. Re-importing the same file changes nothing.
// It never charges: imported intents are history, not work.
package intentcsv
