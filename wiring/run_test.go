package wiring_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/schedule"
	"github.com/reconcilehq/reconcile/wiring"
)

// TestRunAccounts: a run names one account, or runs every one, the
// default first; an unknown one is an error naming --account.
func TestRunAccounts(t *testing.T) {
	t.Parallel()
	p, err := setup(t, dbtest.SQLiteURL(t), wiring.Create)
	if err != nil {
		t.Fatal(err)
	}
	setup := p.Providers["mpesa"]
	setup.Accounts = []string{"600111"}
	if got, err := wiring.RunAccounts(setup, ""); err != nil || !slices.Equal(got, []string{"", "600111"}) {
		t.Errorf("every account: %q (%v)", got, err)
	}
	if got, err := wiring.RunAccounts(setup, "default"); err != nil || !slices.Equal(got, []string{""}) {
		t.Errorf("the default account: %q (%v)", got, err)
	}
	_, err = wiring.RunAccounts(setup, "999")
	var fe *schedule.FlagError
	if !errors.As(err, &fe) || fe.Flag != "account" || !strings.HasPrefix(err.Error(), "--account: ") {
		t.Errorf("an unknown account: %v", err)
	}
}

// TestRunWindowDryRun: a dry run of a window writes its report and the
// Slack messages a real run would send (to Err when the report is machine
// readable), counts the open findings, and records no run.
func TestRunWindowDryRun(t *testing.T) {
	t.Parallel()
	url := dbtest.SQLiteURL(t)
	fixture.Books(t, url)
	p, err := setup(t, url, wiring.Existing)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 1, 21, 0, 0, 0, time.UTC) // 2 November in Nairobi
	before, err := p.Store.ListRuns(t.Context(), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []report.Format{report.Text, report.JSON} {
		var out, errOut bytes.Buffer
		open, err := p.RunWindow(t.Context(), wiring.Window{Setup: p.Providers["mpesa"], Accounts: []string{""}, Format: f,
			Params: reconciler.Params{Provider: "mpesa", From: day, To: day.Add(24 * time.Hour), DryRun: true},
			Out:    &out, Err: &errOut})
		if err != nil {
			t.Fatal(err)
		}
		preview := &out
		if f != report.Text {
			preview = &errOut
		}
		if open == 0 || out.Len() == 0 || !strings.Contains(preview.String(), "Slack messages this run would send:") {
			t.Errorf("%s: %d open findings; report:\n%s\nstderr:\n%s", f, open, out.String(), errOut.String())
		}
	}
	if after, err := p.Store.ListRuns(t.Context(), "", 100); err != nil || len(after) != len(before) {
		t.Errorf("a dry run recorded a run: %d runs before, %d after (%v)", len(before), len(after), err)
	}
}

// TestModeOf: a dry run never creates the books; any other run does.
func TestModeOf(t *testing.T) {
	t.Parallel()
	if wiring.ModeOf(true) != wiring.Existing || wiring.ModeOf(false) != wiring.Create {
		t.Errorf("dry run: %v, run: %v", wiring.ModeOf(true), wiring.ModeOf(false))
	}
}
