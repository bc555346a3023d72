package pgstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
	"github.com/reconcilehq/reconcile/migrations"
)

// driver is PostgreSQL's engine.Driver: riverpgxv5 on the store's pool.
type driver struct{ pool *pgxpool.Pool }

var _ engine.Driver = driver{}

// Driver returns the engine driver of the store.
func (s *Store) Driver() engine.Driver { return driver{pool: s.pool} }

func (driver) Engine() ledger.Engine { return ledger.EnginePostgres }

// MigrateOnOpen is false: a shared database is migrated on purpose.
func (driver) MigrateOnOpen() bool { return false }

func (d driver) NewRiverClient(cfg *river.Config) (engine.RiverClient, error) {
	return engine.NewRiverClient(riverpgxv5.New(d.pool), Unwrap, cfg)
}

func (driver) CompleteJobTx(ctx context.Context, tx ledger.Tx, job *rivertype.JobRow) error {
	return engine.CompleteJobTx(ctx, Unwrap, tx, job)
}

func (d driver) Query(ctx context.Context, sql string, args ...any) (engine.Rows, error) {
	return d.pool.Query(ctx, sql, args...)
}

func (d driver) Migrations() engine.Migrations {
	return engine.Migrations{
		Dialect: goose.DialectPostgres,
		FS:      migrations.Postgres(),
		Open: func() (*sql.DB, func(), error) {
			db := stdlib.OpenDBFromPool(d.pool)
			return db, func() { _ = db.Close() }, nil
		},
		Locker: func() (lock.SessionLocker, error) { return lock.NewPostgresSessionLocker() },
	}
}

// LockMigrations takes a session advisory lock on a connection of its own.
func (d driver) LockMigrations(ctx context.Context) (func(), error) {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('reconcile.migrate'))`); err != nil {
		conn.Release()
		return nil, fmt.Errorf("lock: %w", err)
	}
	return func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext('reconcile.migrate'))`)
		conn.Release()
	}, nil
}

func (d driver) RiverMigrator() (engine.RiverMigrator, error) {
	return rivermigrate.New(riverpgxv5.New(d.pool), nil)
}

// Driver returns the engine driver of the transaction's store.
func (t *tx) Driver() engine.Driver { return driver{pool: t.pool} }

// Opener opens the store from a postgres:// or postgresql:// URL.
var Opener = engine.Opener{
	Engine:   ledger.EnginePostgres,
	Prefixes: []string{"postgres://", "postgresql://"},
	Open: func(ctx context.Context, rawURL string, opts engine.OpenOptions) (ledger.Store, error) {
		return Open(ctx, rawURL, Config{MaxConns: opts.MaxConns, SearchPath: opts.SearchPath})
	},
}
