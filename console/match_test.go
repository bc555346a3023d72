package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestManualMatch: operators match an unknown charge to an intent from its
// page, and undo it; a refused match says why; viewers cannot.
func TestManualMatch(t *testing.T) {
	t.Parallel()
	for name, newStore := range map[string]func(testing.TB) ledger.Store{"postgres": dbtest.Postgres, "sqlite": dbtest.SQLite} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, newStore)
			path := "/console/findings/" + b.unknown
			if p := b.get(t, ops, path); !strings.Contains(p.body, `value="charge:order-4471"`) || !strings.Contains(p.body, "Suggested match") {
				t.Fatalf("page lacks the suggestion and the match form:\n%s", p.body)
			}
			if p := b.get(t, viewer, path); strings.Contains(p.body, "Match to intent") {
				t.Fatalf("viewer sees the match form")
			}
			form := url.Values{"intent": {"charge:order-4471"}, "note": {"payer swapped two digits"}}
			if p := b.post(t, viewer, path+"/match", form, nil); p.status != http.StatusForbidden {
				t.Fatalf("viewer match: %d", p.status)
			}
			if p := b.post(t, ops, path+"/match", url.Values{"intent": {"charge:order-4471"}}, nil); p.status != http.StatusUnprocessableEntity ||
				!strings.Contains(p.body, "Write a note") {
				t.Fatalf("match without a note: %d\n%s", p.status, p.body)
			}
			if p := b.post(t, ops, path+"/match", url.Values{"intent": {"charge:nope"}, "note": {"x"}}, nil); p.status != http.StatusUnprocessableEntity ||
				!strings.Contains(p.body, "Refused: no intent") {
				t.Fatalf("match to no intent: %d\n%s", p.status, p.body)
			}
			if p := b.post(t, ops, "/console/findings/"+b.dup+"/match", form, nil); p.status != http.StatusUnprocessableEntity ||
				!strings.Contains(p.body, "only an unknown_charge") {
				t.Fatalf("match a duplicate_charge: %d", p.status)
			}
			if p := b.post(t, ops, path+"/match", form, nil); p.status != http.StatusSeeOther {
				t.Fatalf("match: %d\n%s", p.status, p.body)
			}
			p := b.get(t, ops, path)
			if !strings.Contains(p.body, "Matched by hand to intent charge:order-4471 by ops@example.com") || !strings.Contains(p.body, "Unmatch") {
				t.Fatalf("page after match:\n%s", p.body)
			}
			if p := b.post(t, ops, path+"/match", form, nil); p.status != http.StatusConflict || !strings.Contains(p.body, "already matched by hand") {
				t.Fatalf("match twice: %d", p.status)
			}
			if p := b.post(t, ops, path+"/unmatch", url.Values{"note": {"wrong intent"}}, nil); p.status != http.StatusSeeOther {
				t.Fatalf("unmatch: %d", p.status)
			}
			want := "opened run 1 run |matched ops@example.com web matched provider txn SKL2BBBB01 with intent charge:order-4471: payer swapped two digits|" +
				"resolved ops@example.com web matched provider txn SKL2BBBB01 with intent charge:order-4471: payer swapped two digits|" +
				"unmatched ops@example.com web unmatched provider txn SKL2BBBB01 from intent charge:order-4471: wrong intent|" +
				"reopened ops@example.com web unmatched provider txn SKL2BBBB01 from intent charge:order-4471: wrong intent"
			if got := historyOf(t, b.store, b.unknown); got != want {
				t.Fatalf("history:\n%s\nwant\n%s", got, want)
			}
		})
	}
}
