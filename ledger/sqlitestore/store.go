package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/reconcilehq/reconcile/ledger"
)

// executor runs statements on the database or, inside InTx, on the
// transaction. Statements are prepared once and reused: parsing SQL costs as
// much as running it.
type executor struct {
	db    *sql.DB
	tx    *sql.Tx
	stmts *stmtCache
	// txStmts are the transaction's statements, when tx is set.
	txStmts *txStmts
	// test holds the knobs the package's tests turn; nil otherwise.
	test *upsertTest
}

// Store is the ledger on one SQLite file.
type Store struct {
	executor
	sqldb *sql.DB
}

var _ ledger.Store = (*Store)(nil)

// Open opens (creating if needed) the SQLite database at path with WAL, a busy
// timeout, foreign keys, immediate write transactions and synchronous=FULL: a
// commit (an acknowledged callback, an attempt recorded before a provider
// call) survives a power loss.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlitestore: empty path")
	}
	if !strings.HasPrefix(path, ":memory:") {
		if err := create(ctx, path); err != nil {
			return nil, fmt.Errorf("sqlitestore: create %s: %w", path, err)
		}
	}
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(FULL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	dsn := "file:" + path + "?" + q.Encode()
	if strings.HasPrefix(path, ":memory:") {
		dsn = "file::memory:?" + q.Encode()
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	return &Store{executor: executor{db: db, stmts: &stmtCache{}}, sqldb: db}, nil
}

// pageSize is the page size of the files the store creates. An import
// appends hundreds of megabytes, and every page is a write (two system calls)
// to the WAL: large pages make four times fewer, at little cost to the small
// transactions of serving.
const pageSize = 16384

// create creates the database file at path, when it does not exist or is
// empty, with pageSize pages in WAL mode. SQLite fixes the page size when it
// first writes the file and cannot change it in WAL mode, which the
// connection's pragmas (run in name order) would set first; an existing file
// keeps its page size.
func create(ctx context.Context, path string) error {
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		return nil
	}
	// The busy timeout of the store's own connections: another process may
	// be creating the same file.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA page_size = %d", pageSize)); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "PRAGMA journal_mode = WAL")
	return err
}

// DB returns the database handle, for River and migrations.
func (s *Store) DB() *sql.DB { return s.sqldb }

// Engine returns ledger.EngineSQLite.
func (s *Store) Engine() ledger.Engine { return ledger.EngineSQLite }

// Ping checks the database.
func (s *Store) Ping(ctx context.Context) error {
	return ledger.Wrap("ping", "", translate(s.sqldb.PingContext(ctx)))
}

// Close closes the database.
func (s *Store) Close() {
	s.stmts.close()
	_ = s.sqldb.Close()
}

type tx struct {
	executor
	sql *sql.Tx
}

func (t *tx) Engine() ledger.Engine { return ledger.EngineSQLite }

// InTx runs fn in an immediate transaction.
func (s *Store) InTx(ctx context.Context, fn func(ledger.Tx) error) (err error) {
	stx, err := s.sqldb.BeginTx(ctx, nil)
	if err != nil {
		return ledger.Wrap("begin", "", translate(err))
	}
	defer func() {
		if err != nil {
			_ = stx.Rollback()
		}
	}()
	if err = fn(&tx{executor: executor{db: s.sqldb, tx: stx, stmts: s.stmts, txStmts: &txStmts{}, test: s.test}, sql: stx}); err != nil {
		return err
	}
	return ledger.Wrap("commit", "", translate(stx.Commit()))
}

// Unwrap returns the database/sql transaction behind a ledger transaction of
// this engine, so that River can enqueue in it.
func Unwrap(t ledger.Tx) (*sql.Tx, bool) {
	st, ok := t.(*tx)
	if !ok {
		return nil, false
	}
	return st.sql, true
}

func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return &ledger.DriverError{Sentinel: ledger.ErrNotFound, Err: err}
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return &ledger.DriverError{Sentinel: ledger.ErrConflict, Detail: se.Error(), Err: err}
		}
	}
	return err
}

// timeLayout is fixed width so that stored times sort and compare as text.
const timeLayout = "2006-01-02T15:04:05.000000Z"

func ts(t time.Time) string { return t.UTC().Truncate(time.Microsecond).Format(timeLayout) }

func nullTS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return ts(t)
}

func parseTS(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t, nil
}

func parseNullTS(s sql.NullString) (time.Time, error) {
	if !s.Valid || s.String == "" {
		return time.Time{}, nil
	}
	return parseTS(s.String)
}
