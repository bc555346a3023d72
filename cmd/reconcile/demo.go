package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/demo"
	"github.com/reconcilehq/reconcile/ledger"
)

// demoSchema isolates the demo on PostgreSQL.
const demoSchema = "reconcile_demo"

func newDemoCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "A self-contained demonstration on a fresh embedded database",
		Long: `Run a day of payments end to end with fake M-Pesa and Stripe servers on loopback: intents
charged through the queue (with a worker that dies mid-charge and a provider without idempotency
keys), M-Pesa callbacks (some duplicated, one late), a portal statement, a Stripe pull, the
reconcile runs, their findings and the Slack message they would send. No server, network or
secrets needed; it takes a few seconds and gives the same findings every time.

It uses a fresh SQLite file, reconcile-demo.db (replaced each run). With --database-url
postgres://... it runs on PostgreSQL in a schema of its own, reconcile_demo (replaced each run).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			target := "sqlite:reconcile-demo.db"
			if cmd.Flags().Changed("database-url") || os.Getenv("RECONCILE_DATABASE_URL") != "" {
				target = a.cfg.DatabaseURL
			}
			store, shown, err := freshDemoStore(ctx, target)
			if err != nil {
				return err
			}
			defer store.Close()
			fmt.Fprintf(a.stdout, "reconcile demo on %s\n", database.Redact(shown))
			dir, err := os.MkdirTemp("", "reconcile-demo-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			next := shown
			if database.Redact(shown) != shown {
				next = "'<your database URL>&search_path=" + demoSchema + "'" // the password is not printed
			}
			_, err = demo.Run(ctx, demo.Options{Store: store, Out: a.stdout, TempDir: dir, DatabaseURL: next, Command: selfCommand()})
			return err
		},
	}
}

// freshDemoStore empties the demo's database (its own file, or its own
// schema on PostgreSQL), migrates it and opens it.
func freshDemoStore(ctx context.Context, target string) (ledger.Store, string, error) {
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
		_, err = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+demoSchema+" CASCADE; CREATE SCHEMA "+demoSchema)
		conn.Close(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("demo: prepare schema %s: %w", demoSchema, err)
		}
		u, err := url.Parse(target)
		if err != nil {
			return nil, "", err
		}
		q := u.Query()
		q.Set("search_path", demoSchema)
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

// selfCommand is how the user ran this binary, for suggested commands:
// "go run ./cmd/reconcile" when it was built by go run into a temporary
// directory, "reconcile" otherwise.
func selfCommand() string {
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
