package sqlitestore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
	"github.com/reconcilehq/reconcile/migrations"
)

// driver is SQLite's engine.Driver: riversqlite on the store's handle.
type driver struct{ db *sql.DB }

var _ engine.Driver = driver{}

// Driver returns the engine driver of the store.
func (s *Store) Driver() engine.Driver { return driver{db: s.sqldb} }

func (driver) Engine() ledger.Engine { return ledger.EngineSQLite }

// MigrateOnOpen is true: the file is the process's own.
func (driver) MigrateOnOpen() bool { return true }

// NewRiverClient makes River poll: SQLite has one writer and no LISTEN.
func (d driver) NewRiverClient(cfg *river.Config) (engine.RiverClient, error) {
	c := *cfg
	c.PollOnly = true
	return engine.NewRiverClient(riversqlite.New(d.db), Unwrap, &c)
}

func (driver) CompleteJobTx(ctx context.Context, tx ledger.Tx, job *rivertype.JobRow) error {
	return engine.CompleteJobTx(ctx, Unwrap, tx, job)
}

func (d driver) Query(ctx context.Context, sql string, args ...any) (engine.Rows, error) {
	rows, err := d.db.QueryContext(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

func (d driver) Migrations() engine.Migrations {
	return engine.Migrations{
		Dialect: goose.DialectSQLite3,
		FS:      migrations.SQLite(),
		Open:    func() (*sql.DB, func(), error) { return d.db, func() {}, nil },
	}
}

// LockMigrations needs no lock: one process owns the file and its single
// connection serialises writers.
func (driver) LockMigrations(context.Context) (func(), error) { return func() {}, nil }

func (d driver) RiverMigrator() (engine.RiverMigrator, error) {
	return rivermigrate.New(riversqlite.New(d.db), nil)
}

// Driver returns the engine driver of the transaction's store.
func (t *tx) Driver() engine.Driver { return driver{db: t.executor.db} }

// Opener opens the store from a sqlite:PATH (or sqlite://PATH) URL.
var Opener = engine.Opener{
	Engine:   ledger.EngineSQLite,
	Prefixes: []string{"sqlite:"},
	Open: func(ctx context.Context, rawURL string, _ engine.OpenOptions) (ledger.Store, error) {
		return Open(ctx, PathOf(rawURL))
	},
}

// PathOf returns the file path of a sqlite: URL (sqlite:PATH or sqlite://PATH).
func PathOf(rawURL string) string {
	p := strings.TrimPrefix(rawURL, "sqlite:")
	return strings.TrimPrefix(p, "//")
}
