// Package intentcsv reads intents from another system's CSV export (the
// format is in docs/formats.md) and imports them into the ledger atomically,
// streaming the rows to the store's bulk import: the whole file is accepted,
// or nothing is imported and every rejected row is quarantined with the
// line, column and reason. Re-importing the same file changes nothing.
// Intents imported in a final state are history; a pending one is charged
// only when the caller asks (the CLI's --charge enqueues the charges in the
// same transaction).
package intentcsv
