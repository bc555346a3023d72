package findings_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
)

// TestShow: a run, a quarantined item and an intent are read with what
// goes with them and written as their writers do; what the books do not
// hold is ledger.ErrNotFound and writes nothing.
func TestShow(t *testing.T) {
	t.Parallel()
	url := dbtest.SQLiteURL(t)
	sd := fixture.Books(t, url)
	store, err := database.Open(t.Context(), url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := t.Context()
	zones := map[string]*time.Location{"mpesa": time.UTC}
	var got, want bytes.Buffer
	if err := findings.ShowRun(ctx, &got, report.Text, store, sd.RunID, zones); err != nil {
		t.Fatal(err)
	}
	run, _ := store.GetRun(ctx, sd.RunID)
	fs, _ := store.ListFindings(ctx, ledger.FindingFilter{RunID: sd.RunID, Limit: 10000})
	if err := findings.WriteRun(&want, report.Text, run, fs, zones); err != nil || got.String() != want.String() {
		t.Errorf("run shown:\n%s\nwant:\n%s (%v)", got.String(), want.String(), err)
	}
	got.Reset()
	if err := findings.ShowQuarantineItem(ctx, &got, report.Text, store, sd.Kept); err != nil || !strings.Contains(got.String(), "mpesa_callback") {
		t.Errorf("quarantined item shown:\n%s (%v)", got.String(), err)
	}
	got.Reset()
	if err := report.ShowIntent(ctx, &got, store, "charge:order-4471"); err != nil || !strings.Contains(got.String(), "charge:order-4471") {
		t.Errorf("intent shown:\n%s (%v)", got.String(), err)
	}
	got.Reset()
	for name, err := range map[string]error{
		"run":        findings.ShowRun(ctx, &got, report.Text, store, 999, zones),
		"quarantine": findings.ShowQuarantineItem(ctx, &got, report.Text, store, 999),
		"intent":     report.ShowIntent(ctx, &got, store, "charge:none"),
	} {
		if !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("%s not in the books: %v", name, err)
		}
	}
	if got.Len() != 0 {
		t.Errorf("what the books do not hold was written:\n%s", got.String())
	}
}

// TestCloseZones: a close covers every provider findings know, or the
// one asked for.
func TestCloseZones(t *testing.T) {
	t.Parallel()
	store := dbtest.SQLite(t)
	zones := map[string]*time.Location{"mpesa": time.UTC, "stripe": time.UTC}
	all, err := findings.CloseZones(t.Context(), store, zones, "")
	if err != nil || len(all) != 2 {
		t.Errorf("every provider: %v (%v)", all, err)
	}
	one, err := findings.CloseZones(t.Context(), store, zones, "stripe")
	if _, ok := one["stripe"]; err != nil || len(one) != 1 || !ok {
		t.Errorf("stripe only: %v (%v)", one, err)
	}
}
