// Package engine describes what one database engine gives the rest of
// reconcile, as a single Driver value that each store package provides
// (pgstore on PostgreSQL, sqlitestore on SQLite): a River client on the
// engine's database, the ledger's migrations for goose, River's migrator and
// the engine's locking. The queue, the migrator and the CLI take a Driver and
// never name a store package, so a new engine is one new store package.
//
// It owns no SQL of the ledger and no business logic.
package engine
