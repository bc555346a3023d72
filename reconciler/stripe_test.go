package reconciler_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/statement"
	"github.com/reconcilehq/reconcile/providers/stripe"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
)

// The Stripe fixture day, 2024-11-23 UTC: the intents below, and the same
// balance activity in three report layouts (testdata/stripe/*.csv): the
// balance change report with the recommended columns, the balance change
// report with a default-like column set (no source_id, no metadata, no
// customer columns), and the payout reconciliation report in local time.
// Every documented reporting category appears, plus one Stripe does not
// document.
var stripeDay = time.Date(2024, 11, 23, 0, 0, 0, 0, time.UTC)

type stripeIntent struct {
	key, amount, cur, pi string
	minute               int
}

// stripeIntents are the books: each charged under the PaymentIntent pi.
var stripeIntents = []stripeIntent{
	{"charge:usd", "100.00", "USD", "pi_usd", 1},
	{"charge:gbp", "40.00", "GBP", "pi_gbp", 2},          // presented in GBP, settled in USD
	{"charge:jpy", "1500", "JPY", "pi_jpy", 3},           // zero-decimal, settled in USD
	{"charge:kwd", "12.345", "KWD", "pi_kwd", 4},         // three decimals; the customer paid 12.346
	{"charge:partial", "30.00", "USD", "pi_part", 5},     // partly refunded
	{"charge:full", "20.00", "USD", "pi_full", 6},        // refunded in full
	{"charge:lost", "25.50", "USD", "pi_lost", 7},        // disputed, funds withdrawn, not reinstated
	{"charge:won", "60.00", "EUR", "pi_won", 8},          // disputed and won
	{"charge:capture", "30.00", "USD", "pi_cap", 9},      // authorised 40.00, captured 30.00
	{"charge:ach", "12.00", "USD", "pi_ach", 10},         // the bank debit failed afterwards
	{"charge:refund-failed", "8.00", "USD", "pi_rf", 11}, // refunded, the refund failed
	{"charge:missing", "15.00", "USD", "pi_missing", 12}, // no charge at Stripe
}

func stripeBooks(t testing.TB) *scenario.Day {
	d := &scenario.Day{Name: "stripe-report", Provider: stripe.Provider, From: stripeDay, To: stripeDay.Add(24 * time.Hour),
		Now: stripeDay.Add(30 * time.Hour), Grace: 2 * time.Hour}
	for _, si := range stripeIntents {
		amt, err := money.Parse(si.amount, si.cur)
		if err != nil {
			t.Fatal(err)
		}
		at := stripeDay.Add(10*time.Hour + time.Duration(si.minute)*time.Minute)
		d.Intents = append(d.Intents, scenario.Intent{NewIntent: ledger.NewIntent{IntentParams: ledger.IntentParams{
			Key: si.key, Provider: stripe.Provider, Amount: amt, Customer: "cus_" + strings.TrimPrefix(si.pi, "pi_")},
			State: ledger.StateSucceeded, CreatedAt: at},
			Attempts: []scenario.Attempt{{Ref: si.pi, Outcome: ledger.OutcomeSucceeded, At: at}}})
	}
	// The partial and the full refund are in the books, recorded without
	// their refund ids: found through the charges they name.
	for _, r := range []struct{ of, amount string }{{"charge:partial", "10.00"}, {"charge:full", "20.00"}} {
		amt, err := money.Parse(r.amount, "USD")
		if err != nil {
			t.Fatal(err)
		}
		at := stripeDay.Add(11 * time.Hour)
		d.Intents = append(d.Intents, scenario.Intent{NewIntent: ledger.NewIntent{IntentParams: ledger.IntentParams{
			Key: "refund:" + r.of, Kind: ledger.IntentRefund, RefundOf: r.of, Provider: stripe.Provider, Amount: amt},
			State: ledger.StateSucceeded, CreatedAt: at}})
	}
	return d
}

var stripeLayouts = []struct {
	file string
	loc  *time.Location
}{
	{"balance_change_extended.csv", nil},
	{"balance_change_default.csv", nil},
	{"payout_reconciliation.csv", time.FixedZone("EST", -5*3600)},
}

// TestStripeReportDays imports the fixture day in every layout and
// reconciles it on both engines: the import summary and the findings are
// golden, the same on both engines, and the same in every layout but for
// the ids of refunds and disputes, which a report without source_id cannot
// name.
func TestStripeReportDays(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		for _, l := range stripeLayouts {
			t.Run(e.Name+"/"+l.file, func(t *testing.T) {
				t.Parallel()
				day := stripeBooks(t)
				b := setup(t, e.New, day, reconciler.Config{})
				summary := importReport(t, b.store, l.file, l.loc)
				base := strings.TrimSuffix(l.file, ".csv")
				golden.Assert(t, "testdata/stripe/"+base+".import.golden", summary)
				// A second import of the same file adds nothing.
				again := importReport(t, b.store, l.file, l.loc)
				if !strings.Contains(again, "0 new transaction(s), 0 new source(s)") {
					t.Errorf("re-import: %s", again)
				}
				out := b.run(t, reconciler.Params{NoPull: true})
				if got := kinds(out.Findings); !slices.Equal(got, stripeWant) {
					t.Errorf("findings %q, want %q", got, stripeWant)
				}
				golden.Assert(t, "testdata/stripe/"+base+".findings.golden", renderFindings(out.Findings))
			})
		}
	}
}

func importReport(t *testing.T, s ledger.Store, file string, loc *time.Location) string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "stripe", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	clock := func() time.Time { return stripeDay.Add(26 * time.Hour) }
	c, err := (&statement.Importer{Store: s, Clock: clock}).Import(context.Background(), statement.File{Name: file, Reader: f,
		Parser: stripe.ReportParser{Location: loc, Clock: clock}, Source: "stripe_statement"})
	if err != nil {
		t.Fatalf("import %s: %v", file, err)
	}
	return c.Summary(file)
}

// renderFindings writes findings as a person reads them, one block each.
func renderFindings(fs []ledger.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s %s intent=%q txns=%s\n  expected=%s actual=%s at_risk=%s\n  %s\n", f.Kind, f.Severity, f.IntentKey,
			strings.Join(f.ProviderTxnIDs, ","), amountText(f.Expected), amountText(f.Actual), amountText(f.AtRisk), f.Detail)
	}
	return b.String()
}

func amountText(a money.Amount) string {
	if a.IsZero() {
		return "-"
	}
	return a.Currency + " " + a.Text()
}

// stripeWant are the findings of the fixture day, in every layout: the
// presented amounts are compared (GBP, JPY and EUR settled in USD are no
// currency_mismatch), the lost dispute is a disputed_charge (never a
// status_mismatch) and the won one nothing, partial refunds and captures
// net, a failed refund gives the money back, and no adjustment, fee,
// payout or undocumented line is a charge.
var stripeWant = []string{
	"amount_mismatch charge:kwd",
	"disputed_charge charge:lost",
	"missing_at_provider charge:missing",
	"status_mismatch charge:ach",
	"unknown_charge ",
}

// kinds lists findings as "kind intent" lines, for comparing layouts.
func kinds(fs []ledger.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Kind)+" "+f.IntentKey)
	}
	slices.Sort(out)
	return out
}

// stripeFakeDay puts the fixture day into the Stripe fake, as the API
// would show it: charges (with their settlement), refunds, disputes and
// every balance transaction of the reports.
func stripeFakeDay(t *testing.T) *stripefake.Server {
	t.Helper()
	now := stripeDay
	fk := stripefake.New(func() time.Time { return now })
	at := func(h, m, sec int) time.Time {
		return stripeDay.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second)
	}
	charge := func(id, pi, key string, amount int64, cur string, minute int, settle int64, rate string) {
		c := stripefake.Charge{ID: id, Amount: amount, Currency: cur, Created: at(10, minute, 4), PaymentIntent: pi,
			Customer: "cus_x", Metadata: map[string]string{}}
		if key != "" {
			c.Metadata["intent_key"] = key
		}
		if settle != 0 {
			c.SettleAmount, c.SettleCurrency, c.ExchangeRate = settle, "usd", rate
		}
		fk.AddCharge(c)
	}
	refund := func(ch string, amount int64, when time.Time) stripefake.Refund {
		now = when
		r, err := fk.AddRefund(ch, amount)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	charge("ch_usd", "pi_usd", "charge:usd", 10000, "usd", 1, 0, "")
	charge("ch_gbp", "pi_gbp", "charge:gbp", 4000, "gbp", 2, 5012, "1.253")
	charge("ch_jpy", "pi_jpy", "charge:jpy", 1500, "jpy", 3, 1002, "0.00668")
	charge("ch_kwd", "pi_kwd", "charge:kwd", 12346, "kwd", 4, 4015, "3.2521")
	charge("ch_part", "pi_part", "charge:partial", 3000, "usd", 5, 0, "")
	refund("ch_part", 1000, at(12, 0, 0))
	charge("ch_full", "pi_full", "charge:full", 2000, "usd", 6, 0, "")
	refund("ch_full", 0, at(12, 30, 0))
	charge("ch_lost", "pi_lost", "charge:lost", 2550, "usd", 7, 0, "")
	charge("ch_won", "pi_won", "charge:won", 6000, "eur", 8, 6500, "1.0833")
	for _, d := range []stripefake.DisputeSpec{
		{ID: "dp_lost", Charge: "ch_lost", Status: "lost", Withdraw: true, Fee: 1500, At: at(16, 0, 0)},
		{ID: "dp_won", Charge: "ch_won", Status: "won", Withdraw: true, Reinstate: true, Fee: 1500, At: at(15, 0, 0)},
	} {
		if _, err := fk.AddDispute(d); err != nil {
			t.Fatal(err)
		}
	}
	charge("ch_cap", "pi_cap", "charge:capture", 4000, "usd", 9, 0, "")
	fk.AddBalanceTxn(stripefake.BalanceTxn{Amount: -1000, Currency: "usd", Created: at(10, 30, 0), Type: "refund",
		Source: "re_cap", SourceCharge: "ch_cap", Category: "partial_capture_reversal"})
	charge("py_ach", "pi_ach", "charge:ach", 1200, "usd", 10, 0, "")
	fk.AddBalanceTxn(stripefake.BalanceTxn{Amount: -1200, Currency: "usd", Created: at(18, 0, 0), Type: "payment_failure_refund",
		Source: "py_ach", Category: "charge_failure"})
	charge("ch_rf", "pi_rf", "charge:refund-failed", 800, "usd", 11, 0, "")
	r := refund("ch_rf", 0, at(13, 0, 0))
	if err := fk.FailRefund(r.ID, at(14, 0, 0)); err != nil {
		t.Fatal(err)
	}
	charge("ch_unknown", "pi_unknown", "", 500, "usd", 59, 0, "")
	for i, c := range []struct {
		cat, typ, src string
		amount        int64
	}{{"fee", "stripe_fee", "", -5}, {"network_cost", "network_cost", "", -12}, {"tax", "tax", "", -2},
		{"payout", "payout", "po_0", -12000}, {"transfer", "transfer", "tr_1", -300}, {"topup", "topup", "tu_1", 500},
		{"risk_reserved_funds", "reserve_transaction", "", -100}, {"other_adjustment", "adjustment", "", 42},
		{"payout_minimum_balance_hold", "payout_minimum_balance_hold", "po_0", -1000}, {"mystery_category", "mystery", "", -100}} {
		fk.AddBalanceTxn(stripefake.BalanceTxn{Amount: c.amount, Currency: "usd", Created: at(22, i, 0), Type: c.typ, Source: c.src,
			Category: c.cat})
	}
	return fk
}

// TestStripePullMatchesReport reconciles the fixture day pulled from the
// API (the fake) and imported from the report, on both engines: the
// findings are the same, to the provider transaction ids.
func TestStripePullMatchesReport(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			fk := stripeFakeDay(t)
			url := fk.Start()
			defer fk.Close()
			client, err := stripe.New(stripe.Config{APIKey: "sk_test_123", BaseURL: url, BalanceTransactions: true, PageSize: 7,
				Clock: func() time.Time { return stripeDay.Add(30 * time.Hour) }})
			if err != nil {
				t.Fatal(err)
			}
			pulled := setup(t, e.New, stripeBooks(t), reconciler.Config{Pullers: map[string]providers.Puller{stripe.Provider: client}})
			api := pulled.run(t, reconciler.Params{})
			if api.PullError != "" {
				t.Fatalf("pull: %s", api.PullError)
			}
			imported := setup(t, e.New, stripeBooks(t), reconciler.Config{})
			importReport(t, imported.store, "balance_change_extended.csv", nil)
			report := imported.run(t, reconciler.Params{NoPull: true})
			if a, r := scenario.Of(api.Findings), scenario.Of(report.Findings); !slices.EqualFunc(a, r, eqExpected) {
				t.Fatalf("pulled:\n%s\nimported:\n%s", lines(a), lines(r))
			}
			if got := kinds(api.Findings); !slices.Equal(got, stripeWant) {
				t.Errorf("pulled findings %q, want %q", got, stripeWant)
			}
			golden.Assert(t, "testdata/stripe/pulled.findings.golden", renderFindings(api.Findings))
		})
	}
}

// TestStripePayoutReportTiming: a payout reconciliation report lists a
// charge with the payout that settles it, days after the charge. A day
// reconciled from such reports alone calls the charges not yet paid out
// missing unless the settlement grace covers the payout delay; with it,
// they are not findings until the grace is over, and a charge that never
// comes still is one.
func TestStripePayoutReportTiming(t *testing.T) {
	t.Parallel()
	const header = "automatic_payout_id,balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,charge_id,payment_intent_id,customer_facing_amount,customer_facing_currency\n"
	first := header + "po_1,txn_a,2024-11-23 10:01:05,usd,100.00,3.20,96.80,charge,ch_usd,ch_usd,pi_usd,100.00,usd\n"
	second := header + "po_2,txn_b,2024-11-23 10:02:05,usd,50.12,1.75,48.37,charge,ch_gbp,ch_gbp,pi_gbp,40.00,gbp\n"
	books := func() *scenario.Day {
		d := stripeBooks(t)
		d.Intents = d.Intents[:2] // charge:usd, paid out first; charge:gbp, paid out a day later
		missing := stripeBooks(t).Intents[11]
		d.Intents = append(d.Intents, missing)
		return d
	}
	imp := func(t *testing.T, s ledger.Store, name, data string) {
		t.Helper()
		_, err := (&statement.Importer{Store: s}).Import(context.Background(), statement.File{Name: name,
			Reader: strings.NewReader(data), Parser: stripe.ReportParser{}, Source: "stripe_statement"})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			// With the default grace, the next day's run calls the charge
			// not yet paid out missing.
			short := setup(t, e.New, books(), reconciler.Config{})
			imp(t, short.store, "po_1.csv", first)
			if got := kinds(short.run(t, reconciler.Params{NoPull: true}).Findings); !slices.Equal(got,
				[]string{"missing_at_provider charge:gbp", "missing_at_provider charge:missing"}) {
				t.Fatalf("2h grace: %q", got)
			}

			// With a grace of the payout delay (here 3 days), it is not.
			day := books()
			b := setup(t, e.New, day, reconciler.Config{})
			b.rec = reconciler.New(b.store, reconciler.Config{Clock: b.clock.Now, Owner: "test",
				Grace: map[string]time.Duration{stripe.Provider: 72 * time.Hour}})
			imp(t, b.store, "po_1.csv", first)
			if got := kinds(b.run(t, reconciler.Params{NoPull: true}).Findings); len(got) != 0 {
				t.Fatalf("72h grace, a day later: %q", got)
			}
			// The next payout's report brings the charge; once the grace is
			// over, only the charge that never came is missing.
			imp(t, b.store, "po_2.csv", second)
			b.clock.Add(3 * 24 * time.Hour)
			if got := kinds(b.run(t, reconciler.Params{NoPull: true}).Findings); !slices.Equal(got, []string{"missing_at_provider charge:missing"}) {
				t.Fatalf("72h grace, after it: %q", got)
			}
		})
	}
}

// TestDisputeLifecycle: a dispute opens a disputed_charge finding (medium
// while the funds are in the balance), escalates it when the funds are
// withdrawn, and resolves it when the dispute is won; never a
// status_mismatch.
func TestDisputeLifecycle(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			day := stripeBooks(t)
			day.Intents = day.Intents[6:7] // charge:lost, USD 25.50 under pi_lost
			b := setup(t, e.New, day, reconciler.Config{})
			usd := func(s string) money.Amount { a, _ := money.Parse(s, "USD"); return a }
			at := stripeDay.Add(10*time.Hour + 7*time.Minute)
			see := func(x ledger.ProviderTxn, ref string) {
				t.Helper()
				x.Provider = stripe.Provider
				if _, err := b.store.UpsertProviderTxn(ctx, x, ledger.Source{Channel: "api", Ref: ref, ReceivedAt: b.clock.Now()}); err != nil {
					t.Fatal(err)
				}
			}
			see(ledger.ProviderTxn{ID: "ch_lost", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: usd("25.50"),
				OccurredAt: at, ProviderRef: "pi_lost"}, "ch_lost")
			dispute := ledger.ProviderTxn{ID: "dp_lost", Type: ledger.TxnDispute, Status: ledger.TxnPending, Amount: usd("25.50"),
				OccurredAt: at.Add(5 * time.Hour), ProviderRef: "pi_lost", LinkedID: "ch_lost"}
			see(dispute, "dp_lost")
			opened := b.run(t, reconciler.Params{NoPull: true})
			if len(opened.Changes) != 1 || !opened.Changes[0].New || opened.Findings[0].Kind != ledger.KindDisputedCharge ||
				opened.Findings[0].Severity != ledger.SeverityMedium {
				t.Fatalf("opened: %+v", opened.Findings)
			}
			dispute.Status = ledger.TxnSucceeded
			see(dispute, "dp_lost withdrawn")
			b.clock.Add(time.Minute)
			withdrawn := b.run(t, reconciler.Params{NoPull: true})
			if len(withdrawn.Changes) != 1 || !withdrawn.Changes[0].Escalated || withdrawn.Findings[0].ID != opened.Findings[0].ID ||
				withdrawn.Findings[0].Severity != ledger.SeverityHigh || !withdrawn.Findings[0].AtRisk.Equal(usd("25.50")) {
				t.Fatalf("withdrawn: %+v", withdrawn.Changes)
			}
			// Lost: nothing comes back; the finding stays open.
			b.clock.Add(time.Minute)
			if lost := b.run(t, reconciler.Params{NoPull: true}); len(lost.Resolved) != 0 || len(lost.Findings) != 1 {
				t.Fatalf("lost: %+v, resolved %+v", lost.Findings, lost.Resolved)
			}
			// Won: the funds are reinstated; the finding resolves.
			see(ledger.ProviderTxn{ID: "txn_back", Type: ledger.TxnDisputeReversal, Status: ledger.TxnSucceeded, Amount: usd("25.50"),
				OccurredAt: at.Add(9 * time.Hour), ProviderRef: "pi_lost", LinkedID: "ch_lost"}, "txn_back")
			b.clock.Add(time.Minute)
			won := b.run(t, reconciler.Params{NoPull: true})
			if len(won.Findings) != 0 || len(won.Resolved) != 1 || won.Resolved[0].ID != opened.Findings[0].ID ||
				won.Resolved[0].ResolvedBy != ledger.ResolvedByRun {
				t.Fatalf("won: findings %+v resolved %+v", won.Findings, won.Resolved)
			}
		})
	}
}

// TestLateDispute: a dispute weeks after the charge is found by the run of
// the dispute's day, though neither the charge nor the intent is in that
// window; the reinstatement weeks later resolves it from its own day's
// run; re-running the charge's day leaves it alone.
func TestLateDispute(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			day := stripeBooks(t)
			day.Intents = day.Intents[6:7] // charge:lost, USD 25.50 under pi_lost
			b := setup(t, e.New, day, reconciler.Config{})
			b.clock.Add(60 * 24 * time.Hour)
			usd := func(s string) money.Amount { a, _ := money.Parse(s, "USD"); return a }
			see := func(x ledger.ProviderTxn) {
				t.Helper()
				x.Provider = stripe.Provider
				if _, err := b.store.UpsertProviderTxn(ctx, x, ledger.Source{Channel: "statement", Ref: x.ID, ReceivedAt: b.clock.Now()}); err != nil {
					t.Fatal(err)
				}
			}
			window := func(days int) reconciler.Params {
				b.clock.Add(time.Minute)
				from := stripeDay.Add(time.Duration(days) * 24 * time.Hour)
				return reconciler.Params{Provider: stripe.Provider, From: from, To: from.Add(24 * time.Hour), NoPull: true}
			}
			see(ledger.ProviderTxn{ID: "ch_lost", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: usd("25.50"),
				OccurredAt: stripeDay.Add(10 * time.Hour), ProviderRef: "pi_lost", Reference: "charge:lost"})
			// The report row of the dispute names the PaymentIntent only.
			see(ledger.ProviderTxn{ID: "dp_lost", Type: ledger.TxnDispute, Status: ledger.TxnSucceeded, Amount: usd("25.50"),
				OccurredAt: stripeDay.Add(20*24*time.Hour + 9*time.Hour), ProviderRef: "pi_lost", LinkedID: "ch_lost"})
			if first := b.run(t, window(0)); len(first.Findings) != 0 {
				t.Fatalf("charge day: %+v", first.Findings)
			}
			opened := b.run(t, window(20))
			if got := kinds(opened.Findings); !slices.Equal(got, []string{"disputed_charge charge:lost"}) {
				t.Fatalf("dispute day: %q", got)
			}
			f := opened.Findings[0]
			if f.Severity != ledger.SeverityHigh || !f.OccurredAt.Equal(stripeDay.Add(20*24*time.Hour+9*time.Hour)) ||
				!slices.Equal(f.ProviderTxnIDs, []string{"ch_lost", "dp_lost"}) {
				t.Fatalf("finding %+v", f)
			}
			// Re-running the charge's day or the dispute's day changes nothing.
			if again := b.run(t, window(0)); len(again.Resolved) != 0 {
				t.Fatalf("charge day again resolved %+v", again.Resolved)
			}
			if again := b.run(t, window(20)); len(again.Resolved) != 0 || len(again.Findings) != 1 || again.Changes[0].New {
				t.Fatalf("dispute day again: %+v", again.Changes)
			}
			// Won, weeks later.
			see(ledger.ProviderTxn{ID: "txn_back", Type: ledger.TxnDisputeReversal, Status: ledger.TxnSucceeded, Amount: usd("25.50"),
				OccurredAt: stripeDay.Add(40*24*time.Hour + 9*time.Hour), ProviderRef: "pi_lost", LinkedID: "ch_lost"})
			won := b.run(t, window(40))
			if len(won.Findings) != 0 || len(won.Resolved) != 1 || won.Resolved[0].ID != f.ID || won.Resolved[0].ResolvedBy != ledger.ResolvedByRun {
				t.Fatalf("won: findings %+v resolved %+v", won.Findings, won.Resolved)
			}
			if got, err := b.store.GetFinding(ctx, f.ID); err != nil || got.Status != ledger.FindingResolved {
				t.Fatalf("stored %+v, %v", got, err)
			}
			// The dispute's day, run again, sees the won dispute too.
			if again := b.run(t, window(20)); len(again.Findings) != 0 {
				t.Fatalf("dispute day after the win: %+v", again.Findings)
			}
		})
	}
}
