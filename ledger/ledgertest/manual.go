package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// exerciseManualLinks covers suggestions on findings, the manual link
// table, and manual matching with its refusals and its history.
func exerciseManualLinks(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	usd, err := money.Parse("100", "USD")
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, params(t, "k1", "100"))
	mustCreate(t, s, params(t, "k2", "100"))
	mustCreate(t, s, ledger.IntentParams{Key: "kusd", Provider: "mpesa", Amount: usd, Customer: "254712340845"})
	// k2 recorded the provider reference of R2: R2 is linked already.
	in, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "k2", Owner: "w", Lease: time.Minute, Now: T0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: "k2", ClaimToken: in.ClaimToken, ProviderRef: "ws_CO_R2", Now: T0}); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"R1", "R2", "R3"} {
		tx := ledger.ProviderTxn{Provider: "mpesa", ID: id, Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
			Amount: kes(t, "100"), OccurredAt: T0.Add(time.Duration(i) * time.Minute), ProviderRef: "ws_CO_" + id, Reference: "INV10" + id}
		if _, err := s.UpsertProviderTxn(ctx, tx, ledger.Source{Channel: "statement", Ref: id, ReceivedAt: T0}); err != nil {
			t.Fatal(err)
		}
	}
	unknown := func(id string) ledger.Finding {
		return ledger.Finding{ID: ledger.FindingID(ledger.KindUnknownCharge, "", []string{id}), Kind: ledger.KindUnknownCharge,
			Severity: ledger.SeverityMedium, Provider: "mpesa", ProviderTxnIDs: []string{id}, Expected: kes(t, "0"),
			Actual: kes(t, "100"), AtRisk: kes(t, "100"), Detail: "unknown " + id, OccurredAt: T0}
	}
	missing := ledger.Finding{ID: ledger.FindingID(ledger.KindMissingAtProvider, "k1", nil), Kind: ledger.KindMissingAtProvider,
		Severity: ledger.SeverityMedium, Provider: "mpesa", IntentKey: "k1", Expected: kes(t, "100"), AtRisk: kes(t, "100"),
		Detail: "missing k1", OccurredAt: T0}
	u1, u2, u3 := unknown("R1"), unknown("R2"), unknown("R3")
	u1.Suggestion = ledger.Suggestion{FindingID: missing.ID, IntentKey: "k1", TxnID: "R1", Reason: `reference "INV10R1" is one typo from "INV1001"`}
	missing.Suggestion = ledger.Suggestion{FindingID: u1.ID, IntentKey: "k1", TxnID: "R1", Reason: "same amount"}
	if _, err := s.UpsertFindings(ctx, []ledger.Finding{u1, u2, missing}, 1, T0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertFinding(ctx, u3, 1, T0); err != nil {
		t.Fatal(err)
	}

	t.Run("suggestions are stored and rewritten", func(t *testing.T) {
		for _, f := range []ledger.Finding{u1, missing, u3} {
			got, err := s.GetFinding(ctx, f.ID)
			if err != nil || got.Suggestion != f.Suggestion {
				t.Fatalf("%s: suggestion %+v, %v; want %+v", f.ID, got.Suggestion, err, f.Suggestion)
			}
		}
		// A later run that suggests nothing clears it, single and batched.
		u3.Suggestion = ledger.Suggestion{FindingID: "f_x", IntentKey: "k9", TxnID: "R3", Reason: "same customer"}
		if _, err := s.UpsertFindings(ctx, []ledger.Finding{u3}, 2, T0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetFinding(ctx, u3.ID); got.Suggestion != u3.Suggestion {
			t.Fatalf("batched update: %+v", got.Suggestion)
		}
		u3.Suggestion = ledger.Suggestion{}
		if _, err := s.UpsertFinding(ctx, u3, 3, T0.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetFinding(ctx, u3.ID); !got.Suggestion.IsZero() {
			t.Fatalf("single update kept %+v", got.Suggestion)
		}
	})

	alice := ledger.Actor{Name: "alice@example.com", Surface: ledger.SurfaceCLI}
	var announced []string
	match := func(id, key string) (ledger.MatchOutcome, error) {
		return ledger.MatchManually(ctx, s, ledger.MatchParams{FindingID: id, IntentKey: key, Actor: alice, Note: "payer typed O for 0", Now: T0.Add(time.Hour),
			OnResolved: func(_ context.Context, _ ledger.Tx, f ledger.Finding) error {
				announced = append(announced, f.ID)
				return nil
			}})
	}
	t.Run("refusals", func(t *testing.T) {
		var fe *ledger.FieldError
		if _, err := match(missing.ID, "k1"); !errors.As(err, &fe) || fe.Field != "id" || !strings.Contains(err.Error(), "only an unknown_charge") {
			t.Errorf("match a missing_at_provider: %v", err)
		}
		if _, err := match(u1.ID, "kusd"); !errors.As(err, &fe) || !strings.Contains(err.Error(), "currencies differ") {
			t.Errorf("match across currencies: %v", err)
		}
		if _, err := match(u1.ID, "nope"); !errors.As(err, &fe) || fe.Field != "intent" {
			t.Errorf("match an unknown intent: %v", err)
		}
		if _, err := match(u2.ID, "k1"); !errors.Is(err, ledger.ErrConflict) || !strings.Contains(err.Error(), `already linked to intent "k2"`) {
			t.Errorf("match a transaction linked by provider reference: %v", err)
		}
		if _, err := match("f_00000000000000000000", "k1"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("match an unknown finding: %v", err)
		}
		if _, err := s.GetManualLink(ctx, "mpesa", "R1"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("a refused match left a link: %v", err)
		}
	})

	t.Run("match resolves both, unmatch reopens both", func(t *testing.T) {
		out, err := match(u1.ID, "k1")
		if err != nil {
			t.Fatal(err)
		}
		if out.Link.IntentKey != "k1" || out.Link.TxnID != "R1" || out.Link.Actor != alice.Name || len(out.Findings) != 2 {
			t.Fatalf("outcome %+v", out)
		}
		if len(announced) != 2 || announced[0] != u1.ID || announced[1] != missing.ID {
			t.Errorf("resolutions announced: %q", announced)
		}
		for _, f := range out.Findings {
			if f.Status != ledger.FindingResolved || f.Resolver != alice.Name {
				t.Errorf("%s: %s by %q", f.ID, f.Status, f.Resolver)
			}
			h, err := s.FindingHistory(ctx, f.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(h) < 3 || h[len(h)-2].Action != ledger.ActionMatched || h[len(h)-1].Action != ledger.ActionResolved ||
				!strings.Contains(h[len(h)-2].Note, "matched provider txn R1 with intent k1: payer typed O for 0") {
				t.Errorf("%s history: %+v", f.ID, h)
			}
		}
		l, err := s.GetManualLink(ctx, "mpesa", "R1")
		if err != nil || l.IntentKey != "k1" || l.Note != "payer typed O for 0" || !l.At.Equal(T0.Add(time.Hour)) {
			t.Fatalf("link %+v, %v", l, err)
		}
		var links []ledger.ManualLink
		scan := func(from, to time.Time) int {
			links = links[:0]
			if err := s.ScanManualLinks(ctx, ledger.TxnFilter{Provider: "mpesa", From: from, To: to}, func(l ledger.ManualLink) error {
				links = append(links, l)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return len(links)
		}
		if scan(T0, T0.Add(time.Minute)) != 1 || links[0] != l || scan(T0.Add(time.Minute), T0.Add(time.Hour)) != 0 {
			t.Fatalf("scan: %+v", links)
		}
		// R1 is of the default account: another account's scan has no link.
		if err := s.ScanManualLinks(ctx, ledger.TxnFilter{Provider: "mpesa", Account: "600639", From: T0, To: T0.Add(time.Minute)},
			func(l ledger.ManualLink) error { return fmt.Errorf("another account's scan has %+v", l) }); err != nil {
			t.Error(err)
		}
		// The same transaction again, to another intent: refused.
		if _, err := match(u1.ID, "k2"); !errors.Is(err, ledger.ErrConflict) || !strings.Contains(err.Error(), "already matched by hand") {
			t.Errorf("match twice: %v", err)
		}
		if err := s.AddManualLink(ctx, l); !errors.Is(err, ledger.ErrConflict) {
			t.Errorf("add the same link: %v", err)
		}

		back, err := ledger.UnmatchManually(ctx, s, ledger.UnmatchParams{FindingID: u1.ID, Actor: alice, Note: "wrong payer", Now: T0.Add(2 * time.Hour)})
		if err != nil || len(back.Findings) != 2 {
			t.Fatalf("unmatch: %+v, %v", back, err)
		}
		for _, f := range back.Findings {
			h, _ := s.FindingHistory(ctx, f.ID)
			if f.Status != ledger.FindingOpen || h[len(h)-2].Action != ledger.ActionUnmatched || h[len(h)-1].Action != ledger.ActionReopened {
				t.Errorf("%s after unmatch: %s, %+v", f.ID, f.Status, h)
			}
		}
		if _, err := s.GetManualLink(ctx, "mpesa", "R1"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("link kept after unmatch: %v", err)
		}
		if _, err := ledger.UnmatchManually(ctx, s, ledger.UnmatchParams{FindingID: u1.ID, Actor: alice, Now: T0}); !errors.Is(err, ledger.ErrConflict) {
			t.Errorf("unmatch twice: %v", err)
		}
		if err := s.AddFindingEvent(ctx, ledger.HistoryEvent{SubjectID: "f_00000000000000000000", Action: ledger.ActionMatched,
			Actor: "x", Surface: ledger.SurfaceCLI, At: T0}); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("event on no finding: %v", err)
		}
	})
}
