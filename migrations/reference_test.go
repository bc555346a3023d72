package migrations_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestReferencesNormalised: migrations 13 and 14 store beside every
// reference of the books its normal form, exactly as ledger.NormalReference
// computes it (ASCII in SQL on PostgreSQL, the rest in Go), and let intents
// be expected payments with a due date and a tolerance, which other kinds
// may not have.
func TestReferencesNormalised(t *testing.T) {
	t.Parallel()
	refs := []string{"INV-1001", " inv 1001 ", "inv.1001/a_b", "", "ÄBC-12", "ＩＮＶ１００１", "Ω9"}
	for _, e := range []struct{ name, url, param string }{
		{"postgres", dbtest.NewSchemaURL(t), "$"},
		{"sqlite", "sqlite:" + filepath.Join(t.TempDir(), "r.db"), "?"},
	} {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			p, db := provider(t, e.url)
			if _, err := p.UpTo(ctx, 12); err != nil {
				t.Fatal(err)
			}
			q := func(s string) string {
				if e.param == "$" { // PostgreSQL's writers fill the minor units (migration 12)
					s = strings.Replace(s, "updated_at)", "updated_at, amount_minor)", 1)
					s = strings.Replace(s, "Z')", "Z', 1000)", 1)
					s = strings.Replace(s, "Z', $2)", "Z', $2, 1000)", 1)
					s = strings.Replace(s, "tolerance)", "tolerance, amount_minor)", 1)
					s = strings.Replace(s, "$4)", "$4, 1000)", 1)
				}
				if e.param == "?" {
					for i := 9; i >= 1; i-- {
						s = strings.ReplaceAll(s, "$"+string(rune('0'+i)), "?")
					}
				}
				return s
			}
			for i, ref := range refs {
				key := string(rune('a' + i))
				if _, err := db.ExecContext(ctx, q(`INSERT INTO intents (key, provider, amount, currency, reference, state, created_at, updated_at)
					VALUES ($1, 'mpesa', '10', 'KES', $2, 'pending', '2026-01-02T03:04:05.000000Z', '2026-01-02T03:04:05.000000Z')`), key, ref); err != nil {
					t.Fatal(err)
				}
				if _, err := db.ExecContext(ctx, q(`INSERT INTO provider_txns (provider, txn_id, type, status, amount, currency, occurred_at,
					reference, first_seen_at, updated_at) VALUES ('mpesa', $1, 'charge', 'succeeded', '10', 'KES',
					'2026-01-02T03:04:05.000000Z', $2, '2026-01-02T03:04:05.000000Z', '2026-01-02T03:04:05.000000Z')`), key, ref); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := p.Up(ctx); err != nil {
				t.Fatal(err)
			}
			for _, table := range []string{"intents", "provider_txns"} {
				rows, err := db.QueryContext(ctx, `SELECT reference, ref_norm FROM `+table)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for rows.Next() {
					var ref string
					var norm *string
					if err := rows.Scan(&ref, &norm); err != nil {
						t.Fatal(err)
					}
					if norm == nil || *norm != ledger.NormalReference(ref) {
						t.Errorf("%s: %q normalised to %v, want %q", table, ref, norm, ledger.NormalReference(ref))
					}
					n++
				}
				if err := rows.Close(); err != nil || n != len(refs) {
					t.Fatalf("%s: %d rows, %v", table, n, err)
				}
			}
			expected := q(`INSERT INTO intents (key, provider, amount, currency, reference, state, created_at, updated_at, kind, due_at, tolerance)
				VALUES ($1, 'mpesa', '10', 'KES', 'R', 'pending', '2026-01-02T03:04:05.000000Z', '2026-01-02T03:04:05.000000Z', $2, $3, $4)`)
			if _, err := db.ExecContext(ctx, expected, "inv", "expected", "2026-01-09T00:00:00.000000Z", "1"); err != nil {
				t.Fatalf("an expected payment with a due date and a tolerance: %v", err)
			}
			if _, err := db.ExecContext(ctx, expected, "chg", "charge", "2026-01-09T00:00:00.000000Z", nil); err == nil {
				t.Fatal("a charge with a due date was stored")
			}
			if _, err := db.ExecContext(ctx, expected, "odd", "invoice", nil, nil); err == nil {
				t.Fatal("an unknown kind was stored")
			}
		})
	}
}
