package findings_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/ledger"
)

// setup seeds Books on an engine and returns the service over them, the
// store, what was seeded and the findings the service announced.
func setup(t *testing.T, newURL func(testing.TB) string) (*findings.Service, ledger.Store, fixture.Seeded, *[]string) {
	t.Helper()
	url := newURL(t)
	sd := fixture.Books(t, url)
	store, err := database.Open(context.Background(), url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	var (
		mu        sync.Mutex
		announced []string
	)
	svc := findings.NewService(store, findings.Options{Clock: func() time.Time { return fixture.T0.Add(5 * time.Hour) },
		Announce: func(_ context.Context, _ ledger.Tx, f ledger.Finding) error {
			mu.Lock()
			defer mu.Unlock()
			announced = append(announced, f.ID)
			return nil
		}})
	return svc, store, sd, &announced
}

var engines = map[string]func(testing.TB) string{"postgres": dbtest.PostgresURL, "sqlite": dbtest.SQLiteURL}

// TestRules: the same rules refuse the same decisions, whatever the
// surface, before anything is written.
func TestRules(t *testing.T) {
	t.Parallel()
	for name, newURL := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			svc, store, sd, _ := setup(t, newURL)
			erin := ledger.Actor{Name: "erin", Surface: ledger.SurfaceAPI}
			for _, tc := range []struct {
				name  string
				d     findings.Decision
				field string
				is    error
			}{
				{"resolve without a note", findings.Decision{Verb: findings.Resolve, Actor: erin}, "note", findings.ErrNoteRequired},
				{"reopen without a note", findings.Decision{Verb: findings.Reopen, Actor: erin, Note: "  "}, "note", findings.ErrNoteRequired},
				{"note without a note", findings.Decision{Verb: findings.Note, Actor: erin}, "note", findings.ErrNoteRequired},
				{"match without a note", findings.Decision{Verb: findings.Match, Actor: erin, IntentKey: "k"}, "note", findings.ErrNoteRequired},
				{"unmatch without a note", findings.Decision{Verb: findings.Unmatch, Actor: erin}, "note", findings.ErrNoteRequired},
				{"a note too long", findings.Decision{Verb: findings.Acknowledge, Actor: erin, Note: strings.Repeat("é", findings.MaxNote/2+1)}, "note", findings.ErrNoteTooLong},
				{"match without an intent", findings.Decision{Verb: findings.Match, Actor: erin, Note: "x"}, "intent", findings.ErrIntentRequired},
				{"an intent for a resolve", findings.Decision{Verb: findings.Resolve, Actor: erin, Note: "x", IntentKey: "k"}, "intent", findings.ErrIntentNotTaken},
				{"no actor", findings.Decision{Verb: findings.Acknowledge}, "actor", nil},
				{"the run's name", findings.Decision{Verb: findings.Acknowledge, Actor: ledger.Actor{Name: "run", Surface: ledger.SurfaceCLI}}, "actor", nil},
				{"the run's surface", findings.Decision{Verb: findings.Acknowledge, Actor: ledger.Actor{Name: "erin", Surface: ledger.SurfaceRun}}, "surface", nil},
				{"no such verb", findings.Decision{Verb: "write_off", Actor: erin, Note: "x"}, "action", nil},
			} {
				tc.d.FindingID = sd.Unknown
				_, err := svc.Decide(context.Background(), tc.d)
				var fe *ledger.FieldError
				if !errors.As(err, &fe) || fe.Field != tc.field || (tc.is != nil && !errors.Is(err, tc.is)) {
					t.Errorf("%s: %v, want a refusal of %s", tc.name, err, tc.field)
				}
				if err := tc.d.Check(); err == nil {
					t.Errorf("%s: Check accepts it", tc.name)
				}
			}
			// Exactly MaxNote bytes is a note; acknowledging needs none.
			if _, err := svc.Decide(context.Background(), findings.Decision{Verb: findings.Acknowledge, FindingID: sd.Unknown, Actor: erin,
				Note: strings.Repeat("n", findings.MaxNote)}); err != nil {
				t.Fatalf("a note of MaxNote bytes: %v", err)
			}
			if _, err := svc.Decide(context.Background(), findings.Decision{Verb: findings.Acknowledge, FindingID: sd.Unknown, Actor: erin}); err != nil {
				t.Fatalf("ack without a note: %v", err)
			}
			evs, err := store.FindingHistory(context.Background(), sd.Unknown)
			if err != nil || len(evs) != 3 {
				t.Fatalf("history after the refusals and two acks: %d events, %v", len(evs), err)
			}
		})
	}
}

// TestDecide: each decision writes its change and its history row in one
// transaction; the status changes are the ledger's; a resolution is
// announced; a decision with an identity is applied once.
func TestDecide(t *testing.T) {
	t.Parallel()
	for name, newURL := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			svc, store, sd, announced := setup(t, newURL)
			erin := ledger.Actor{Name: "erin", Surface: ledger.SurfaceCLI}
			decide := func(v findings.Verb, id, note string) (findings.Outcome, error) {
				return svc.Decide(ctx, findings.Decision{Verb: v, FindingID: id, Actor: erin, Note: note})
			}
			out, err := decide(findings.Resolve, sd.Unknown, fixture.ResolveNote)
			if err != nil || out.Finding.Status != ledger.FindingResolved || len(out.Changed) != 1 || len(out.Resolved) != 1 {
				t.Fatalf("resolve: %+v %v", out, err)
			}
			fixture.CheckResolved(t, store, sd.Unknown, "erin", ledger.SurfaceCLI)
			if len(*announced) != 1 || (*announced)[0] != sd.Unknown {
				t.Errorf("announced %v", *announced)
			}
			// A resolved finding is not acknowledged or resolved again; the
			// outcome says what it is.
			for _, v := range []findings.Verb{findings.Acknowledge, findings.Resolve} {
				out, err := decide(v, sd.Unknown, "again")
				if !errors.Is(err, ledger.ErrConflict) || out.Finding.Status != ledger.FindingResolved {
					t.Errorf("%s a resolved finding: %v (%s)", v, err, out.Finding.Status)
				}
			}
			if _, err := decide(findings.Reopen, sd.Unknown, "bounced"); err != nil {
				t.Fatal(err)
			}
			if out, err := decide(findings.Reopen, sd.Unknown, "again"); !errors.Is(err, ledger.ErrConflict) || out.Finding.Status != ledger.FindingOpen {
				t.Errorf("reopen an open finding: %v", err)
			}
			if _, err := decide(findings.Note, "f_nope", "x"); !errors.Is(err, ledger.ErrNotFound) {
				t.Errorf("note on no finding: %v", err)
			}
			// Once: the second decision with the same identity changes nothing.
			d := findings.Decision{Verb: findings.Acknowledge, FindingID: sd.Unknown, Actor: ledger.Actor{Name: "@bob (U0BOB)", Surface: ledger.SurfaceSlack},
				Once: "slack:test:ack:1"}
			first, err := svc.Decide(ctx, d)
			if err != nil || first.Repeat {
				t.Fatalf("first: %+v %v", first, err)
			}
			again, err := svc.Decide(ctx, d)
			if err != nil || !again.Repeat || again.Finding.Status != ledger.FindingAcknowledged {
				t.Fatalf("again: %+v %v", again, err)
			}
			evs, err := store.FindingHistory(ctx, sd.Unknown)
			if err != nil {
				t.Fatal(err)
			}
			var rows []string
			for _, ev := range evs {
				rows = append(rows, string(ev.Action)+" "+ev.Who()+" "+string(ev.Surface)+" "+ev.Note)
			}
			want := "opened run 1 run |resolved erin cli " + fixture.ResolveNote + "|reopened erin cli bounced|acknowledged @bob (U0BOB) slack "
			if got := strings.Join(rows, "|"); got != want {
				t.Errorf("history:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestAcceptSuggestion: a match that accepts a suggestion applies only
// while the finding still suggests that pair, writes its own note, and
// resolves both findings, each announced.
func TestAcceptSuggestion(t *testing.T) {
	t.Parallel()
	for name, newURL := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			svc, store, _, announced := setup(t, newURL)
			unknown, missing := fixture.Typo(t, store)
			alice := ledger.Actor{Name: "@alice (U0ALICE)", Surface: ledger.SurfaceSlack}
			stale := ledger.Suggestion{IntentKey: "k-typo", TxnID: "TX-TYPO", FindingID: "f_other"}
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Match, FindingID: missing.ID, Actor: alice, IntentKey: "k-typo",
				Suggested: &stale}); !errors.Is(err, findings.ErrSuggestionChanged) {
				t.Fatalf("stale suggestion: %v", err)
			}
			sg := missing.Suggestion
			out, err := svc.Decide(ctx, findings.Decision{Verb: findings.Match, FindingID: missing.ID, Actor: alice, IntentKey: "k-typo", Suggested: &sg})
			if err != nil || out.Finding.ID != missing.ID || len(out.Changed) != 2 || out.Link == nil || out.Link.TxnID != "TX-TYPO" {
				t.Fatalf("accept: %+v %v", out, err)
			}
			for _, f := range out.Changed {
				if f.Status != ledger.FindingResolved || !strings.Contains(f.Note, "suggested match accepted (look-alike)") {
					t.Errorf("%s after accept: %s %q", f.ID, f.Status, f.Note)
				}
			}
			if len(*announced) != 2 {
				t.Errorf("announced %v", *announced)
			}
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Match, FindingID: unknown.ID, Actor: alice, IntentKey: "k-typo",
				Suggested: &unknown.Suggestion}); err != findings.ErrResolved {
				t.Errorf("accept again: %v", err)
			}
		})
	}
}
