package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func (c *stmtCache) lookup(query string) (*sql.Stmt, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.stmts[query]
	return st, ok
}

// get returns the cached statement for query, preparing it first if needed.
// It prepares without holding the lock: preparing waits for the one
// connection, which a transaction on another goroutine may hold while it
// looks a statement up.
func (c *stmtCache) get(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	if st, ok := c.lookup(query); ok {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.stmts[query]; ok {
		_ = st.Close()
		return old, nil
	}
	if c.stmts == nil {
		c.stmts = make(map[string]*sql.Stmt)
	}
	c.stmts[query] = st
	return st, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		_ = st.Close()
	}
	c.stmts = nil
}

// stmt returns the prepared statement for query, bound to the transaction
// when there is one.
//
// Inside a transaction a statement not yet cached is prepared on the
// transaction: the one connection is the transaction's, so preparing on the
// database would wait for it forever.
//
// Either way the transaction's statement is kept for the rest of the
// transaction and closed with it: preparing one per call would hold every
// one of them until the commit (kilobytes per row of a large import).
func (e executor) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if e.tx != nil {
		e.txStmts.mu.Lock()
		defer e.txStmts.mu.Unlock()
		if st, ok := e.txStmts.m[query]; ok {
			return st, nil
		}
		var (
			st  *sql.Stmt
			err error
		)
		if parent, ok := e.stmts.lookup(query); ok {
			st = e.tx.StmtContext(ctx, parent)
		} else if st, err = e.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		if e.txStmts.m == nil {
			e.txStmts.m = make(map[string]*sql.Stmt)
		}
		e.txStmts.m[query] = st
		return st, nil
	}
	return e.stmts.get(ctx, e.db, query)
}

// txStmts are the statements of one transaction, closed by database/sql
// when it ends, and what its batches of sightings tell the next one.
type txStmts struct {
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	upsert upsertMemo
	// shapes are the sets of values held alike that the transaction's
	// shared inserts of transactions have bound once (see shape).
	shapes []int
}

// shape returns same, the values a batch's rows hold alike, when the
// transaction may prepare statements for it: it has already, or it has
// prepared them for fewer than sharedShapes sets. Otherwise it returns
// none, whose statements every transaction may prepare.
func (s *txStmts) shape(same int) int {
	if s == nil || same == 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.shapes, same) {
		return same
	}
	if len(s.shapes) >= sharedShapes {
		return 0
	}
	s.shapes = append(s.shapes, same)
	return same
}

// row is a single-row result that may carry a prepare error.
type row struct {
	r   *sql.Row
	err error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.r.Scan(dest...)
}

func (e executor) queryRow(ctx context.Context, query string, args ...any) row {
	st, err := e.stmt(ctx, query)
	if err != nil {
		return row{err: err}
	}
	return row{r: st.QueryRowContext(ctx, args...)}
}

func (e executor) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := e.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (e executor) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := e.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// atomically runs fn in a transaction of its own on the executor's database.
func (e executor) atomically(ctx context.Context, fn func(executor) error) error {
	stx, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		return translate(err)
	}
	if err := fn(executor{db: e.db, tx: stx, stmts: e.stmts, txStmts: &txStmts{}, test: e.test}); err != nil {
		_ = stx.Rollback()
		return err
	}
	return translate(stx.Commit())
}

// unlessStored runs fn, inserts of rows guessed new, in a savepoint. If a
// primary key or unique constraint stops it (a row was stored after all),
// the savepoint is rolled back, undoing all fn wrote, and unlessStored
// returns false; the caller then looks the keys up and writes again.
func (e executor) unlessStored(ctx context.Context, fn func() error) (bool, error) {
	if _, err := e.exec(ctx, `SAVEPOINT unless_stored`); err != nil {
		return false, err
	}
	err := fn()
	if err != nil {
		if _, rerr := e.exec(ctx, `ROLLBACK TO unless_stored`); rerr != nil {
			return false, errors.Join(err, rerr)
		}
	}
	if _, rerr := e.exec(ctx, `RELEASE unless_stored`); rerr != nil {
		return false, errors.Join(err, rerr)
	}
	var se *sqlite.Error
	if errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE) {
		return false, nil
	}
	return err == nil, err
}
