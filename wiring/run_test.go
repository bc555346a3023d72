package wiring_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
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

// TestBankRunPullsAnAccountsPayouts: on both engines, a run of the bank
// account a connected Stripe account pays into, built from the
// configuration, pulls that account's payouts on its behalf from (a fake)
// Stripe before matching: a payout known only to Stripe is recorded in the
// account and matched to the bank's credit.
func TestBankRunPullsAnAccountsPayouts(t *testing.T) {
	t.Parallel()
	arrival := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range dbtest.EngineURLs() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			fake := stripefake.New(clock)
			t.Cleanup(fake.Close)
			// 72.09 less its fee of 2.09 is 70.00.
			ch := fake.AddCharge(stripefake.Charge{ID: "ch_conn1", Amount: 7209, Currency: "usd", Created: arrival.Add(-60 * time.Hour)})
			if _, err := fake.AddPayout(stripefake.PayoutSpec{ID: "po_conn1", Created: arrival.Add(-36 * time.Hour), ArrivalDate: arrival,
				Descriptor: "STRIPE", BalanceTxns: []string{ch.BalanceTxn}}); err != nil {
				t.Fatal(err)
			}
			cfg := config.Default()
			cfg.DatabaseURL = e.URL(t)
			s := &cfg.Providers.Stripe
			s.APIKey, s.BaseURL = "sk_test_platform01", fake.Start()
			s.Accounts = []config.StripeAccount{{ID: "acct_1Conn"}}
			cfg.Banks = []config.BankConfig{{Name: "conn", Account: "5500000001", Currency: "USD", Zone: "America/New_York",
				Format: "bai2", From: []config.BankSourceConfig{{Provider: "stripe", Account: "acct_1Conn", Descriptor: "STRIPE"}}}}
			p, err := wiring.Open(ctx, cfg, wiring.Options{Mode: wiring.Create, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			// The bank's credit, and the charge as the account's own run
			// pulled it.
			src := func(id string) ledger.Source { return ledger.Source{Channel: "test", Ref: id, ReceivedAt: arrival} }
			credit := ledger.ProviderTxn{Provider: "bank:conn", ID: "BR001@STMT#1.1", Type: ledger.TxnBankCredit,
				Status: ledger.TxnSucceeded, Amount: usd(t, "70.00"), OccurredAt: time.Date(2026, 3, 10, 0, 0, 0, 0, newYork),
				Reference: "po_conn1", ProviderRef: "po_conn1"}
			charge := ledger.ProviderTxn{Provider: "stripe", Account: "acct_1Conn", ID: ch.ID, Type: ledger.TxnCharge,
				Status: ledger.TxnSucceeded, Amount: usd(t, "72.09"), OccurredAt: ch.Created}
			for _, x := range []ledger.ProviderTxn{credit, charge} {
				if _, err := p.Store.UpsertProviderTxn(ctx, x, src(x.ID)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := p.Store.RecordBankEntries(ctx, []ledger.BankEntry{{Provider: "bank:conn", TxnID: credit.ID, Statement: "STMT",
				Index: 1, BookingDate: arrival, ValueDate: arrival, BankRef: "BR001", EndToEndID: "po_conn1",
				Text: "STRIPE PAYOUT po_conn1"}}); err != nil {
				t.Fatal(err)
			}
			from := time.Date(2026, 3, 9, 0, 0, 0, 0, newYork)
			var out bytes.Buffer
			open, err := p.RunWindow(ctx, wiring.Window{Setup: p.Providers["bank:conn"], Accounts: []string{""}, Format: report.Text,
				Params: reconciler.Params{Provider: "bank:conn", From: from, To: from.AddDate(0, 0, 3)}, Out: &out, Err: &out})
			if err != nil {
				t.Fatal(err)
			}
			if open != 0 {
				t.Errorf("%d open findings, want none:\n%s", open, out.String())
			}
			x, err := p.Store.GetProviderTxn(ctx, "stripe", "po_conn1")
			if err != nil || x.Account != "acct_1Conn" {
				t.Errorf("po_conn1 in account %q (%v), want acct_1Conn", x.Account, err)
			}
			asked := false
			for _, r := range fake.Requests() {
				if r.Path == "/v1/payouts" {
					asked = true
					if r.Account != "acct_1Conn" || r.APIKey != "sk_test_platform01" {
						t.Errorf("payouts asked of account %q with key %q, want acct_1Conn with the platform's", r.Account, r.APIKey)
					}
				}
			}
			if !asked {
				t.Error("the account's payouts were not asked for")
			}
		})
	}
}

func usd(t *testing.T, v string) money.Amount {
	t.Helper()
	a, err := money.Parse(v, "USD")
	if err != nil {
		t.Fatal(err)
	}
	return a
}
