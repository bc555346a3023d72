package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
	"github.com/reconcilehq/reconcile/ledger/sqlitestore"
	"github.com/reconcilehq/reconcile/migrations"
)

// ErrSchemaOutOfDate reports pending migrations on a database that is not
// migrated automatically.
var ErrSchemaOutOfDate = errors.New("database schema is out of date")

// Applied lists what a migration run applied.
type Applied struct {
	Ledger []string
	River  []string
}

// Empty reports whether nothing was applied.
func (a Applied) Empty() bool { return len(a.Ledger) == 0 && len(a.River) == 0 }

// Migrate applies pending ledger and River migrations. It is idempotent; on
// PostgreSQL a session lock keeps concurrent migrators from interleaving.
func Migrate(ctx context.Context, store ledger.Store) (Applied, error) {
	var out Applied
	if pg, ok := store.(*pgstore.Store); ok {
		// One migrator at a time across replicas, for the ledger's and
		// River's migrations together.
		conn, err := pg.Pool().Acquire(ctx)
		if err != nil {
			return out, fmt.Errorf("migrate: %w", err)
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('reconcile.migrate'))`); err != nil {
			return out, fmt.Errorf("migrate: lock: %w", err)
		}
		defer func() {
			_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext('reconcile.migrate'))`)
		}()
	}
	p, closeDB, err := gooseProvider(store)
	if err != nil {
		return out, err
	}
	defer closeDB()
	res, err := p.Up(ctx)
	if err != nil {
		return out, fmt.Errorf("migrate ledger: %w", err)
	}
	for _, r := range res {
		out.Ledger = append(out.Ledger, r.Source.Path)
	}
	rv, err := riverMigrate(ctx, store, false)
	if err != nil {
		return out, err
	}
	out.River = rv
	return out, nil
}

// Pending lists the migrations not yet applied, ledger first.
func Pending(ctx context.Context, store ledger.Store) ([]string, error) {
	p, closeDB, err := gooseProvider(store)
	if err != nil {
		return nil, err
	}
	defer closeDB()
	statuses, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration status: %w", err)
	}
	var pending []string
	for _, s := range statuses {
		if s.State == goose.StatePending {
			pending = append(pending, "ledger "+s.Source.Path)
		}
	}
	rv, err := riverMigrate(ctx, store, true)
	if err != nil {
		return nil, err
	}
	for _, v := range rv {
		pending = append(pending, "river "+v)
	}
	return pending, nil
}

// Check fails with ErrSchemaOutOfDate, naming `reconcile migrate`, when
// migrations are pending.
func Check(ctx context.Context, store ledger.Store) error {
	pending, err := Pending(ctx, store)
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		return fmt.Errorf("%w: %d migration(s) pending (first: %s); run `reconcile migrate`", ErrSchemaOutOfDate, len(pending), pending[0])
	}
	return nil
}

func gooseProvider(store ledger.Store) (*goose.Provider, func(), error) {
	var (
		dialect goose.Dialect
		db      *sql.DB
		fsys    fs.FS
		opts    = []goose.ProviderOption{goose.WithSlog(slog.New(slog.DiscardHandler))}
		closeDB = func() {}
	)
	switch s := store.(type) {
	case *pgstore.Store:
		dialect, fsys = goose.DialectPostgres, migrations.Postgres()
		db = stdlib.OpenDBFromPool(s.Pool())
		closeDB = func() { _ = db.Close() }
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	case *sqlitestore.Store:
		dialect, fsys, db = goose.DialectSQLite3, migrations.SQLite(), s.DB()
	default:
		return nil, nil, fmt.Errorf("migrate: unsupported store %T", store)
	}
	p, err := goose.NewProvider(dialect, db, fsys, opts...)
	if err != nil {
		closeDB()
		return nil, nil, fmt.Errorf("migrations: %w", err)
	}
	return p, closeDB, nil
}

// riverMigrate applies River's migrations, or with dryRun lists the versions
// that would be applied.
func riverMigrate(ctx context.Context, store ledger.Store, dryRun bool) ([]string, error) {
	var (
		res *rivermigrate.MigrateResult
		err error
	)
	opts := &rivermigrate.MigrateOpts{DryRun: dryRun}
	switch s := store.(type) {
	case *pgstore.Store:
		m, merr := rivermigrate.New(riverpgxv5.New(s.Pool()), nil)
		if merr != nil {
			return nil, merr
		}
		res, err = m.Migrate(ctx, rivermigrate.DirectionUp, opts)
	case *sqlitestore.Store:
		m, merr := rivermigrate.New(riversqlite.New(s.DB()), nil)
		if merr != nil {
			return nil, merr
		}
		res, err = m.Migrate(ctx, rivermigrate.DirectionUp, opts)
	default:
		return nil, fmt.Errorf("migrate: unsupported store %T", store)
	}
	if err != nil {
		return nil, fmt.Errorf("migrate river: %w", err)
	}
	var out []string
	for _, v := range res.Versions {
		out = append(out, fmt.Sprintf("%03d %s", v.Version, v.Name))
	}
	return out, nil
}
