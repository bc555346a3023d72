package wiring_test

import (
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/wiring"
)

// TestMonthClose: a month's close has a section for each provider with
// books that month, or for the one asked for.
func TestMonthClose(t *testing.T) {
	t.Parallel()
	url := dbtest.SQLiteURL(t)
	fixture.Books(t, url)
	p, err := setup(t, url, wiring.Existing)
	if err != nil {
		t.Fatal(err)
	}
	all, err := p.MonthClose(t.Context(), report.CloseParams{Period: "2026-11"})
	if err != nil {
		t.Fatal(err)
	}
	one, err := p.MonthClose(t.Context(), report.CloseParams{Period: "2026-11", Provider: "stripe"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Sections) != 1 || all.Sections[0].Provider != "mpesa" || len(one.Sections) != 1 || one.Sections[0].Provider != "stripe" {
		t.Errorf("close of every provider: %+v; of stripe: %+v", all.Sections, one.Sections)
	}
}
