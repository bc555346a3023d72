package reconciler_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/reconciler"
)

// TestTypedReferences plays a paybill day on both engines: account
// numbers typed with other case and separators link; a one-character typo
// becomes an unknown_charge and a missing_at_provider that suggest each
// other; a wrong manual match is refused; accepting the suggestion
// resolves both, survives re-runs and shows in the history; unmatching
// reopens them.
func TestTypedReferences(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := e.New(t)
			amt := func(v, cur string) money.Amount {
				a, err := money.Parse(v, cur)
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			at := date.Add(9 * time.Hour)
			for _, in := range []struct{ key, ref, amount, cur string }{
				{"k-space", "INV1001", "100", "KES"}, {"k-dash", "INV2002", "100", "KES"}, {"k-dot", "inv.3003", "100", "KES"},
				{"k-typo", "INV4004", "250", "KES"}, {"k-usd", "INV5005", "250", "USD"},
			} {
				_, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: in.key, Provider: "mpesa",
					Amount: amt(in.amount, in.cur), Customer: "2547123408" + in.key[len(in.key)-2:], Reference: in.ref},
					State: ledger.StateSucceeded, CreatedAt: at})
				if err != nil {
					t.Fatal(err)
				}
			}
			for i, tx := range []struct{ id, ref, amount string }{
				{"T-SPACE", " inv 1001 ", "100"}, {"T-DASH", "INV-2002", "100"}, {"T-DOT", "INV3003", "100"}, {"T-TYPO", "INV4O04", "250"},
			} {
				_, err := s.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "mpesa", ID: tx.id, Type: ledger.TxnCharge,
					Status: ledger.TxnSucceeded, Amount: amt(tx.amount, "KES"), OccurredAt: at.Add(time.Duration(i+1) * time.Minute),
					Reference: tx.ref, Counterparty: "2547****0999"}, ledger.Source{Channel: "statement", Ref: tx.id, ReceivedAt: at})
				if err != nil {
					t.Fatal(err)
				}
			}
			c := &clock{t: date.Add(30 * time.Hour)}
			rec := reconciler.New(s, reconciler.Config{Clock: c.Now, Owner: "test", Grace: map[string]time.Duration{"mpesa": 30 * time.Minute}})
			run := func() *reconciler.Outcome {
				t.Helper()
				c.Add(time.Minute)
				out, err := rec.Run(ctx, reconciler.Params{Provider: "mpesa", From: date, To: date.Add(24 * time.Hour), NoPull: true})
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			kinds := func(out *reconciler.Outcome) []string {
				var ks []string
				for _, f := range out.Findings {
					ks = append(ks, string(f.Kind)+" "+f.IntentKey+strings.Join(f.ProviderTxnIDs, ","))
				}
				slices.Sort(ks)
				return ks
			}
			unknownID := ledger.FindingID(ledger.KindUnknownCharge, "", []string{"T-TYPO"})
			missingID := ledger.FindingID(ledger.KindMissingAtProvider, "k-typo", nil)
			wantPair := []string{"missing_at_provider k-typo", "missing_at_provider k-usd", "unknown_charge T-TYPO"}

			first := run()
			if got := kinds(first); !slices.Equal(got, wantPair) || first.Summary.Matched != 3 {
				t.Fatalf("first run: %q, %d matched; want %q and the 3 variants matched", got, first.Summary.Matched, wantPair)
			}
			checkPair := func(out *reconciler.Outcome) {
				t.Helper()
				for _, f := range out.Findings {
					s := f.Suggestion
					switch f.ID {
					case unknownID:
						if s.FindingID != missingID || s.IntentKey != "k-typo" || s.TxnID != "T-TYPO" || !strings.Contains(s.Reason, "look-alike") {
							t.Errorf("unknown_charge suggests %+v", s)
						}
					case missingID:
						if s.FindingID != unknownID || s.IntentKey != "k-typo" || s.TxnID != "T-TYPO" {
							t.Errorf("missing_at_provider suggests %+v", s)
						}
					default:
						if !s.IsZero() {
							t.Errorf("%s %s suggests %+v", f.Kind, f.IntentKey, s)
						}
					}
				}
			}
			checkPair(first)

			alice := ledger.Actor{Name: "alice", Surface: ledger.SurfaceCLI}
			var fe *ledger.FieldError
			if _, err := ledger.MatchManually(ctx, s, ledger.MatchParams{FindingID: unknownID, IntentKey: "k-usd", Actor: alice, Now: c.Now()}); !errors.As(err, &fe) ||
				!strings.Contains(err.Error(), "currencies differ") {
				t.Fatalf("match across currencies: %v", err)
			}
			if _, err := ledger.MatchManually(ctx, s, ledger.MatchParams{FindingID: missingID, IntentKey: "k-typo", Actor: alice, Now: c.Now()}); !errors.As(err, &fe) {
				t.Fatalf("match a missing_at_provider: %v", err)
			}
			out, err := ledger.MatchManually(ctx, s, ledger.MatchParams{FindingID: unknownID, IntentKey: "k-typo", Actor: alice,
				Note: "payer typed O for 0", Now: c.Now()})
			if err != nil || len(out.Findings) != 2 {
				t.Fatalf("match: %+v, %v", out, err)
			}

			for range 2 {
				again := run()
				if got := kinds(again); !slices.Equal(got, []string{"missing_at_provider k-usd"}) || again.Summary.Matched != 4 || len(again.Resolved) != 0 {
					t.Fatalf("re-run after the match: %q, %d matched, %d resolved", got, again.Summary.Matched, len(again.Resolved))
				}
			}
			for _, id := range []string{unknownID, missingID} {
				f, err := s.GetFinding(ctx, id)
				if err != nil || f.Status != ledger.FindingResolved || f.Resolver != "alice" {
					t.Fatalf("%s after re-runs: %+v, %v", id, f, err)
				}
				evs, err := s.FindingHistory(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, ev := range evs {
					got = append(got, string(ev.Action)+" by "+ev.Who())
				}
				want := []string{"opened by run 1", "matched by alice", "resolved by alice"}
				if !slices.Equal(got, want) || !strings.Contains(evs[1].Note, "matched provider txn T-TYPO with intent k-typo: payer typed O for 0") {
					t.Errorf("history of %s: %q (%q), want %q", id, got, evs[1].Note, want)
				}
			}

			if _, err := ledger.UnmatchManually(ctx, s, ledger.UnmatchParams{FindingID: unknownID, Actor: alice, Note: "wrong payer", Now: c.Now()}); err != nil {
				t.Fatal(err)
			}
			reopened := run()
			if got := kinds(reopened); !slices.Equal(got, wantPair) {
				t.Fatalf("run after unmatch: %q", got)
			}
			checkPair(reopened)
			for _, f := range reopened.Findings {
				if f.Status != ledger.FindingOpen {
					t.Errorf("%s %s after unmatch: %s", f.Kind, f.IntentKey, f.Status)
				}
			}
		})
	}
}
