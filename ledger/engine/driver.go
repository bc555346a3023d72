package engine

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strings"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/ledger"
)

// Driver is one engine's bindings, tied to an open store.
type Driver interface {
	// Engine names the engine.
	Engine() ledger.Engine
	// MigrateOnOpen says whether opening the store also migrates it (an
	// embedded database nobody else shares) rather than refusing an
	// out-of-date schema.
	MigrateOnOpen() bool

	// NewRiverClient creates a River client on the store's database with
	// cfg, adding what the engine requires (SQLite polls instead of
	// listening).
	NewRiverClient(cfg *river.Config) (RiverClient, error)
	// CompleteJobTx marks the running job completed inside tx. It works only
	// inside a River worker.
	CompleteJobTx(ctx context.Context, tx ledger.Tx, job *rivertype.JobRow) error
	// Query runs a read-only statement written for both engines.
	Query(ctx context.Context, sql string, args ...any) (Rows, error)

	// Migrations are the ledger's own migrations, for goose.
	Migrations() Migrations
	// LockMigrations holds one migrator at a time across processes, for the
	// ledger's and River's migrations together, until unlock.
	LockMigrations(ctx context.Context) (unlock func(), err error)
	// RiverMigrator returns River's migrator on the store's database.
	RiverMigrator() (RiverMigrator, error)
}

// Migrations are the ledger's migrations on one engine.
type Migrations struct {
	Dialect goose.Dialect
	// FS holds the numbered SQL files.
	FS fs.FS
	// Open returns the database/sql handle goose runs on; release it after.
	Open func() (db *sql.DB, release func(), err error)
	// Locker, when not nil, keeps concurrent goose runs apart.
	Locker func() (lock.SessionLocker, error)
}

// RiverMigrator is River's migrator on one engine (*rivermigrate.Migrator).
type RiverMigrator interface {
	Migrate(ctx context.Context, direction rivermigrate.Direction, opts *rivermigrate.MigrateOpts) (*rivermigrate.MigrateResult, error)
}

// Rows is what both engines' result sets can do.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Haver is a store, or a transaction of one, that knows its engine's driver.
type Haver interface {
	Driver() Driver
}

// Of returns the driver of a store or of a transaction.
func Of(x any) (Driver, error) {
	h, ok := x.(Haver)
	if !ok {
		return nil, fmt.Errorf("engine: %T has no engine driver", x)
	}
	return h.Driver(), nil
}

// Opener opens one engine's store from a database URL.
type Opener struct {
	Engine ledger.Engine
	// Prefixes are the URL forms the engine accepts (postgres://, sqlite:).
	Prefixes []string
	Open     func(ctx context.Context, rawURL string, opts OpenOptions) (ledger.Store, error)
}

// OpenOptions tune opening; an engine ignores what it has no use for.
type OpenOptions struct {
	// MaxConns caps a connection pool; 0 keeps the default.
	MaxConns int32
	// SearchPath sets a PostgreSQL schema search path.
	SearchPath string
}

// Accepts reports whether rawURL names this engine.
func (o Opener) Accepts(rawURL string) bool {
	for _, p := range o.Prefixes {
		if strings.HasPrefix(rawURL, p) {
			return true
		}
	}
	return false
}
