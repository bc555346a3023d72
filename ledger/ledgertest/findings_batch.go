package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// exerciseFindingsBatch drives two stores through the same runs, one with
// UpsertFindings and one with UpsertFinding per finding: every change and
// every stored finding must be the same.
func exerciseFindingsBatch(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	batched, single := newStore(t), newStore(t)
	finding := func(kind ledger.Kind, key string, sev ledger.Severity, atRisk string, txns ...string) ledger.Finding {
		return ledger.Finding{ID: ledger.FindingID(kind, key, txns), Kind: kind, Severity: sev, Provider: "mpesa", IntentKey: key,
			ProviderTxnIDs: txns, Expected: kes(t, "100"), Actual: kes(t, "150.50"), AtRisk: kes(t, atRisk),
			Counterparty: "2547****0845", Detail: "detail of " + key, OccurredAt: T0.Add(time.Minute)}
	}
	dup := finding(ledger.KindDuplicateCharge, "k1", ledger.SeverityHigh, "100", "R2", "R1")
	miss := finding(ledger.KindMissingAtProvider, "k2", ledger.SeverityMedium, "100")
	miss.Actual = money.Amount{} // no amount: stored as NULL
	amt := finding(ledger.KindAmountMismatch, "k3", ledger.SeverityMedium, "0.50", "R3")
	unknown := finding(ledger.KindUnknownCharge, "", ledger.SeverityMedium, "150.50", "R4")
	stuck := finding(ledger.KindStuckIntent, "k5", ledger.SeverityLow, "100")
	late := finding(ledger.KindStatusMismatch, "k6", ledger.SeverityHigh, "150.50", "R6")
	grow := func(f ledger.Finding, atRisk string) ledger.Finding { f.AtRisk = kes(t, atRisk); return f }
	worse := func(f ledger.Finding) ledger.Finding { f.Severity = ledger.SeverityHigh; return f }

	step := func(name string, fs []ledger.Finding, runID int64, now time.Time) {
		t.Helper()
		got, err := batched.UpsertFindings(ctx, fs, runID, now)
		if err != nil {
			t.Fatalf("%s: UpsertFindings: %v", name, err)
		}
		var want []ledger.FindingChange
		for _, f := range fs {
			ch, err := single.UpsertFinding(ctx, f, runID, now)
			if err != nil {
				t.Fatalf("%s: UpsertFinding: %v", name, err)
			}
			want = append(want, ch)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d changes, want %d", name, len(got), len(want))
		}
		for i := range want {
			if g, w := renderChange(got[i]), renderChange(want[i]); g != w {
				t.Fatalf("%s: change %d:\n got %s\nwant %s", name, i, g, w)
			}
		}
	}
	both := func(fn func(s ledger.Store) error) {
		t.Helper()
		for _, s := range []ledger.Store{batched, single} {
			if err := fn(s); err != nil {
				t.Fatal(err)
			}
		}
	}

	step("first run", []ledger.Finding{dup, miss, amt, unknown}, 1, T0)
	both(func(s ledger.Store) error {
		_, err := s.UpdateFinding(ctx, ledger.FindingUpdate{ID: amt.ID, To: ledger.FindingAcknowledged, Note: "looking", Now: T0})
		if err == nil {
			_, err = s.UpdateFinding(ctx, ledger.FindingUpdate{ID: unknown.ID, To: ledger.FindingResolved, Note: "refunded", Now: T0})
		}
		return err
	})
	// Seen again, escalated, held by a person's resolution, new.
	step("second run", []ledger.Finding{stuck, dup, grow(miss, "200"), unknown}, 2, T0.Add(time.Hour))
	both(func(s ledger.Store) error {
		_, err := s.ResolveUnseen(ctx, ledger.ResolveUnseenParams{Provider: "mpesa", From: T0.Add(-time.Hour), To: T0.Add(time.Hour),
			SeenSince: T0.Add(time.Hour), Note: "no longer seen", Now: T0.Add(time.Hour)})
		return err
	})
	// Resolved by a run: reopens; resolved by a person and escalated: reopens.
	step("third run", []ledger.Finding{amt, worse(unknown), late, dup}, 3, T0.Add(2*time.Hour))
	// The same finding twice in one batch: the second sees the first.
	step("repeated", []ledger.Finding{stuck, grow(stuck, "300"), dup}, 4, T0.Add(3*time.Hour))
	step("empty", nil, 5, T0.Add(4*time.Hour))

	// More than one statement's worth.
	var many []ledger.Finding
	bulk := bulkFindings(t, batched)
	for i := range bulk {
		f := finding(ledger.KindMissingAtProvider, fmt.Sprintf("bulk-%04d", i), ledger.SeverityMedium, "100")
		many = append(many, f)
	}
	step("many", many, 6, T0.Add(5*time.Hour))
	step("many again", append(slices.Clone(many[:10]), grow(many[10], "101")), 7, T0.Add(6*time.Hour))

	// Inside a transaction, rolled back: nothing changes.
	boom := errors.New("boom")
	err := batched.InTx(ctx, func(tx ledger.Tx) error {
		chs, err := tx.UpsertFindings(ctx, []ledger.Finding{grow(late, "999"), finding(ledger.KindStuckIntent, "k9", ledger.SeverityLow, "1")}, 8, T0.Add(7*time.Hour))
		if err != nil || len(chs) != 2 || !chs[0].Escalated || !chs[1].New {
			t.Errorf("in tx: %+v, %v", chs, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}

	lists := [2][]ledger.Finding{}
	for i, s := range []ledger.Store{batched, single} {
		fs, err := s.ListFindings(ctx, ledger.FindingFilter{Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		lists[i] = fs
	}
	if len(lists[0]) != len(lists[1]) || len(lists[0]) != 6+bulk {
		t.Fatalf("stored %d and %d findings", len(lists[0]), len(lists[1]))
	}
	for i := range lists[0] {
		if g, w := renderFinding(lists[0][i]), renderFinding(lists[1][i]); g != w {
			t.Fatalf("stored:\n got %s\nwant %s", g, w)
		}
	}
	// The same history, event for event: opened, escalated, reopened and
	// resolved by the runs, acknowledged and resolved by hand. Only changes
	// write events: seen again unchanged writes none. (The bulk findings
	// are sampled: reading 5,000 histories twice is slow under -race.)
	events := 0
	for _, f := range lists[0] {
		if strings.HasPrefix(f.IntentKey, "bulk-") && f.IntentKey != "bulk-0000" && f.IntentKey != "bulk-0010" {
			continue
		}
		g, w := mustHistory(t, batched, f.ID), mustHistory(t, single, f.ID)
		if g != w {
			t.Fatalf("history of %s:\n got %s\nwant %s", f.ID, g, w)
		}
		events += strings.Count(g, "\n")
	}
	// 6+2 opened; 2 by hand; amt auto-resolved then reopened; unknown
	// reopened and escalated; miss, stuck and bulk-0010 escalated.
	if want := 8 + 2 + 2 + 2 + 3; events != want {
		t.Errorf("%d history events, want %d", events, want)
	}
}

func renderChange(c ledger.FindingChange) string {
	return fmt.Sprintf("new=%v reopened=%v escalated=%v\n  prev %s\n  cur  %s", c.New, c.Reopened, c.Escalated,
		renderFinding(c.Previous), renderFinding(c.Finding))
}

// renderFinding shows every field, amounts with their exact decimal digits.
func renderFinding(f ledger.Finding) string {
	a := func(m money.Amount) string { return m.Currency + " " + m.Value.String() }
	ts := func(t time.Time) string { return t.Format(time.RFC3339Nano) }
	return fmt.Sprintf("%s %s %s %s %q %v exp=%s act=%s risk=%s cp=%q detail=%q at=%s %s first=%s last=%s runs=%d..%d ack=%s res=%s by=%q note=%q",
		f.ID, f.Kind, f.Severity, f.Provider, f.IntentKey, f.ProviderTxnIDs, a(f.Expected), a(f.Actual), a(f.AtRisk),
		f.Counterparty, f.Detail, ts(f.OccurredAt), f.Status, ts(f.FirstSeenAt), ts(f.LastSeenAt), f.FirstRunID, f.LastRunID,
		ts(f.AcknowledgedAt), ts(f.ResolvedAt), f.ResolvedBy, f.Note) + fmt.Sprintf(" acked_by=%q resolver=%q", f.AcknowledgedBy, f.Resolver)
}

// bulkFindings is how many findings the batch exercise writes at once:
// more than one PostgreSQL statement's worth (5,000). SQLite writes them
// one after the other, so under the race detector, which slows it some
// twentyfold, a thousand show the same.
func bulkFindings(t *testing.T, s ledger.Store) int {
	var engine ledger.Engine
	if err := s.InTx(context.Background(), func(tx ledger.Tx) error { engine = tx.Engine(); return nil }); err != nil {
		t.Fatal(err)
	}
	if underRace && engine == ledger.EngineSQLite {
		return 1003
	}
	return 5003
}
