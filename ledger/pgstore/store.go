package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reconcilehq/reconcile/ledger"
)

// dbtx is what both the pool and a transaction can do.
type dbtx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

type executor struct {
	db dbtx
	// test holds the knobs the package's tests turn; nil otherwise.
	test *upsertTest
}

// Store is the ledger on a PostgreSQL pool.
type Store struct {
	executor
	pool *pgxpool.Pool
}

var _ ledger.Store = (*Store)(nil)

// Config tunes the pool. Zero values keep pgx's defaults.
type Config struct {
	// MaxConns is the pool size; default pgx's (max(4, CPUs)).
	MaxConns int32
	// SearchPath, when set, is the schema search path of every connection.
	SearchPath string
	// ReadOnly makes every transaction of every connection read-only
	// (default_transaction_read_only): a store on a read replica.
	ReadOnly bool
	// ApplicationName names the connections in pg_stat_activity, unless
	// the URL names them.
	ApplicationName string
}

// Open connects to url and registers the decimal codec on every connection.
func Open(ctx context.Context, url string, cfg Config) (*Store, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: parse database url: %w", redactParseError(err))
	}
	if cfg.MaxConns > 0 {
		pcfg.MaxConns = cfg.MaxConns
	}
	if cfg.SearchPath != "" {
		pcfg.ConnConfig.RuntimeParams["search_path"] = cfg.SearchPath
	}
	if cfg.ReadOnly {
		pcfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	}
	if _, named := pcfg.ConnConfig.RuntimeParams["application_name"]; cfg.ApplicationName != "" && !named {
		pcfg.ConnConfig.RuntimeParams["application_name"] = cfg.ApplicationName
	}
	pcfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		pgxdecimal.Register(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: open pool: %w", redactParseError(err))
	}
	return &Store{executor: executor{db: pool}, pool: pool}, nil
}

// ConcurrentScans reports whether the pool has room for two scans at once
// beside other statements: a reconcile then reads the provider transactions
// while it takes the intents.
func (s *Store) ConcurrentScans() bool { return s.pool.Config().MaxConns >= 4 }

// Pool returns the underlying pool, for River and migrations.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Engine returns ledger.EnginePostgres.
func (s *Store) Engine() ledger.Engine { return ledger.EnginePostgres }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	return ledger.Wrap("ping", "", translate(s.pool.Ping(ctx)))
}

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

type tx struct {
	executor
	pgx  pgx.Tx
	pool *pgxpool.Pool
	// memo is what the transaction's last batch of sightings found.
	memo upsertMemo
}

func (t *tx) Engine() ledger.Engine { return ledger.EnginePostgres }

// InTx runs fn in a transaction.
func (s *Store) InTx(ctx context.Context, fn func(ledger.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(ptx pgx.Tx) error {
		return fn(&tx{executor: executor{db: ptx, test: s.test}, pgx: ptx, pool: s.pool})
	})
}

// Unwrap returns the pgx transaction behind a ledger transaction of this
// engine, so that River can enqueue in it.
func Unwrap(t ledger.Tx) (pgx.Tx, bool) {
	pt, ok := t.(*tx)
	if !ok {
		return nil, false
	}
	return pt.pgx, true
}

// translate maps driver errors to the ledger's errors, keeping the original
// in the chain.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return &ledger.DriverError{Sentinel: ledger.ErrNotFound, Err: err}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505", "23P01":
			return &ledger.DriverError{Sentinel: ledger.ErrConflict, Detail: pgErr.Message, Err: err}
		}
	}
	return err
}

// redactParseError drops the text of pgx's configuration errors, which can
// quote the connection string with its password.
func redactParseError(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return errors.New("invalid connection string")
	}
	return err
}

func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := utc(t)
	return &u
}

func fromNull(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}
