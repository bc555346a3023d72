package demo

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
)

// Schema isolates the demo on PostgreSQL.
const Schema = "reconcile_demo"

// FreshStore empties the demo's database (its own file, or its own schema
// on PostgreSQL, Schema), migrates it and opens it; it returns the store
// and the URL it opened.
func FreshStore(ctx context.Context, target string) (ledger.Store, string, error) {
	engine, err := database.Engine(target)
	if err != nil {
		return nil, "", err
	}
	if engine == ledger.EngineSQLite {
		path := database.SQLitePath(target)
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
				return nil, "", err
			}
		}
	} else {
		conn, err := pgx.Connect(ctx, target)
		if err != nil {
			return nil, "", fmt.Errorf("demo: connect to %s: %w", database.Redact(target), err)
		}
		_, err = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+Schema+" CASCADE; CREATE SCHEMA "+Schema)
		conn.Close(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("demo: prepare schema %s: %w", Schema, err)
		}
		u, err := url.Parse(target)
		if err != nil {
			return nil, "", err
		}
		q := u.Query()
		q.Set("search_path", Schema)
		u.RawQuery = q.Encode()
		target = u.String()
	}
	store, err := database.Open(ctx, target, database.Options{})
	if err != nil {
		return nil, "", err
	}
	if _, err := database.Migrate(ctx, store); err != nil {
		store.Close()
		return nil, "", err
	}
	return store, target, nil
}

// SelfCommand is how the user ran this binary, for suggested commands:
// "go run ./cmd/reconcile" when it was built by go run into a temporary
// directory, "reconcile" otherwise.
func SelfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "reconcile"
	}
	tmp, err := filepath.Abs(os.TempDir())
	if err == nil && strings.HasPrefix(exe, tmp+string(filepath.Separator)) && strings.Contains(exe, "go-build") {
		return "go run ./cmd/reconcile"
	}
	return "reconcile"
}

// DefaultTarget is the database the demo runs on unless one is chosen.
const DefaultTarget = "sqlite:reconcile-demo.db"

// Target is the database the demo runs on: configured when the command
// line or the environment chose it (chosen), DefaultTarget otherwise.
func Target(chosen bool, configured string) string {
	if chosen {
		return configured
	}
	return DefaultTarget
}

// NextURL is the database URL the demo tells the reader to look at its
// books with: the one it opened (shown), or, when that holds a password, a
// placeholder naming the demo's schema, so that the password is not
// printed.
func NextURL(shown string) string {
	if database.Redact(shown) != shown {
		return "'<your database URL>&search_path=" + Schema + "'"
	}
	return shown
}
