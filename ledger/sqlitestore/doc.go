// Package sqlitestore is the embedded SQLite engine of the ledger, on the pure-Go
// modernc.org/sqlite driver through database/sql, in WAL mode. It is the default
// when no database URL is configured. It owns the SQL for SQLite and translates
// driver errors into the ledger's errors.
//
// SQLite allows one writer at a time; the store keeps a single connection, as
// River's SQLite driver asks, so a callback passed to a streaming list must not
// use the store.
package sqlitestore
