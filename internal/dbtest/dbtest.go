// Package dbtest gives tests a real, isolated, migrated database: a fresh
// PostgreSQL schema (from TEST_DATABASE_URL, which scripts/test.sh provides)
// or a fresh SQLite file. Nothing is mocked and nothing is skipped: a missing
// TEST_DATABASE_URL fails the test.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
)

// PostgresBaseURL returns TEST_DATABASE_URL or fails the test.
func PostgresBaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("TEST_DATABASE_URL")
	if u == "" {
		t.Fatal("TEST_DATABASE_URL is not set: run the tests with `make test`, which starts a throwaway PostgreSQL")
	}
	return u
}

// PostgresURL creates an empty schema of its own, migrated, and returns a URL
// whose connections use it. The schema is dropped when the test ends.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := NewSchemaURL(t)
	s := open(t, u)
	if _, err := database.Migrate(t.Context(), s); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	s.Close()
	return u
}

// NewSchemaURL creates an empty, unmigrated schema and returns a URL that
// uses it. The schema is dropped when the test ends.
func NewSchemaURL(t testing.TB) string {
	t.Helper()
	base := PostgresBaseURL(t)
	ctx := t.Context()
	schema := "t_" + randomHex(8)
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to TEST_DATABASE_URL: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	pu, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse TEST_DATABASE_URL: %v", err)
	}
	q := pu.Query()
	q.Set("search_path", schema)
	pu.RawQuery = q.Encode()
	return pu.String()
}

// SQLiteURL returns the URL of a fresh, migrated SQLite file in a temporary
// directory.
func SQLiteURL(t testing.TB) string {
	t.Helper()
	u := "sqlite:" + filepath.Join(t.TempDir(), "reconcile.db")
	s := open(t, u)
	if _, err := database.Migrate(t.Context(), s); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	s.Close()
	return u
}

// Postgres returns a store on a fresh migrated schema, closed when the test ends.
func Postgres(t testing.TB) ledger.Store {
	t.Helper()
	s := open(t, PostgresURL(t))
	t.Cleanup(s.Close)
	return s
}

// SQLite returns a store on a fresh migrated SQLite file, closed when the test ends.
func SQLite(t testing.TB) ledger.Store {
	t.Helper()
	s := open(t, SQLiteURL(t))
	t.Cleanup(s.Close)
	return s
}

// Engines lists the engines every store-backed test runs on, with a
// constructor for each.
func Engines() []struct {
	Name string
	New  func(testing.TB) ledger.Store
} {
	return []struct {
		Name string
		New  func(testing.TB) ledger.Store
	}{{"postgres", Postgres}, {"sqlite", SQLite}}
}

// EngineURLs lists the engines every test that opens the books by URL
// runs on, with a constructor of a fresh, migrated database's URL for each.
func EngineURLs() []struct {
	Name string
	URL  func(testing.TB) string
} {
	return []struct {
		Name string
		URL  func(testing.TB) string
	}{{"postgres", PostgresURL}, {"sqlite", SQLiteURL}}
}

func open(t testing.TB, u string) ledger.Store {
	t.Helper()
	s, err := database.Open(context.WithoutCancel(t.Context()), u, database.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", database.Redact(u), err)
	}
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
