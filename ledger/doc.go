// Package ledger owns the books: payment intents and their attempts, normalised
// provider transactions with their sources, reconcile runs, findings and the
// quarantine of rejected input. It defines the domain types, the narrow Store
// interface that the engines implement (ledger/pgstore on PostgreSQL,
// ledger/sqlitestore on embedded SQLite) and the domain errors that the engines
// translate their driver errors into. It decides what recording a batch of
// provider evidence does (ClassifySightings), so that the engines only read
// what they hold of its keys and write what it says.
//
// The package holds no SQL and performs no I/O; it must not know about providers,
// the queue or Slack.
package ledger
