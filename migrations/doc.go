// Package migrations embeds the numbered SQL migrations of the books, one set
// per engine, applied by pressly/goose. River's own tables are not here: they
// come from River's migrator. Migrations are forward-only in production; each
// file has a down section so tests can exercise a rollback.
package migrations
