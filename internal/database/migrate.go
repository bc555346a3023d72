package database

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
	"github.com/reconcilehq/reconcile/migrations"
)

// ErrSchemaOutOfDate reports pending migrations on a database that is not
// migrated automatically.
var ErrSchemaOutOfDate = errors.New("database schema is out of date")

// ErrSchemaTooNew reports a database that a newer binary migrated: this
// binary does not know its last migrations, and its writes could break
// their rules (migration 0012, for one, makes inserts that leave
// amount_minor out fail).
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

// Applied lists what a migration run applied.
type Applied struct {
	Ledger []string
	River  []string
}

// Empty reports whether nothing was applied.
func (a Applied) Empty() bool { return len(a.Ledger) == 0 && len(a.River) == 0 }

// WriteText says what a migration run of the database target (redacted)
// applied, one migration a line, or that there was nothing to do.
func (a Applied) WriteText(w io.Writer, target string) error {
	if a.Empty() {
		_, err := fmt.Fprintf(w, "%s: nothing to do, the schema is up to date\n", target)
		return err
	}
	for _, m := range a.Ledger {
		fmt.Fprintf(w, "applied ledger %s\n", m)
	}
	for _, m := range a.River {
		fmt.Fprintf(w, "applied river %s\n", m)
	}
	_, err := fmt.Fprintf(w, "%s: %d migration(s) applied\n", target, len(a.Ledger)+len(a.River))
	return err
}

// Migrate applies pending ledger and River migrations. It is idempotent; on
// PostgreSQL a session lock keeps concurrent migrators from interleaving.
func Migrate(ctx context.Context, store ledger.Store) (Applied, error) {
	var out Applied
	drv, err := engine.Of(store)
	if err != nil {
		return out, fmt.Errorf("migrate: %w", err)
	}
	// One migrator at a time across replicas, for the ledger's and River's
	// migrations together.
	unlock, err := drv.LockMigrations(ctx)
	if err != nil {
		return out, fmt.Errorf("migrate: %w", err)
	}
	defer unlock()
	p, closeDB, err := gooseProvider(drv)
	if err != nil {
		return out, err
	}
	defer closeDB()
	if err := notAhead(ctx, p); err != nil {
		return out, fmt.Errorf("migrate: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return out, fmt.Errorf("migrate ledger: %w", err)
	}
	for _, r := range res {
		out.Ledger = append(out.Ledger, r.Source.Path)
	}
	rv, err := riverMigrate(ctx, drv, false)
	if err != nil {
		return out, err
	}
	out.River = rv
	return out, nil
}

// Pending lists the migrations not yet applied, ledger first.
func Pending(ctx context.Context, store ledger.Store) ([]string, error) {
	drv, err := engine.Of(store)
	if err != nil {
		return nil, fmt.Errorf("migration status: %w", err)
	}
	p, closeDB, err := gooseProvider(drv)
	if err != nil {
		return nil, err
	}
	defer closeDB()
	if err := notAhead(ctx, p); err != nil {
		return nil, err
	}
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
	rv, err := riverMigrate(ctx, drv, true)
	if err != nil {
		return nil, err
	}
	for _, v := range rv {
		pending = append(pending, "river "+v)
	}
	return pending, nil
}

// Check fails with ErrSchemaOutOfDate, naming `reconcile migrate`, when
// migrations are pending, and with ErrSchemaTooNew when the database has
// migrations this binary does not know.
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

// notAhead fails with ErrSchemaTooNew when the database's last applied
// migration is one this binary does not have.
func notAhead(ctx context.Context, p *goose.Provider) error {
	current, known, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("migration status: %w", err)
	}
	if current > known {
		return fmt.Errorf("%w: the books are at migration %d and this binary knows migrations up to %d; run the newer reconcile",
			ErrSchemaTooNew, current, known)
	}
	return nil
}

func gooseProvider(drv engine.Driver) (*goose.Provider, func(), error) {
	m := drv.Migrations()
	opts := []goose.ProviderOption{goose.WithSlog(slog.New(slog.DiscardHandler)),
		goose.WithGoMigrations(migrations.Go(m.Dialect)...)}
	db, closeDB, err := m.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("migrations: %w", err)
	}
	if m.Locker != nil {
		locker, err := m.Locker()
		if err != nil {
			closeDB()
			return nil, nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(m.Dialect, db, m.FS, opts...)
	if err != nil {
		closeDB()
		return nil, nil, fmt.Errorf("migrations: %w", err)
	}
	return p, closeDB, nil
}

// riverMigrate applies River's migrations, or with dryRun lists the versions
// that would be applied.
func riverMigrate(ctx context.Context, drv engine.Driver, dryRun bool) ([]string, error) {
	m, err := drv.RiverMigrator()
	if err != nil {
		return nil, err
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{DryRun: dryRun})
	if err != nil {
		return nil, fmt.Errorf("migrate river: %w", err)
	}
	var out []string
	for _, v := range res.Versions {
		out = append(out, fmt.Sprintf("%03d %s", v.Version, v.Name))
	}
	return out, nil
}
