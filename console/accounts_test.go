package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// TestAccountsInTheConsole: with a second paybill configured, the findings
// filter offers it and keeps each paybill's findings apart, an account
// that is not configured is refused, and the month's close shows a section
// per paybill, each with its own evidence, findings and days run.
func TestAccountsInTheConsole(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, e.New)
			branch := seedBranch(t, b.store)
			d := b.console.deps
			d.Accounts = map[string][]string{"mpesa": {"600639"}}
			c, err := New(b.console.cfg, d)
			if err != nil {
				t.Fatal(err)
			}
			c.formToken = b.console.formToken
			b.srv = httptest.NewServer(c.Handler())
			t.Cleanup(b.srv.Close)

			p := b.get(t, viewer, "/console/findings?status=all")
			if !strings.Contains(p.body, `<option value="600639">600639 (mpesa)</option>`) {
				t.Fatalf("the filter offers no branch:\n%s", p.body)
			}
			for _, c := range []struct {
				account string
				want    []string
			}{
				{"600639", []string{branch}},
				{"default", []string{b.unknown, b.dup}},
				{"", []string{branch, b.unknown, b.dup}},
			} {
				p := b.get(t, viewer, "/console/findings?status=all&provider=mpesa&account="+c.account)
				got := listed(p.body)
				slices.Sort(got)
				slices.Sort(c.want)
				if !slices.Equal(got, c.want) {
					t.Errorf("account %q: listed %v, want %v", c.account, got, c.want)
				}
			}
			if p := b.get(t, viewer, "/console/findings?provider=mpesa&account=600640"); p.status != http.StatusUnprocessableEntity ||
				!strings.Contains(p.body, "600640") {
				t.Fatalf("an account not configured: %d\n%s", p.status, p.body)
			}

			p = b.get(t, viewer, "/console/close?period=2026-11&provider=mpesa")
			main, rest, ok := strings.Cut(p.body, "<h2>mpesa@600639</h2>")
			if p.status != http.StatusOK || !ok || !strings.Contains(main, "<h2>mpesa</h2>") {
				t.Fatalf("close page, a section per paybill: %d\n%s", p.status, p.body)
			}
			branchSection, _, _ := strings.Cut(rest, "<h2>")
			for _, want := range []string{"1: 400.00", "unknown_charge 1: 400.00", "Matched 0 of 1 transactions"} {
				if !strings.Contains(branchSection, want) {
					t.Errorf("the branch's section lacks %q:\n%s", want, branchSection)
				}
			}
			if strings.Contains(branchSection, "duplicate_charge") || !strings.Contains(main, "duplicate_charge") {
				t.Errorf("the main paybill's finding in the wrong section:\n%s", p.body)
			}
			form := url.Values{"period": {"2026-11"}, "provider": {"mpesa"}, "note": {"November reviewed"}}
			if p := b.post(t, ops, "/console/close", form, nil); p.status != http.StatusConflict || !strings.Contains(p.body, "mpesa@600639: ") {
				t.Fatalf("closing with the branch's days not run: %d\n%s", p.status, p.body)
			}
		})
	}
}

// seedBranch records a payment into paybill 600639 on the day setup seeds,
// a finished run of that paybill's day, and its unknown_charge, and
// returns the finding's id.
func seedBranch(t *testing.T, s ledger.Store) string {
	t.Helper()
	ctx := context.Background()
	amount, err := money.Parse("400", "KES")
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(2 * time.Hour)
	if _, err := s.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "mpesa", Account: "600639", ID: "SKB3CCCC01", Type: ledger.TxnCharge,
		Status: ledger.TxnSucceeded, Amount: amount, OccurredAt: at, Reference: "SHOP 12"},
		ledger.Source{Channel: "statement", Ref: "statement:SKB3CCCC01", ReceivedAt: at.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 11, 1, 21, 0, 0, 0, time.UTC)
	run, err := s.ClaimRun(ctx, ledger.RunClaim{Provider: "mpesa", Account: "600639", From: from, To: from.Add(24 * time.Hour),
		Owner: "test", Lease: time.Hour, Now: t0.Add(3 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	f := ledger.Finding{ID: ledger.FindingID(ledger.KindUnknownCharge, "", []string{"SKB3CCCC01"}), Kind: ledger.KindUnknownCharge,
		Severity: ledger.SeverityMedium, Provider: "mpesa", Account: "600639", ProviderTxnIDs: []string{"SKB3CCCC01"}, Actual: amount,
		AtRisk: amount, Detail: "charge links to no intent", OccurredAt: at}
	if _, err := s.UpsertFindings(ctx, []ledger.Finding{f}, run.ID, t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FinishRun(ctx, ledger.RunFinish{ID: run.ID, Owner: "test", State: ledger.RunFinished, Now: t0.Add(3 * time.Hour),
		Counts: ledger.RunCounts{Transactions: 1, Findings: 1, New: 1}}); err != nil {
		t.Fatal(err)
	}
	return f.ID
}
