package wiring

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/reconcilehq/reconcile/books"
	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
)

// Books are the primary books and, when database_read_url is set, their
// read replica.
type Books struct {
	Store ledger.Store
	// Replica is the read replica, or nil: reports, the console's lists
	// and a run's matching read there while it keeps up.
	Replica *database.Replica
	Logger  *slog.Logger
}

// Reads returns the books to read a report from: the replica while it lags
// no more than database_read_max_lag, the primary otherwise or without one.
// What a report shows may be that much behind what was written; commands
// that change the books read the primary.
func (b Books) Reads(ctx context.Context) ledger.Reader {
	if b.Replica == nil {
		return b.Store
	}
	rd, why := b.Replica.Reader(ctx)
	b.Logger.LogAttrs(ctx, slog.LevelDebug, "books read", slog.String("from", why))
	return rd
}

// Lists are the books the console reads and acts through: its lists
// (findings, runs) read the replica while it keeps up (Reads); a finding's
// page, on which a person decides and lands again after deciding, and the
// quarantine, which the console changes, read the primary.
func (b Books) Lists() ledger.Store {
	if b.Replica == nil {
		return b.Store
	}
	return replicaLists{Store: b.Store, b: b}
}

// replicaLists is the primary with the console's lists read through Reads.
type replicaLists struct {
	ledger.Store
	b Books
}

func (r replicaLists) ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error) {
	return r.b.Reads(ctx).ListFindings(ctx, f)
}

func (r replicaLists) ListRuns(ctx context.Context, provider string, limit int) ([]ledger.Run, error) {
	return r.b.Reads(ctx).ListRuns(ctx, provider, limit)
}

// openStore opens the books as opts.Mode says. On SQLite it migrates
// automatically; on PostgreSQL it refuses an out-of-date schema unless
// migrating is the point.
func openStore(ctx context.Context, cfg config.Config, opts Options) (ledger.Store, error) {
	url := cfg.DatabaseURL
	if opts.Mode == Existing && database.Missing(url) {
		return nil, fmt.Errorf("database %s does not exist: create it with `reconcile migrate --database-url %s` "+
			"(then import intents and statements), or point --database-url at an existing one",
			database.Redact(url), database.Redact(url))
	}
	if opts.DefaultNotice != nil {
		fmt.Fprintf(opts.DefaultNotice, "reconcile: using the default database %s (choose another with --database-url or RECONCILE_DATABASE_URL)\n",
			database.DefaultURL)
	}
	dbOpts := database.Options{MaxConns: cfg.Database.MaxConns}
	if opts.Mode == Migrate {
		return database.Open(ctx, url, dbOpts)
	}
	return database.OpenMigrated(ctx, url, dbOpts)
}

// OpenCopy opens the configured books to read them, never creating nor
// migrating them, and the database to, as it is: the two ends of a copy
// of the books or of its verification. The caller closes both.
func OpenCopy(ctx context.Context, cfg config.Config, to string) (src, dst ledger.Store, err error) {
	u := cfg.DatabaseURL
	if database.Missing(u) {
		return nil, nil, fmt.Errorf("database %s does not exist: point --database-url at the books to copy", database.Redact(u))
	}
	opts := database.Options{MaxConns: cfg.Database.MaxConns}
	if src, err = database.Open(ctx, u, opts); err != nil {
		return nil, nil, err
	}
	if dst, err = database.Open(ctx, to, opts); err != nil {
		src.Close()
		return nil, nil, err
	}
	return src, dst, nil
}

// CompareBooks opens the configured books and the database to
// (OpenCopy), does work with them (a copy or a verification), writes the
// table of checks work returns, when there is one, to w, and says what
// failed: verb and the database to.
func CompareBooks(ctx context.Context, cfg config.Config, to, verb string, w io.Writer,
	work func(ctx context.Context, src, dst ledger.Store) (*books.CopyReport, error)) error {
	src, dst, err := OpenCopy(ctx, cfg, to)
	if err != nil {
		return err
	}
	defer src.Close()
	defer dst.Close()
	rep, err := work(ctx, src, dst)
	if rep != nil {
		if werr := rep.WriteText(w); werr != nil {
			return werr
		}
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", verb, database.Redact(to), err)
	}
	return nil
}
