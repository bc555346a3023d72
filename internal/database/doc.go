// Package database opens the ledger from a database URL (postgres://... or
// sqlite:PATH) and brings its schema up to date: the ledger's own migrations
// through pressly/goose and River's tables through River's migrator. It also
// redacts database URLs for errors and logs.
package database
