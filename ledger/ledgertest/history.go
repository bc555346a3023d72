package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// renderHistory shows a history one event a line, without the event ids.
func renderHistory(evs []ledger.HistoryEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "%s %s by %s via %s run=%d note=%q\n", ev.At.Format(time.RFC3339), ev.Action, ev.Actor, ev.Surface, ev.RunID, ev.Note)
	}
	return b.String()
}

func mustHistory(t *testing.T, s ledger.Executor, id string) string {
	t.Helper()
	evs, err := s.FindingHistory(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return renderHistory(evs)
}

func exerciseHistory(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	from, to := T0.Truncate(24*time.Hour), T0.Truncate(24*time.Hour).Add(24*time.Hour)
	dup := ledger.Finding{
		ID: ledger.FindingID(ledger.KindDuplicateCharge, "k1", []string{"R1", "R2"}), Kind: ledger.KindDuplicateCharge,
		Severity: ledger.SeverityMedium, Provider: "mpesa", IntentKey: "k1", ProviderTxnIDs: []string{"R1", "R2"},
		Expected: kes(t, "100"), Actual: kes(t, "200"), AtRisk: kes(t, "100"), OccurredAt: T0,
	}
	alice := ledger.Actor{Name: "alice", Surface: ledger.SurfaceCLI}
	bob := ledger.Actor{Name: "bob@example.com", Surface: ledger.SurfaceWeb}
	carol := ledger.Actor{Name: "carol", Surface: ledger.SurfaceAPI}
	at := func(h int) time.Time { return T0.Add(time.Duration(h) * time.Hour) }

	if _, err := s.UpsertFinding(ctx, dup, 1, at(0)); err != nil {
		t.Fatal(err)
	}
	// Seen again unchanged: no event. Seen worse: escalated.
	if _, err := s.UpsertFinding(ctx, dup, 2, at(1)); err != nil {
		t.Fatal(err)
	}
	worse := dup
	worse.Severity, worse.AtRisk = ledger.SeverityHigh, kes(t, "150")
	if _, err := s.UpsertFinding(ctx, worse, 2, at(1)); err != nil {
		t.Fatal(err)
	}
	f, err := s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingAcknowledged, Note: "looking", Now: at(2), Actor: alice})
	if err != nil || f.AcknowledgedBy != "alice" || f.Note != "looking" {
		t.Fatalf("ack = %+v, %v", f, err)
	}
	// A second acknowledgement without a note keeps the first note.
	f, err = s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingAcknowledged, Now: at(2), Actor: bob})
	if err != nil || f.AcknowledgedBy != "bob@example.com" || f.Note != "looking" {
		t.Fatalf("second ack = %+v, %v", f, err)
	}
	if f, err = s.NoteFinding(ctx, ledger.FindingNote{ID: dup.ID, Actor: carol, Note: "  customer called  ", Now: at(3)}); err != nil ||
		f.Status != ledger.FindingAcknowledged || f.Note != "customer called" {
		t.Fatalf("note = %+v, %v", f, err)
	}
	if _, err := s.NoteFinding(ctx, ledger.FindingNote{ID: dup.ID, Actor: carol, Note: " ", Now: at(3)}); err == nil {
		t.Fatal("empty note accepted")
	}
	if _, err := s.NoteFinding(ctx, ledger.FindingNote{ID: "f_nope", Actor: carol, Note: "x", Now: at(3)}); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("note on missing finding: %v", err)
	}
	f, err = s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingResolved, Note: "refunded by hand", Now: at(4), Actor: bob})
	if err != nil || f.Status != ledger.FindingResolved || f.ResolvedBy != ledger.ResolvedByPerson || f.Resolver != "bob@example.com" ||
		f.AcknowledgedBy != "bob@example.com" {
		t.Fatalf("resolve = %+v, %v", f, err)
	}
	// Only a resolved finding reopens; a refused change writes no event.
	if _, err := s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingAcknowledged, Now: at(5), Actor: alice}); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("ack of resolved: %v", err)
	}
	f, err = s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingOpen, Note: "refund bounced", Now: at(5), Actor: carol})
	if err != nil || f.Status != ledger.FindingOpen || f.Resolver != "" || !f.ResolvedAt.IsZero() || f.Note != "refund bounced" {
		t.Fatalf("reopen = %+v, %v", f, err)
	}
	if _, err := s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingOpen, Note: "again", Now: at(5), Actor: carol}); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("reopen of open: %v", err)
	}
	// A run that no longer sees it resolves it; a later run seeing it
	// reopens it.
	resolved, err := s.ResolveUnseen(ctx, ledger.ResolveUnseenParams{RunID: 3, Provider: "mpesa", From: from, To: to,
		SeenSince: at(6), Note: "no longer seen by run 3", Now: at(6)})
	if err != nil || len(resolved) != 1 || resolved[0].Resolver != "run 3" || resolved[0].ResolvedBy != ledger.ResolvedByRun {
		t.Fatalf("resolve unseen = %+v, %v", resolved, err)
	}
	if _, err := s.UpsertFinding(ctx, worse, 4, at(7)); err != nil {
		t.Fatal(err)
	}
	// A change rolled back leaves no event.
	boom := errors.New("boom")
	err = s.InTx(ctx, func(tx ledger.Tx) error {
		if _, err := tx.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingResolved, Note: "oops", Now: at(8), Actor: alice}); err != nil {
			return err
		}
		if _, err := tx.NoteFinding(ctx, ledger.FindingNote{ID: dup.ID, Actor: alice, Note: "oops", Now: at(8)}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}

	want := `2026-11-02T09:30:00Z opened by run via run run=1 note=""
2026-11-02T10:30:00Z escalated by run via run run=2 note="severity high (was medium); at risk KES 150.00 (was 100.00)"
2026-11-02T11:30:00Z acknowledged by alice via cli run=0 note="looking"
2026-11-02T11:30:00Z acknowledged by bob@example.com via web run=0 note=""
2026-11-02T12:30:00Z noted by carol via api run=0 note="customer called"
2026-11-02T13:30:00Z resolved by bob@example.com via web run=0 note="refunded by hand"
2026-11-02T14:30:00Z reopened by carol via api run=0 note="refund bounced"
2026-11-02T15:30:00Z auto_resolved by run via run run=3 note="no longer seen by run 3"
2026-11-02T16:30:00Z reopened by run via run run=4 note="seen again"
`
	if got := mustHistory(t, s, dup.ID); got != want {
		t.Fatalf("history:\n%s\nwant:\n%s", got, want)
	}
	if _, err := s.FindingHistory(ctx, "f_nope"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("history of missing finding: %v", err)
	}

	// Evidence-time filter on the list: [From, To).
	late := dup
	late.ID, late.IntentKey, late.OccurredAt = "f_late", "k2", T0.Add(26*time.Hour)
	if _, err := s.UpsertFinding(ctx, late, 5, at(9)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		from, to time.Time
		want     int
	}{{from, to, 1}, {to, time.Time{}, 1}, {time.Time{}, T0, 0}, {T0, T0.Add(26*time.Hour + time.Second), 2}} {
		got, err := s.ListFindings(ctx, ledger.FindingFilter{From: c.from, To: c.to})
		if err != nil || len(got) != c.want {
			t.Fatalf("list from %s to %s = %d findings, %v; want %d", c.from, c.to, len(got), err, c.want)
		}
	}
}

func exerciseQuarantineHistory(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	add := func(raw string) int64 {
		id, err := s.AddQuarantine(ctx, ledger.QuarantineItem{Source: "mpesa_callback", Origin: "cb.jsonl", Line: 1, Field: "body",
			Reason: "bad", Raw: []byte(raw), At: T0})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a, b := add(`{"a":1}`), add(`{"b":2}`)
	q, err := s.GetQuarantine(ctx, a)
	if err != nil || q.Status != ledger.QuarantineKept || string(q.Raw) != `{"a":1}` || !q.At.Equal(T0) {
		t.Fatalf("get = %+v, %v", q, err)
	}
	alice := ledger.Actor{Name: "alice", Surface: ledger.SurfaceCLI}
	q, err = s.UpdateQuarantine(ctx, ledger.QuarantineUpdate{ID: a, To: ledger.QuarantineDismissed, Actor: alice, Note: "test traffic", Now: T0.Add(time.Hour)})
	if err != nil || q.Status != ledger.QuarantineDismissed {
		t.Fatalf("dismiss = %+v, %v", q, err)
	}
	if _, err := s.UpdateQuarantine(ctx, ledger.QuarantineUpdate{ID: a, To: ledger.QuarantineReplayed, Actor: alice, Now: T0}); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("replay of dismissed: %v", err)
	}
	if _, err := s.UpdateQuarantine(ctx, ledger.QuarantineUpdate{ID: b, To: ledger.QuarantineReplayed, Actor: alice, Now: T0.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateQuarantine(ctx, ledger.QuarantineUpdate{ID: 999999, To: ledger.QuarantineDismissed, Actor: alice, Now: T0}); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("dismiss of missing: %v", err)
	}
	items, err := s.ListQuarantine(ctx, "", 10)
	if err != nil || len(items) != 2 || items[0].Status != ledger.QuarantineReplayed || items[1].Status != ledger.QuarantineDismissed {
		t.Fatalf("list = %+v, %v", items, err)
	}
	for id, want := range map[int64]string{
		a: "2026-11-02T10:30:00Z dismissed by alice via cli run=0 note=\"test traffic\"\n",
		b: "2026-11-02T11:30:00Z replayed by alice via cli run=0 note=\"\"\n",
	} {
		evs, err := s.QuarantineHistory(ctx, id)
		if err != nil || renderHistory(evs) != want {
			t.Fatalf("history of %d = %q, %v; want %q", id, renderHistory(evs), err, want)
		}
	}
}
