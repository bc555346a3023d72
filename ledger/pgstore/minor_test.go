package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
)

// TestMinorUnitsInlined checks that PostgreSQL inlines minor_units into the
// expressions that use it (the amount_minor columns): called as a SQL
// function instead, it costs every row written tens of times more.
func TestMinorUnitsInlined(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := dbtest.Postgres(t).(*pgstore.Store)
	rows, err := s.Pool().Query(ctx, `EXPLAIN (VERBOSE) SELECT minor_units(amount, currency) FROM intents`)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "minor_units(") || !strings.Contains(text, "trim_scale") {
		t.Fatalf("minor_units is not inlined:\n%s", text)
	}
}
