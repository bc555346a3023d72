package migrations_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
)

// TestAlertDoubtCarriedOver: migration 5 moves "an earlier try may have
// posted" from the text of error into may_have_posted: an ambiguous class
// (server_error, timeout, network) or the note means true, anything else
// false.
func TestAlertDoubtCarriedOver(t *testing.T) {
	t.Parallel()
	for _, e := range []struct{ name, url string }{
		{"postgres", dbtest.NewSchemaURL(t)},
		{"sqlite", "sqlite:" + filepath.Join(t.TempDir(), "r.db")},
	} {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			p, db := provider(t, e.url)
			if _, err := p.UpTo(ctx, 4); err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{
				"timeout: context deadline exceeded":                       true,
				"server_error: slack answered 502":                         true,
				"network: connection reset":                                true,
				"rejected: channel_not_found":                              false,
				"rate_limited: slow down (an earlier try may have posted)": true,
				"superseded by alert 7":                                    false,
				"":                                                         false,
			}
			i := 0
			for text := range want {
				i++
				q := `INSERT INTO alerts (subject, reason, state, error, created_at) VALUES ($1, 'opened', 'pending', $2, CURRENT_TIMESTAMP)`
				if e.name == "sqlite" {
					q = `INSERT INTO alerts (subject, reason, state, error, created_at) VALUES (?, 'opened', 'pending', ?, '2026-11-02T00:00:00.000000Z')`
				}
				if _, err := db.ExecContext(ctx, q, "f_"+string(rune('a'+i)), text); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := p.UpTo(ctx, 5); err != nil {
				t.Fatal(err)
			}
			rows, err := db.QueryContext(ctx, `SELECT error, may_have_posted FROM alerts`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				var (
					text string
					got  bool
				)
				if err := rows.Scan(&text, &got); err != nil {
					t.Fatal(err)
				}
				n++
				if got != want[text] {
					t.Errorf("%q: may_have_posted %v, want %v", text, got, want[text])
				}
			}
			if err := rows.Err(); err != nil || n != len(want) {
				t.Fatalf("%d rows, %v", n, err)
			}
		})
	}
}
