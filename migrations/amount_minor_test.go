package migrations_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger/engine"
	"github.com/reconcilehq/reconcile/migrations"
)

// TestAmountMinorWritten: migration 12 keeps the minor units that the
// generated column computed, refuses an insert that leaves them out when
// the amount has some, recomputes them when an UPDATE changes amount or
// currency, and goes down to the generated column again. On SQLite it is
// a no-op that exists to keep the versions in step.
func TestAmountMinorWritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("sqlite", func(t *testing.T) {
		p, _ := provider(t, "sqlite:"+filepath.Join(t.TempDir(), "r.db"))
		if _, err := p.UpTo(ctx, 12); err != nil {
			t.Fatal(err)
		}
		if v, err := p.GetDBVersion(ctx); err != nil || v != 12 {
			t.Fatal(v, err)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		p, db := provider(t, dbtest.NewSchemaURL(t))
		if _, err := p.UpTo(ctx, 11); err != nil {
			t.Fatal(err)
		}
		exec := func(q string, args ...any) error {
			_, err := db.ExecContext(ctx, q, args...)
			return err
		}
		insertTxn := `INSERT INTO provider_txns (provider, txn_id, type, status, amount, currency, occurred_at,
			first_seen_at, updated_at) VALUES ('mpesa', $1, 'charge', 'succeeded', $2, $3, now(), now(), now())`
		for _, r := range [][3]string{{"T1", "1500.50", "KES"}, {"T2", "1.005", "KES"}, {"T3", "1200", "JPY"}} {
			if err := exec(insertTxn, r[0], r[1], r[2]); err != nil {
				t.Fatal(err)
			}
		}
		if err := exec(`INSERT INTO intents (key, provider, amount, currency, customer, reference, state, created_at,
			updated_at) VALUES ('k1', 'mpesa', 250.25, 'KES', '', 'R1', 'pending', now(), now())`); err != nil {
			t.Fatal(err)
		}
		if _, err := p.UpTo(ctx, 12); err != nil {
			t.Fatal(err)
		}
		minor := func(q string) string {
			var s sql.NullString
			if err := db.QueryRowContext(ctx, q).Scan(&s); err != nil {
				t.Fatal(err)
			}
			if !s.Valid {
				return "NULL"
			}
			return s.String
		}
		// want checks what four rows hold, when.
		want := func(when, t1, t2, t3, k1 string) {
			t.Helper()
			for q, want := range map[string]string{
				`SELECT amount_minor FROM provider_txns WHERE txn_id = 'T1'`: t1,
				`SELECT amount_minor FROM provider_txns WHERE txn_id = 'T2'`: t2,
				`SELECT amount_minor FROM provider_txns WHERE txn_id = 'T3'`: t3,
				`SELECT amount_minor FROM intents WHERE key = 'k1'`:          k1,
			} {
				if got := minor(q); got != want {
					t.Errorf("%s, %s: %s, want %s", when, q, got, want)
				}
			}
		}
		want("the values the generated column wrote stay", "150050", "NULL", "1200", "25025")
		// An insert must write the minor units an amount has.
		err := exec(insertTxn, "T4", "10.00", "KES")
		if err == nil || !strings.Contains(err.Error(), "provider_txns_amount_minor_written") {
			t.Fatalf("insert without amount_minor: %v", err)
		}
		if err := exec(insertTxn, "T5", "10.001", "KES"); err != nil {
			t.Fatalf("an amount without minor units needs none: %v", err)
		}
		err = exec(`INSERT INTO intents (key, provider, amount, currency, customer, reference, state, created_at,
			updated_at) VALUES ('k2', 'mpesa', 1, 'KES', '', 'R2', 'pending', now(), now())`)
		if err == nil || !strings.Contains(err.Error(), "intents_amount_minor_written") {
			t.Fatalf("insert without amount_minor: %v", err)
		}
		if err := exec(`INSERT INTO intents (key, provider, amount, currency, customer, reference, state, created_at,
			updated_at, amount_minor) VALUES ('k2', 'mpesa', 1, 'KES', '', 'R2', 'pending', now(), now(),
			minor_units(1, 'KES'))`); err != nil {
			t.Fatal(err)
		}
		// An update of amount or currency recomputes them.
		for _, q := range []string{
			`UPDATE provider_txns SET amount = 7.5 WHERE txn_id = 'T1'`,
			`UPDATE provider_txns SET currency = 'KWD' WHERE txn_id = 'T2'`,
			`UPDATE provider_txns SET amount = 1.5 WHERE txn_id = 'T3'`,
			`UPDATE intents SET amount = 99, currency = 'JPY' WHERE key = 'k1'`,
		} {
			if err := exec(q); err != nil {
				t.Fatal(q, err)
			}
		}
		want("after the update", "750", "1005", "NULL", "99")
		// Down: generated again, with the same values.
		if _, err := p.DownTo(ctx, 11); err != nil {
			t.Fatal(err)
		}
		if got := minor(`SELECT count(*) FROM provider_txns WHERE amount_minor IS DISTINCT FROM minor_units(amount, currency)`); got != "0" {
			t.Fatalf("%s rows differ after down", got)
		}
		if got := minor(`SELECT attgenerated FROM pg_attribute WHERE attrelid = 'intents'::regclass AND attname = 'amount_minor'`); got != "s" {
			t.Fatalf("intents.amount_minor after down: attgenerated %q", got)
		}
	})
}

// provider opens the database at url and returns a goose provider of its
// engine's migrations and the database.
func provider(t *testing.T, url string) (*goose.Provider, *sql.DB) {
	t.Helper()
	ctx := context.Background()
	s, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	drv, err := engine.Of(s)
	if err != nil {
		t.Fatal(err)
	}
	m := drv.Migrations()
	db, release, err := m.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	p, err := goose.NewProvider(m.Dialect, db, m.FS, goose.WithGoMigrations(migrations.Go(m.Dialect)...))
	if err != nil {
		t.Fatal(err)
	}
	return p, db
}
