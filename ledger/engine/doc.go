// Package engine describes what one database engine gives the rest of
// reconcile, as a single Driver value that each store package provides
// (pgstore on PostgreSQL, sqlitestore on SQLite): a River client on the
// engine's database, the ledger's migrations for goose, River's migrator and
// the engine's locking, and an Opener that opens the store from a URL. The
// queue, the migrator and the CLI get the Driver from the store (Of) and
// never name a store package; only internal/database lists the Openers. A
// new engine is one new store package and one entry in that list.
//
// Books (BooksOf) is each store's raw access to its tables, read from the
// schema and exchanged in one engine-neutral form per Type, for the work
// that moves, prunes and erases the books as tables (package books).
//
// It owns no SQL of the ledger and no business logic.
package engine
