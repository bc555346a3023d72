package reconciler_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/reconciler"
)

// daily reconciles a provider's days as the scheduler does: each day's
// window once the day is over (with its grace), then again as a lookback.
type daily struct {
	t        *testing.T
	store    ledger.Store
	clock    *clock
	rec      *reconciler.Reconciler
	provider string
	zone     *time.Location
}

func newDaily(t *testing.T, newStore func(testing.TB) ledger.Store, provider string, zone *time.Location, start time.Time) *daily {
	s := newStore(t)
	c := &clock{t: start}
	rec := reconciler.New(s, reconciler.Config{Clock: c.Now, Owner: "test", Grace: map[string]time.Duration{provider: 30 * time.Minute},
		Zones: map[string]*time.Location{provider: zone}})
	return &daily{t: t, store: s, clock: c, rec: rec, provider: provider, zone: zone}
}

// run reconciles the day of date (YYYY-MM-DD in the zone), the clock set to
// the end of that day plus an hour, or later when it is later already.
func (d *daily) run(date string) *reconciler.Outcome {
	d.t.Helper()
	from, err := time.ParseInLocation("2006-01-02", date, d.zone)
	if err != nil {
		d.t.Fatal(err)
	}
	to := from.AddDate(0, 0, 1)
	if at := to.Add(time.Hour); d.clock.Now().Before(at) {
		d.clock.Add(at.Sub(d.clock.Now()))
	} else {
		d.clock.Add(time.Minute)
	}
	out, err := d.rec.Run(context.Background(), reconciler.Params{Provider: d.provider, From: from, To: to, NoPull: true})
	if err != nil {
		d.t.Fatal(err)
	}
	return out
}

func (d *daily) intent(p ledger.IntentParams, state ledger.State, at string, refs ...string) {
	d.t.Helper()
	created := d.at(at)
	p.Provider = d.provider
	row := ledger.ImportIntent{NewIntent: ledger.NewIntent{IntentParams: p, State: state, CreatedAt: created}, Line: 1, ProviderRefs: refs}
	err := d.store.InTx(context.Background(), func(tx ledger.Tx) error {
		res, err := tx.ImportIntents(context.Background(), ledger.ImportIntentsParams{Rows: slices.Values([]ledger.ImportIntent{row})})
		if err == nil && len(res.Refused) > 0 {
			err = res.Refused[0].Err
		}
		return err
	})
	if err != nil {
		d.t.Fatal(err)
	}
}

func (d *daily) txn(x ledger.ProviderTxn, at string) {
	d.t.Helper()
	x.Provider, x.OccurredAt = d.provider, d.at(at)
	if _, err := d.store.UpsertProviderTxn(context.Background(), x, ledger.Source{Channel: "statement", Ref: x.ID, ReceivedAt: x.OccurredAt}); err != nil {
		d.t.Fatal(err)
	}
}

func (d *daily) at(s string) time.Time {
	d.t.Helper()
	at, err := time.ParseInLocation("2006-01-02 15:04", s, d.zone)
	if err != nil {
		d.t.Fatal(err)
	}
	return at
}

// open lists the open findings as "kind intent [txns]".
func (d *daily) open() []string {
	d.t.Helper()
	fs, err := d.store.ListFindings(context.Background(), ledger.FindingFilter{Provider: d.provider,
		Statuses: []ledger.FindingStatus{ledger.FindingOpen, ledger.FindingAcknowledged}})
	if err != nil {
		d.t.Fatal(err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s [%s]", f.Kind, f.IntentKey, strings.Join(f.ProviderTxnIDs, ",")))
	}
	slices.Sort(out)
	return out
}

func (d *daily) history(id string) string {
	d.t.Helper()
	evs, err := d.store.FindingHistory(context.Background(), id)
	if err != nil {
		d.t.Fatal(err)
	}
	var parts []string
	for _, ev := range evs {
		parts = append(parts, string(ev.Action)+": "+ev.Note)
	}
	return strings.Join(parts, " | ")
}

func kesAmount(t *testing.T, s string) money.Amount {
	a, err := money.Parse(s, "KES")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestMoneyAcrossDays: daily windows of ordinary money that crosses days
// and arrives in parts raise nothing that is not so, and what an earlier
// day raised for want of later evidence is resolved by the day that brings
// it, with the reason, on both engines; re-running any day changes nothing.
func TestMoneyAcrossDays(t *testing.T) {
	t.Parallel()
	eat := time.FixedZone("EAT", 3*3600)
	for _, e := range dbtest.Engines() {
		t.Run(e.Name+"/invoice paid two days later", func(t *testing.T) {
			t.Parallel()
			d := newDaily(t, e.New, "mpesa", eat, time.Date(2026, 3, 12, 0, 0, 0, 0, eat))
			d.intent(ledger.IntentParams{Key: "inv:3001", Amount: kesAmount(t, "1500"), Reference: "INV3001"}, ledger.StateSucceeded, "2026-03-12 09:00")
			out := d.run("2026-03-12")
			missing := ledger.FindingID(ledger.KindMissingAtProvider, "inv:3001", nil)
			if len(out.Findings) != 1 || out.Findings[0].ID != missing {
				t.Fatalf("day 12: %+v", out.Findings)
			}
			d.run("2026-03-13")
			d.txn(ledger.ProviderTxn{ID: "SCG1AA0001", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: kesAmount(t, "1500"),
				Reference: "INV3001", Counterparty: "2547****0342 - CHEBET"}, "2026-03-14 10:00")
			out = d.run("2026-03-14")
			if len(out.Findings) != 0 || len(out.Resolved) != 1 || out.Resolved[0].ID != missing {
				t.Fatalf("day 14: findings %+v, resolved %+v", out.Findings, out.Resolved)
			}
			if h := d.history(missing); !strings.Contains(h, "auto_resolved: paid 2026-03-14 10:00 EAT (+03:00), SCG1AA0001, 2 days after the intent") {
				t.Fatalf("history: %s", h)
			}
			// Every day again, in any order: nothing comes back.
			for _, day := range []string{"2026-03-12", "2026-03-14", "2026-03-13", "2026-03-12"} {
				if out := d.run(day); len(out.Findings) != 0 {
					t.Fatalf("re-run of %s: %+v", day, out.Findings)
				}
			}
			if open := d.open(); len(open) != 0 {
				t.Fatalf("open: %q", open)
			}
		})
		t.Run(e.Name+"/invoice paid in two parts across days", func(t *testing.T) {
			t.Parallel()
			d := newDaily(t, e.New, "mpesa", eat, time.Date(2026, 3, 12, 0, 0, 0, 0, eat))
			d.intent(ledger.IntentParams{Key: "inv:2001", Kind: ledger.IntentExpected, Amount: kesAmount(t, "1500"), Reference: "INV2001",
				DueAt: d.at("2026-03-20 00:00")}, ledger.StatePending, "2026-03-12 09:00")
			d.txn(ledger.ProviderTxn{ID: "SCG1AA0002", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: kesAmount(t, "1000"),
				Reference: "INV2001"}, "2026-03-12 10:00")
			out := d.run("2026-03-12")
			partial := ledger.FindingID(ledger.KindPartiallyPaid, "inv:2001", nil)
			if len(out.Findings) != 1 || out.Findings[0].ID != partial || !out.Findings[0].AtRisk.Value.IsZero() {
				t.Fatalf("day 12: %+v", out.Findings)
			}
			d.txn(ledger.ProviderTxn{ID: "SCG1AA0003", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: kesAmount(t, "500"),
				Reference: "inv-2001"}, "2026-03-13 12:00")
			out = d.run("2026-03-13")
			if len(out.Findings) != 0 || len(out.Resolved) != 1 || out.Resolved[0].ID != partial {
				t.Fatalf("day 13: findings %+v, resolved %+v", out.Findings, out.Resolved)
			}
			if h := d.history(partial); !strings.Contains(h, "paid in 2 parts: KES 1,000.00 on 2026-03-12 10:00 EAT (+03:00) (SCG1AA0002), KES 500.00 on 2026-03-13 12:00 EAT (+03:00) (SCG1AA0003); the last 1 day after the intent") {
				t.Fatalf("history: %s", h)
			}
			for _, day := range []string{"2026-03-12", "2026-03-13"} {
				if out := d.run(day); len(out.Findings) != 0 {
					t.Fatalf("re-run of %s: %+v", day, out.Findings)
				}
			}
		})
		t.Run(e.Name+"/refund of an earlier day's charge", func(t *testing.T) {
			t.Parallel()
			d := newDaily(t, e.New, "stripe", time.UTC, time.Date(2026, 11, 7, 0, 0, 0, 0, time.UTC))
			usd := func(s string) money.Amount {
				a, err := money.Parse(s, "USD")
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			d.intent(ledger.IntentParams{Key: "order:4471", Amount: usd("25.00")}, ledger.StateSucceeded, "2026-11-07 10:00", "pi_1")
			d.txn(ledger.ProviderTxn{ID: "ch_1", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: usd("25.00"),
				ProviderRef: "pi_1", Reference: "order:4471"}, "2026-11-07 10:01")
			if out := d.run("2026-11-07"); len(out.Findings) != 0 {
				t.Fatalf("day 7: %+v", out.Findings)
			}
			d.txn(ledger.ProviderTxn{ID: "re_1", Type: ledger.TxnRefund, Status: ledger.TxnSucceeded, Amount: usd("25.00"),
				ProviderRef: "pi_1", Reference: "order:4471", LinkedID: "ch_1"}, "2026-11-10 15:00")
			d.run("2026-11-08")
			out := d.run("2026-11-10")
			if len(out.Findings) != 1 || out.Findings[0].Kind != ledger.KindUnrecordedRefund || out.Findings[0].IntentKey != "order:4471" {
				t.Fatalf("day 10: %+v", out.Findings)
			}
			if !strings.Contains(out.Findings[0].Detail, `of ch_1 of charge intent "order:4471"`) {
				t.Fatalf("detail %q", out.Findings[0].Detail)
			}
			// The charge's day judges the charge, refunded in full: paid.
			if out := d.run("2026-11-07"); len(out.Findings) != 0 {
				t.Fatalf("day 7 again: %+v", out.Findings)
			}
		})
		t.Run(e.Name+"/a duplicate on a later day, refunded a week later", func(t *testing.T) {
			t.Parallel()
			d := newDaily(t, e.New, "mpesa", eat, time.Date(2026, 3, 12, 0, 0, 0, 0, eat))
			d.intent(ledger.IntentParams{Key: "order:9", Amount: kesAmount(t, "700"), Reference: "ORD9"}, ledger.StateSucceeded, "2026-03-12 09:00", "ws_CO_9")
			d.txn(ledger.ProviderTxn{ID: "SCG9A", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: kesAmount(t, "700"),
				ProviderRef: "ws_CO_9", Reference: "ORD9"}, "2026-03-12 09:01")
			d.txn(ledger.ProviderTxn{ID: "SCG9B", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: kesAmount(t, "700"),
				Reference: "ORD9"}, "2026-03-14 08:00")
			d.run("2026-03-12")
			out := d.run("2026-03-14")
			dup := ledger.FindingID(ledger.KindDuplicateCharge, "order:9", []string{"SCG9A", "SCG9B"})
			if len(out.Findings) != 1 || out.Findings[0].ID != dup || out.Findings[0].OccurredAt.Day() != 12 {
				t.Fatalf("day 14: %+v", out.Findings)
			}
			// The intent's day, re-run, cannot see the duplicate of the
			// 14th but does not resolve it either.
			d.run("2026-03-12")
			if open := d.open(); !slices.Equal(open, []string{"duplicate_charge order:9 [SCG9A,SCG9B]"}) {
				t.Fatalf("open after re-running the 12th: %q", open)
			}
			d.txn(ledger.ProviderTxn{ID: "RV9", Type: ledger.TxnReversal, Status: ledger.TxnSucceeded, Amount: kesAmount(t, "700"),
				LinkedID: "SCG9B"}, "2026-03-21 11:00")
			out = d.run("2026-03-21")
			if len(out.Findings) != 0 || len(out.Resolved) != 1 || out.Resolved[0].ID != dup {
				t.Fatalf("day 21: findings %+v resolved %+v", out.Findings, out.Resolved)
			}
			if h := d.history(dup); !strings.Contains(h, "KES 700.00 given back on 2026-03-21 11:00 EAT (+03:00) (RV9)") {
				t.Fatalf("history: %s", h)
			}
			for _, day := range []string{"2026-03-12", "2026-03-14", "2026-03-21"} {
				if out := d.run(day); len(out.Findings) != 0 {
					t.Fatalf("re-run of %s: %+v", day, out.Findings)
				}
			}
		})
		t.Run(e.Name+"/a suggestion across days", func(t *testing.T) {
			t.Parallel()
			d := newDaily(t, e.New, "mpesa", eat, time.Date(2026, 3, 12, 0, 0, 0, 0, eat))
			d.intent(ledger.IntentParams{Key: "inv:5001", Amount: kesAmount(t, "2500"), Reference: "INV5001", Customer: "0712340342"},
				ledger.StateSucceeded, "2026-03-12 09:00")
			d.run("2026-03-12")
			missing := ledger.FindingID(ledger.KindMissingAtProvider, "inv:5001", nil)
			// Paid two days later under a mistyped account number.
			d.txn(ledger.ProviderTxn{ID: "SCG5", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: kesAmount(t, "2500"),
				Reference: "INV5010", Counterparty: "2547****0342 - CHEBET"}, "2026-03-14 10:00")
			out := d.run("2026-03-14")
			if len(out.Findings) != 1 || out.Findings[0].Kind != ledger.KindUnknownCharge {
				t.Fatalf("day 14: %+v", out.Findings)
			}
			s := out.Findings[0].Suggestion
			if s.FindingID != missing || s.IntentKey != "inv:5001" || !strings.Contains(s.Reason, "one typo") || !strings.Contains(s.Reason, "same customer 2547****0342") {
				t.Fatalf("suggestion of the unknown charge: %+v", s)
			}
			f, err := d.store.GetFinding(context.Background(), missing)
			if err != nil || f.Suggestion.FindingID != out.Findings[0].ID || f.Suggestion.TxnID != "SCG5" {
				t.Fatalf("suggestion of the missing intent: %+v, %v", f.Suggestion, err)
			}
		})
	}
}
