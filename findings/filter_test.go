package findings_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/schedule"
)

func TestParseStatuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []string
		want []ledger.FindingStatus
		err  string
	}{
		{in: nil, want: nil},
		{in: []string{"open", "resolved"}, want: []ledger.FindingStatus{ledger.FindingOpen, ledger.FindingResolved}},
		{in: []string{"open", " ALL "}, want: nil},
		{in: []string{"closed"}, err: `"closed": want open, acknowledged, resolved or all`},
	} {
		got, err := findings.ParseStatuses(c.in)
		if (err != nil || c.err != "") && (err == nil || err.Error() != c.err) {
			t.Errorf("%v: error %v, want %q", c.in, err, c.err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: %v, want %v", c.in, got, c.want)
		}
	}
}

func TestParseKinds(t *testing.T) {
	t.Parallel()
	got, err := findings.ParseKinds([]string{"duplicate_charge", "unknown_charge"})
	if err != nil || !slices.Equal(got, []ledger.Kind{ledger.KindDuplicateCharge, ledger.KindUnknownCharge}) {
		t.Errorf("kinds: %v (%v)", got, err)
	}
	if _, err := findings.ParseKinds([]string{"dup"}); err == nil || err.Error() != `"dup": want one of `+findings.KindNames() {
		t.Errorf("unknown kind: %v", err)
	}
}

// TestListWindow: a findings list's window is read in its provider's zone;
// an unknown provider is an error naming --provider and the known ones.
func TestListWindow(t *testing.T) {
	t.Parallel()
	nairobi, err := time.LoadLocation("Africa/Nairobi")
	if err != nil {
		t.Fatal(err)
	}
	store := dbtest.SQLite(t)
	zones := map[string]*time.Location{"mpesa": nairobi, "stripe": time.UTC}
	start, _, err := findings.ListWindow(t.Context(), store, zones, "mpesa", "2026-11-02", "")
	if err != nil || !start.Equal(time.Date(2026, 11, 1, 21, 0, 0, 0, time.UTC)) {
		t.Errorf("mpesa window: %s (%v)", start, err)
	}
	if start, _, err = findings.ListWindow(t.Context(), store, zones, "", "2026-11-02", ""); err != nil ||
		!start.Equal(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("window without a provider: %s (%v)", start, err)
	}
	_, _, err = findings.ListWindow(t.Context(), store, zones, "paypal", "", "")
	var fe *schedule.FlagError
	if !errors.As(err, &fe) || fe.Flag != "provider" || err.Error() != `--provider "paypal": unknown provider (want one of mpesa, stripe)` {
		t.Errorf("unknown provider: %v", err)
	}
}
