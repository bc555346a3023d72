package database_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
)

// Missing is true only for a SQLite file that is not there: opening it
// would create an empty database.
func TestMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	there := filepath.Join(dir, "there.db")
	if err := os.WriteFile(there, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"sqlite:" + filepath.Join(dir, "absent.db"), true},
		{"sqlite:" + there, false},
		{"sqlite::memory:", false},
		{"sqlite:file:absent.db?mode=memory", false},
		{"postgres://u@h/db", false},
		{"mysql://h/db", false},
	} {
		if got := database.Missing(c.url); got != c.want {
			t.Errorf("Missing(%q) = %v, want %v", c.url, got, c.want)
		}
	}
}

func TestSame(t *testing.T) {
	t.Parallel()
	abs, err := filepath.Abs("books.db")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"postgres://u@h/db", "postgres://u@h/db", true},
		{"postgres://u@h/db", "postgres://u@h/other", false},
		{"sqlite:books.db", "sqlite:" + abs, true},
		{"sqlite:books.db", "sqlite:./books.db", true},
		{"sqlite:books.db", "sqlite:copy.db", false},
		{"sqlite:books.db", "postgres://u@h/books.db", false},
	} {
		if got := database.Same(c.a, c.b); got != c.want {
			t.Errorf("Same(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// OpenMigrated migrates a new SQLite file on open and opens a migrated
// PostgreSQL schema; a PostgreSQL schema that was never migrated is
// refused, not migrated behind the operator's back.
func TestOpenMigrated(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := database.OpenMigrated(ctx, "sqlite:"+filepath.Join(t.TempDir(), "new.db"), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := database.Check(ctx, s); err != nil {
		t.Fatalf("a SQLite file opened for work: %v, want it migrated", err)
	}
	if _, err := database.OpenMigrated(ctx, dbtest.NewSchemaURL(t), database.Options{}); err == nil {
		t.Fatal("an unmigrated PostgreSQL schema was opened for work")
	}
	pg, err := database.OpenMigrated(ctx, dbtest.PostgresURL(t), database.Options{})
	if err != nil {
		t.Fatalf("a migrated PostgreSQL schema: %v", err)
	}
	pg.Close()
}
