// Package pgstore is the PostgreSQL engine of the ledger, on pgx/v5. It owns the
// SQL for PostgreSQL and translates driver errors into the ledger's errors at
// the edge; no pgx type appears in the ledger's interface. Callers that must
// join a transaction of their own (the queue's transactional enqueue) use
// Unwrap.
package pgstore
