// Package pgstore is the PostgreSQL engine of the ledger, on pgx/v5. It owns the
// SQL for PostgreSQL and translates driver errors into the ledger's errors at
// the edge; no pgx type appears in the ledger's interface. Callers that must
// join a transaction of their own (the queue's transactional enqueue) use
// Unwrap.
//
// The bulk scans a reconcile reads with (ledger.ScanStore) bypass pgx's row
// scanning: one statement each on the extended protocol with every result
// column in binary, decoded in place (numeric to minor units, timestamptz to
// time, text borrowed from the read buffer), so that a million rows cost no
// allocation each. A run's findings are written with UpsertFindings in three
// statements per 5,000 (lock, insert from arrays, update from arrays).
package pgstore
