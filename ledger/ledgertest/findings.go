package ledgertest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

func exerciseFindings(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	from, to := T0.Truncate(24*time.Hour), T0.Truncate(24*time.Hour).Add(24*time.Hour)
	dup := ledger.Finding{
		ID: ledger.FindingID(ledger.KindDuplicateCharge, "k1", []string{"R2", "R1"}), Kind: ledger.KindDuplicateCharge,
		Severity: ledger.SeverityHigh, Provider: "mpesa", IntentKey: "k1", ProviderTxnIDs: []string{"R2", "R1"},
		Expected: kes(t, "100"), Actual: kes(t, "200"), AtRisk: kes(t, "100"), Counterparty: "2547****0845",
		Detail: "two charges", OccurredAt: T0,
	}
	if dup.ID != ledger.FindingID(ledger.KindDuplicateCharge, "k1", []string{"R1", "R2"}) {
		t.Fatal("finding id depends on txn id order")
	}
	ch, err := s.UpsertFinding(ctx, dup, 1, T0)
	if err != nil || !ch.New || ch.Finding.Status != ledger.FindingOpen || ch.Finding.ProviderTxnIDs[0] != "R1" ||
		!ch.Finding.AtRisk.Equal(kes(t, "100")) || ch.Finding.FirstRunID != 1 {
		t.Fatalf("new = %+v, %v", ch, err)
	}
	ch, err = s.UpsertFinding(ctx, dup, 1, T0.Add(time.Hour))
	if err != nil || ch.New || ch.Escalated || ch.Reopened || !ch.Finding.LastSeenAt.Equal(T0.Add(time.Hour)) {
		t.Fatalf("seen again = %+v, %v", ch, err)
	}
	grown := dup
	grown.AtRisk = kes(t, "200")
	ch, err = s.UpsertFinding(ctx, grown, 2, T0.Add(2*time.Hour))
	if err != nil || !ch.Escalated || ch.Finding.LastRunID != 2 || ch.Finding.FirstRunID != 1 {
		t.Fatalf("escalation = %+v, %v", ch, err)
	}

	miss := ledger.Finding{ID: "f_missing", Kind: ledger.KindMissingAtProvider, Severity: ledger.SeverityMedium,
		Provider: "mpesa", IntentKey: "k2", Expected: kes(t, "50"), OccurredAt: T0}
	if _, err := s.UpsertFinding(ctx, miss, 2, T0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// A run started at +3h sees dup but not miss; a run that could not judge
	// missing charges keeps it; one that could resolves it.
	if _, err := s.UpsertFinding(ctx, grown, 3, T0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	kept, err := s.ResolveUnseen(ctx, ledger.ResolveUnseenParams{Provider: "mpesa", From: from, To: to,
		SeenSince: T0.Add(3 * time.Hour), Keep: []ledger.Kind{ledger.KindMissingAtProvider}, Now: T0.Add(3 * time.Hour)})
	if err != nil || len(kept) != 0 {
		t.Fatalf("resolve unseen keeping missing = %+v, %v", kept, err)
	}
	resolved, err := s.ResolveUnseen(ctx, ledger.ResolveUnseenParams{Provider: "mpesa", From: from, To: to,
		SeenSince: T0.Add(3 * time.Hour), Note: "no longer seen", Now: T0.Add(3 * time.Hour)})
	if err != nil || len(resolved) != 1 || resolved[0].ID != "f_missing" || resolved[0].ResolvedBy != ledger.ResolvedByRun {
		t.Fatalf("resolve unseen = %+v, %v", resolved, err)
	}
	// Seen again later: it reopens.
	ch, err = s.UpsertFinding(ctx, miss, 4, T0.Add(4*time.Hour))
	if err != nil || !ch.Reopened || ch.Finding.Status != ledger.FindingOpen {
		t.Fatalf("reopen = %+v, %v", ch, err)
	}

	// By hand: acknowledge, then resolve; a person's resolution holds while
	// the evidence stays the same, and gives way when it escalates.
	f, err := s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingAcknowledged, Note: "looking", Now: T0})
	if err != nil || f.Status != ledger.FindingAcknowledged || f.Note != "looking" {
		t.Fatalf("ack = %+v, %v", f, err)
	}
	f, err = s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingResolved, Note: "refunded by hand", Now: T0})
	if err != nil || f.Status != ledger.FindingResolved || f.ResolvedBy != ledger.ResolvedByPerson {
		t.Fatalf("resolve = %+v, %v", f, err)
	}
	if _, err := s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingAcknowledged, Now: T0}); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("ack of resolved: %v", err)
	}
	ch, err = s.UpsertFinding(ctx, grown, 5, T0.Add(5*time.Hour))
	if err != nil || ch.Reopened || ch.Finding.Status != ledger.FindingResolved {
		t.Fatalf("person-resolved reopened without escalation = %+v, %v", ch, err)
	}
	worse := grown
	worse.AtRisk = kes(t, "300")
	ch, err = s.UpsertFinding(ctx, worse, 6, T0.Add(6*time.Hour))
	if err != nil || !ch.Reopened || !ch.Escalated {
		t.Fatalf("escalation reopens = %+v, %v", ch, err)
	}
	if _, err := s.UpdateFinding(ctx, ledger.FindingUpdate{ID: "nope", To: ledger.FindingResolved, Now: T0}); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	// A new transaction in the evidence reopens a person's resolution too
	// (the same id, as the findings about an expected payment's sum keep).
	if _, err := s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingResolved, Note: "checked", Now: T0}); err != nil {
		t.Fatal(err)
	}
	more := worse
	more.ProviderTxnIDs = append(slices.Clone(worse.ProviderTxnIDs), "R9")
	ch, err = s.UpsertFinding(ctx, worse, 7, T0.Add(7*time.Hour))
	if err != nil || ch.Reopened {
		t.Fatalf("the same evidence again reopened a person's resolution: %+v, %v", ch, err)
	}
	ch, err = s.UpsertFinding(ctx, more, 8, T0.Add(8*time.Hour))
	if err != nil || !ch.Reopened || ch.Escalated || ch.Finding.Status != ledger.FindingOpen {
		t.Fatalf("new evidence reopens = %+v, %v", ch, err)
	}

	open, err := s.ListFindings(ctx, ledger.FindingFilter{Statuses: []ledger.FindingStatus{ledger.FindingOpen}})
	if err != nil || len(open) != 2 {
		t.Fatalf("open = %d, %v", len(open), err)
	}
	dups, err := s.ListFindings(ctx, ledger.FindingFilter{Provider: "mpesa", Kinds: []ledger.Kind{ledger.KindDuplicateCharge}})
	if err != nil || len(dups) != 1 || dups[0].Counterparty != "2547****0845" || !dups[0].Expected.Equal(kes(t, "100")) {
		t.Fatalf("by kind = %+v, %v", dups, err)
	}
	counts, err := s.CountFindings(ctx)
	if err != nil || len(counts) != 2 || counts[0].Kind != ledger.KindDuplicateCharge || counts[0].N != 1 ||
		counts[1].Kind != ledger.KindMissingAtProvider || counts[1].Status != ledger.FindingOpen {
		t.Fatalf("counts = %+v, %v", counts, err)
	}
	byRun, err := s.ListFindings(ctx, ledger.FindingFilter{RunID: 4})
	if err != nil || len(byRun) != 1 || byRun[0].ID != "f_missing" || !byRun[0].Actual.IsZero() {
		t.Fatalf("by run = %+v, %v", byRun, err)
	}
}

func exerciseQuarantine(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	id, err := s.AddQuarantine(ctx, ledger.QuarantineItem{Source: "intents_csv", Origin: "in.csv", Line: 3, Field: "amount",
		Reason: "12.345: more decimal places than the currency allows", Raw: []byte("k,mpesa,12.345,KES"), At: T0})
	if err != nil || id == 0 {
		t.Fatal(id, err)
	}
	items, err := s.ListQuarantine(ctx, "intents_csv", 10)
	if err != nil || len(items) != 1 || items[0].Line != 3 || string(items[0].Raw) != "k,mpesa,12.345,KES" || !items[0].At.Equal(T0) {
		t.Fatalf("list = %+v, %v", items, err)
	}
	if items, _ := s.ListQuarantine(ctx, "other", 10); len(items) != 0 {
		t.Fatalf("other source = %+v", items)
	}

	// Once: the same source, origin, field and raw input is kept once,
	// whatever its status; a difference in any of them is another item.
	bad := ledger.QuarantineItem{Source: "stripe_pull", Origin: "stripe /v1/charges ch_1", Field: "amount",
		Reason: "above the maximum", Raw: []byte(`{"id":"ch_1"}`), At: T0}
	first, added, err := s.AddQuarantineOnce(ctx, bad)
	if err != nil || !added || first == 0 {
		t.Fatalf("first AddQuarantineOnce = %d, %v, %v", first, added, err)
	}
	again := bad
	again.Reason, again.At = "still above the maximum", T0.Add(time.Hour)
	if id, added, err := s.AddQuarantineOnce(ctx, again); err != nil || added || id != first {
		t.Fatalf("the same item again = %d, %v, %v; want %d, not added", id, added, err, first)
	}
	if _, err := s.UpdateQuarantine(ctx, ledger.QuarantineUpdate{ID: first, To: ledger.QuarantineDismissed,
		Actor: ledger.Actor{Name: "alice", Surface: ledger.SurfaceCLI}, Note: "a test object", Now: T0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if id, added, err := s.AddQuarantineOnce(ctx, again); err != nil || added || id != first {
		t.Fatalf("the same item after its dismissal = %d, %v, %v; want %d, not added", id, added, err, first)
	}
	others := []ledger.QuarantineItem{bad, bad, bad, bad, bad}
	others[0].Source = "mpesa_pull"
	others[1].Origin = "stripe /v1/charges ch_2"
	others[2].Field = "created"
	others[3].Raw = []byte(`{"id":"ch_1","amount":1}`)
	others[4].Raw = nil
	for i, o := range others {
		if id, added, err := s.AddQuarantineOnce(ctx, o); err != nil || !added || id == first {
			t.Fatalf("different item %d = %d, %v, %v", i, id, added, err)
		}
	}
	if id, added, err := s.AddQuarantineOnce(ctx, others[4]); err != nil || added {
		t.Fatalf("the item without raw input again = %d, %v, %v", id, added, err)
	}
	if items, _ := s.ListQuarantine(ctx, "stripe_pull", 100); len(items) != 5 {
		t.Fatalf("stripe_pull items = %d, want 5: %+v", len(items), items)
	}
}

func exerciseTx(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	boom := errors.New("boom")
	err := s.InTx(ctx, func(tx ledger.Tx) error {
		if tx.Engine() != s.Engine() {
			t.Errorf("tx engine %s, store engine %s", tx.Engine(), s.Engine())
		}
		mustCreate(t, tx, params(t, "rolled-back", "1"))
		if _, err := tx.GetIntent(ctx, "rolled-back"); err != nil {
			t.Errorf("read own write: %v", err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v", err)
	}
	if _, err := s.GetIntent(ctx, "rolled-back"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("rolled back intent visible: %v", err)
	}
	if err := s.InTx(ctx, func(tx ledger.Tx) error { mustCreate(t, tx, params(t, "kept", "1")); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetIntent(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
}
