package sqlitestore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// TestPageSize: a file the store creates has large pages and is in WAL mode;
// a file that exists keeps its page size.
func TestPageSize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pragmas := func(s *Store) (size int, mode string) {
		t.Helper()
		if err := s.sqldb.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
			t.Fatal(err)
		}
		if err := s.sqldb.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		return size, mode
	}
	path := filepath.Join(t.TempDir(), "new.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.sqldb.ExecContext(ctx, `CREATE TABLE t (x TEXT)`); err != nil {
		t.Fatal(err)
	}
	if size, mode := pragmas(s); size != pageSize || mode != "wal" {
		t.Fatalf("new file: page size %d, journal mode %s; want %d, wal", size, mode, pageSize)
	}
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	if size, _ := pragmas(s); size != pageSize {
		t.Fatalf("reopened: page size %d", size)
	}
	s.Close()

	old := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (x TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err = Open(ctx, old); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if size, mode := pragmas(s); size != 4096 || mode != "wal" {
		t.Fatalf("existing file: page size %d, journal mode %s; want 4096, wal", size, mode)
	}
	if _, err := s.sqldb.ExecContext(ctx, `INSERT INTO t VALUES ('x')`); err != nil {
		t.Fatal(err)
	}
}

// TestOpenNewFileWaitsForLock: opening a file that another connection is
// creating (it holds a lock and has written nothing yet) waits for the lock,
// as the store's busy timeout does for every other statement, instead of
// failing at once with "database is locked".
func TestOpenNewFileWaitsForLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "busy.db")
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, err := conn.ExecContext(ctx, `COMMIT`)
		released <- err
	}()
	s, err := Open(ctx, path)
	if rerr := <-released; rerr != nil {
		t.Fatal(rerr)
	}
	if err != nil {
		t.Fatalf("open while another connection holds the new file's lock: %v", err)
	}
	s.Close()
}
