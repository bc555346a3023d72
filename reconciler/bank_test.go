package reconciler_test

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/bankaccount"
	"github.com/reconcilehq/reconcile/providers/stripe"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
	"github.com/reconcilehq/reconcile/reconciler"
)

// bankWeek is the week of 9 March 2026 (Monday) of a USD account Stripe
// pays out to, in New York.
var (
	newYork, _ = time.LoadLocation("America/New_York")
	bankDay    = func(n int) time.Time { return time.Date(2026, 3, 9+n, 0, 0, 0, 0, newYork) }
)

func chase() *bankaccount.Account {
	return &bankaccount.Account{Name: "chase", Number: "4401234567", Currency: "USD", Zone: newYork, Format: bankaccount.FormatBAI2,
		Sources: []bankaccount.Source{{Provider: "stripe", Descriptor: regexp.MustCompile(`(?i)STRIPE`), PayoutDays: 2}}}
}

type bankBooks struct {
	t     *testing.T
	store ledger.Store
	n     int
	// bank is the provider credits are booked to; bank:chase when empty.
	bank string
}

func (b *bankBooks) usd(v string) money.Amount {
	a, err := money.Parse(v, "USD")
	if err != nil {
		b.t.Fatal(err)
	}
	return a
}

func (b *bankBooks) txn(t ledger.ProviderTxn) {
	b.t.Helper()
	if _, err := b.store.UpsertProviderTxn(context.Background(), t, ledger.Source{Channel: "test", Ref: t.ID, ReceivedAt: t.OccurredAt}); err != nil {
		b.t.Fatal(err)
	}
}

// payout records a paid Stripe payout arriving on day n with its items
// (id:amount, a negative amount a fee).
func (b *bankBooks) payout(id, amount string, n int, items ...string) {
	b.t.Helper()
	b.accountPayout("", id, amount, n, items...)
}

// accountPayout is payout of a Stripe account.
func (b *bankBooks) accountPayout(account, id, amount string, n int, items ...string) {
	b.t.Helper()
	ctx := context.Background()
	arrival := time.Date(2026, 3, 9+n, 0, 0, 0, 0, time.UTC)
	b.txn(ledger.ProviderTxn{Provider: "stripe", Account: account, ID: id, Type: ledger.TxnPayout, Status: ledger.TxnSucceeded,
		Amount: b.usd(amount), OccurredAt: arrival.Add(-36 * time.Hour)})
	if _, err := b.store.RecordPayouts(ctx, []ledger.Payout{{Provider: "stripe", Account: account, ID: id,
		InitiatedAt: arrival.Add(-36 * time.Hour), ArrivalAt: arrival, Descriptor: "STRIPE"}}); err != nil {
		b.t.Fatal(err)
	}
	var its []ledger.PayoutItem
	for _, it := range items {
		tid, v, _ := strings.Cut(it, ":")
		its = append(its, ledger.PayoutItem{Provider: "stripe", PayoutID: id, TxnID: tid})
		if v == "" {
			continue // not in the books
		}
		typ, amt := ledger.TxnCharge, b.usd(v)
		if amt.Value.IsNegative() {
			typ, amt = ledger.TxnFee, b.usd(amt.Value.Neg().String())
		}
		b.txn(ledger.ProviderTxn{Provider: "stripe", ID: tid, Type: typ, Status: ledger.TxnSucceeded, Amount: amt,
			OccurredAt: arrival.Add(-60 * time.Hour)})
	}
	if _, err := b.store.RecordPayoutItems(ctx, its); err != nil {
		b.t.Fatal(err)
	}
}

// credit books a credit (or with debit, a debit) on day n.
func (b *bankBooks) credit(amount string, n int, ref, text string, debit bool) string {
	b.t.Helper()
	b.n++
	id := fmt.Sprintf("BR%03d@STMT#1.%d", b.n, b.n)
	typ := ledger.TxnBankCredit
	if debit {
		typ = ledger.TxnBankDebit
	}
	bank := cmp.Or(b.bank, "bank:chase")
	b.txn(ledger.ProviderTxn{Provider: bank, ID: id, Type: typ, Status: ledger.TxnSucceeded, Amount: b.usd(amount),
		OccurredAt: bankDay(n), Reference: ref, ProviderRef: ref})
	d := time.Date(2026, 3, 9+n, 0, 0, 0, 0, time.UTC)
	if _, err := b.store.RecordBankEntries(context.Background(), []ledger.BankEntry{{Provider: bank, TxnID: id,
		Statement: "STMT", Index: b.n, BookingDate: d, ValueDate: d, BankRef: fmt.Sprintf("BR%03d", b.n), EndToEndID: ref,
		Text: text, Reversal: debit}}); err != nil {
		b.t.Fatal(err)
	}
	return id
}

// bankKinds renders findings as "kind ids", sorted.
func bankKinds(fs []ledger.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Kind)+" "+strings.Join(f.ProviderTxnIDs, ","))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestBankWeek: a week of a Stripe payout account on both engines: the
// planted findings and nothing else, whether the week is run day by day or
// at once, a second run changing nothing, and a payout that arrives weeks
// later found by its reference, its finding resolved by the run of the day
// it arrived.
func TestBankWeek(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := e.New(t)
			b := &bankBooks{t: t, store: s}
			b.payout("po_A", "100.00", 0, "ch_a1:103.00", "txn_a1:-3.00")
			b.credit("100.00", 0, "po_A", "STRIPE PAYOUT po_A", false)
			// Arrives on the third business day, over the weekend.
			b.payout("po_B", "250.00", 4, "ch_b1:250.00")
			b.credit("250.00", 9, "", "STRIPE TRANSFER", false)
			// Two payouts in one credit.
			b.payout("po_C", "80.00", 2)
			b.payout("po_D", "20.00", 2)
			b.credit("100.00", 2, "", "STRIPE", false)
			// Arrives short.
			b.payout("po_E", "300.00", 2)
			b.credit("290.00", 3, "po_E", "STRIPE PAYOUT po_E", false)
			// Never arrives.
			b.payout("po_F", "50.00", 3)
			// Arrives twice, one posting reversed; then arrives twice.
			b.payout("po_G", "60.00", 3)
			b.credit("60.00", 3, "po_G", "STRIPE PAYOUT po_G", false)
			b.credit("60.00", 3, "po_G", "STRIPE PAYOUT po_G", false)
			b.credit("60.00", 4, "po_G", "REVERSAL DUPLICATE POSTING BR006", true)
			b.payout("po_H", "40.00", 1)
			b.credit("40.00", 1, "po_H", "STRIPE PAYOUT po_H", false)
			b.credit("40.00", 2, "po_H", "STRIPE PAYOUT po_H", false)
			// A payout whose items do not add up to it.
			b.payout("po_I", "97.00", 1, "ch_i1:100.00", "txn_i1:-3.00", "ch_i2")
			b.credit("97.00", 1, "po_I", "STRIPE PAYOUT po_I", false)
			// A credit nobody explains.
			b.credit("777.00", 3, "", "WIRE FROM ACME LTD", false)
			// A charge of Monday in no payout, due Wednesday.
			b.txn(ledger.ProviderTxn{Provider: "stripe", ID: "ch_np", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
				Amount: b.usd("12.00"), OccurredAt: bankDay(0).Add(10 * time.Hour)})

			now := bankDay(14)
			cfg := reconciler.Config{Clock: func() time.Time { return now }, Owner: "test",
				Banks: map[string]*bankaccount.Account{"bank:chase": chase()}}
			rec := reconciler.New(s, cfg)
			run := func(from, to time.Time) *reconciler.Outcome {
				t.Helper()
				out, err := rec.Run(ctx, reconciler.Params{Provider: "bank:chase", From: from.UTC(), To: to.UTC(), NoPull: true})
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			want := strings.Join([]string{
				"not_paid_out stripe/ch_np",
				"payout_amount_mismatch BR004@STMT#1.4,stripe/po_E",
				"payout_composition_mismatch stripe/ch_i2,stripe/po_I",
				"payout_duplicated_at_bank BR008@STMT#1.8,BR009@STMT#1.9,stripe/po_H",
				"payout_missing_at_bank stripe/po_F",
				"unexplained_bank_credit BR011@STMT#1.11",
			}, "\n")
			// A run judges the payouts of other windows its credits link
			// too: each finding once.
			var all []ledger.Finding
			for d := range 7 {
				out := run(bankDay(d), bankDay(d+1))
				for _, f := range out.Findings {
					if !slices.ContainsFunc(all, func(g ledger.Finding) bool { return g.ID == f.ID }) {
						all = append(all, f)
					}
				}
				if out.Bank == nil {
					t.Fatal("not a bank run")
				}
			}
			if got := bankKinds(all); got != want {
				t.Errorf("day by day:\n%s\nwant\n%s", got, want)
			}
			week := run(bankDay(0), bankDay(7))
			if got := bankKinds(week.Findings); got != want {
				t.Errorf("the week at once:\n%s\nwant\n%s", got, want)
			}
			if week.Run.Counts.New != 0 || week.Run.Counts.Resolved != 0 {
				t.Errorf("the week after its days: %+v", week.Run.Counts)
			}
			if week.Bank.Payouts != 9 || week.Bank.Arrived != 7 {
				t.Errorf("bank stats %+v", week.Bank)
			}

			// po_F arrives a month later: found by its reference, and its
			// missing finding resolved by the run of that day.
			now = time.Date(2026, 4, 20, 12, 0, 0, 0, newYork)
			b.credit("50.00", 38, "po_F", "STRIPE PAYOUT po_F", false)
			late := run(bankDay(38), bankDay(39))
			if late.Bank.LatePayouts != 1 || len(late.Findings) != 0 || len(late.Resolved) != 1 ||
				late.Resolved[0].Kind != ledger.KindPayoutMissingAtBank || !strings.HasPrefix(late.Resolved[0].Note, "arrived BR012 on 2026-04-16") {
				t.Fatalf("late arrival: %+v findings %s resolved %+v", late.Bank, bankKinds(late.Findings), late.Resolved)
			}
			// And the run of po_F's own day agrees, looking the credit up.
			again := run(bankDay(3), bankDay(4))
			if strings.Contains(bankKinds(again.Findings), "payout_missing_at_bank") || again.Bank.LateCredits != 1 {
				t.Errorf("po_F's day again: %+v %s", again.Bank, bankKinds(again.Findings))
			}
			open, err := s.ListFindings(ctx, ledger.FindingFilter{Provider: "bank:chase", Statuses: []ledger.FindingStatus{ledger.FindingOpen}})
			if err != nil || len(open) != 5 {
				t.Errorf("open findings: %s, %v", bankKinds(open), err)
			}
		})
	}
}

// TestBankPullsAnAccountsPayouts: on both engines, a run of a connected
// account's bank account pulls that account's payouts through the
// account's own payout puller (a fake Stripe of its own here, so that the
// platform's puller cannot stand in for it), records them in the account,
// and matches them to the bank's credits; the platform's payouts stay out
// of the account.
func TestBankPullsAnAccountsPayouts(t *testing.T) {
	t.Parallel()
	arrival := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC) // bank day 1
	// fake is a Stripe holding one charge (net of its fee, net) paid out
	// in payout id on bank day 1.
	fake := func(t *testing.T, id string, gross int64) providers.PayoutPuller {
		t.Helper()
		fk := stripefake.New(func() time.Time { return bankDay(14) })
		url := fk.Start()
		t.Cleanup(fk.Close)
		ch := fk.AddCharge(stripefake.Charge{ID: "ch_" + id, Amount: gross, Currency: "usd", Created: arrival.Add(-60 * time.Hour)})
		if _, err := fk.AddPayout(stripefake.PayoutSpec{ID: id, Created: arrival.Add(-36 * time.Hour), ArrivalDate: arrival,
			Descriptor: "STRIPE", BalanceTxns: []string{ch.BalanceTxn}}); err != nil {
			t.Fatal(err)
		}
		c, err := stripe.New(stripe.Config{APIKey: "sk_test_123", BaseURL: url, Clock: func() time.Time { return bankDay(14) }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := e.New(t)
			b := &bankBooks{t: t, store: s, bank: "bank:conn"}
			b.credit("70.00", 1, "po_X", "STRIPE PAYOUT po_X", false)
			// The charge the payout carries, as the account's own run
			// pulled it.
			b.txn(ledger.ProviderTxn{Provider: "stripe", Account: "acct_1", ID: "ch_po_X", Type: ledger.TxnCharge,
				Status: ledger.TxnSucceeded, Amount: b.usd("72.09"), OccurredAt: arrival.Add(-60 * time.Hour)})
			conn := chase()
			conn.Name, conn.Number = "conn", "5500000001"
			conn.Sources[0].Account = "acct_1"
			rec := reconciler.New(s, reconciler.Config{Clock: func() time.Time { return bankDay(14) }, Owner: "test",
				Banks: map[string]*bankaccount.Account{"bank:conn": conn},
				// 72.09 less its fee of 2.09 is 70.00.
				PayoutPullers: map[string]providers.PayoutPuller{"stripe": fake(t, "po_P", 5000), "stripe@acct_1": fake(t, "po_X", 7209)}})
			out, err := rec.Run(ctx, reconciler.Params{Provider: "bank:conn", From: bankDay(0).UTC(), To: bankDay(3).UTC()})
			if err != nil {
				t.Fatal(err)
			}
			if out.PullError != "" {
				t.Fatalf("pull: %s", out.PullError)
			}
			if got := bankKinds(out.Findings); got != "" || out.Bank.Payouts != 1 || out.Bank.Arrived != 1 {
				t.Errorf("%+v, findings:\n%s\nwant the account's payout arrived and no findings", out.Bank, got)
			}
			window := ledger.PayoutLookup{Provider: "stripe", From: bankDay(-7), To: bankDay(7)}
			for acct, want := range map[string]string{"acct_1": "po_X", "": ""} {
				window.Accounts = []string{acct}
				ps, err := s.FindPayouts(ctx, window)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, p := range ps {
					got = append(got, p.ID)
				}
				if strings.Join(got, ",") != want {
					t.Errorf("payouts of account %q: %q, want %q", acct, got, want)
				}
			}
			x, err := s.GetProviderTxn(ctx, "stripe", "po_X")
			if err != nil || x.Account != "acct_1" {
				t.Errorf("po_X in account %q (%v), want acct_1", x.Account, err)
			}
		})
	}
}

// TestBankOfAConnectedAccount: a Stripe Connect platform's bank account
// and a connected account's bank account, on both engines. Each expects
// the payouts of its own Stripe account only: the connected account's
// payout is never missing at the platform's bank, and is matched at its
// own, by time or by its reference.
func TestBankOfAConnectedAccount(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := e.New(t)
			b := &bankBooks{t: t, store: s}
			b.payout("po_A", "100.00", 1)
			b.credit("100.00", 1, "po_A", "STRIPE PAYOUT po_A", false)
			b.accountPayout("acct_1", "po_X", "70.00", 1)
			b.accountPayout("acct_1", "po_Y", "30.00", 2)
			b.bank = "bank:conn"
			b.credit("70.00", 1, "", "STRIPE TRANSFER", false)
			b.credit("30.00", 4, "po_Y", "STRIPE PAYOUT po_Y", false) // late: found by its reference
			conn := chase()
			conn.Name, conn.Number = "conn", "5500000001"
			conn.Sources[0].Account = "acct_1"
			rec := reconciler.New(s, reconciler.Config{Clock: func() time.Time { return bankDay(14) }, Owner: "test",
				Banks: map[string]*bankaccount.Account{"bank:chase": chase(), "bank:conn": conn}})
			for bank, want := range map[string]string{"bank:chase": "", "bank:conn": ""} {
				out, err := rec.Run(ctx, reconciler.Params{Provider: bank, From: bankDay(0).UTC(), To: bankDay(3).UTC(), NoPull: true})
				if err != nil {
					t.Fatal(err)
				}
				if got := bankKinds(out.Findings); got != want {
					t.Errorf("%s: findings\n%s\nwant\n%s", bank, got, want)
				}
				if bank == "bank:conn" && (out.Bank.Payouts != 2 || out.Bank.Arrived != 2) {
					t.Errorf("%s: %+v", bank, out.Bank)
				}
				if bank == "bank:chase" && (out.Bank.Payouts != 1 || out.Bank.Arrived != 1) {
					t.Errorf("%s: %+v", bank, out.Bank)
				}
			}
		})
	}
}
