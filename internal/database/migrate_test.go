package database_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger/engine"
)

// A database a newer binary migrated is refused, by every command's check
// and by migrate, naming both versions: this binary's writes could break
// rules it does not know.
func TestSchemaNewerThanBinaryIsRefused(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s := e.New(t)
			if err := database.Check(ctx, s); err != nil {
				t.Fatalf("a migrated database: %v", err)
			}
			drv, err := engine.Of(s)
			if err != nil {
				t.Fatal(err)
			}
			db, release, err := drv.Migrations().Open()
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			if _, err := db.ExecContext(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)`); err != nil {
				t.Fatal(err)
			}
			err = database.Check(ctx, s)
			if !errors.Is(err, database.ErrSchemaTooNew) || !strings.Contains(err.Error(), "at migration 9999") {
				t.Fatalf("check: got %v, want ErrSchemaTooNew naming migration 9999", err)
			}
			if _, err := database.Migrate(ctx, s); !errors.Is(err, database.ErrSchemaTooNew) {
				t.Fatalf("migrate: got %v, want ErrSchemaTooNew", err)
			}
		})
	}
}

func TestAppliedText(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := (database.Applied{}).WriteText(&b, "sqlite:x.db"); err != nil || b.String() != "sqlite:x.db: nothing to do, the schema is up to date\n" {
		t.Errorf("nothing applied: %q (%v)", b.String(), err)
	}
	b.Reset()
	a := database.Applied{Ledger: []string{"0001_intents.sql"}, River: []string{"001"}}
	want := "applied ledger 0001_intents.sql\napplied river 001\nsqlite:x.db: 2 migration(s) applied\n"
	if err := a.WriteText(&b, "sqlite:x.db"); err != nil || b.String() != want {
		t.Errorf("applied: %q (%v)", b.String(), err)
	}
}
