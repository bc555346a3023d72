package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestDecisionRow: a resolution from the console goes through the findings
// service: without a note it is refused, with one it writes the history row
// every surface writes, the operator as actor and "web" as surface.
func TestDecisionRow(t *testing.T) {
	t.Parallel()
	for name, newStore := range map[string]func(testing.TB) ledger.Store{"postgres": dbtest.Postgres, "sqlite": dbtest.SQLite} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, newStore)
			path := "/console/findings/" + b.unknown + "/resolve"
			if p := b.post(t, ops, path, url.Values{"note": {" "}}, nil); p.status != http.StatusUnprocessableEntity ||
				!strings.Contains(p.body, "Write a note") {
				t.Fatalf("resolve without a note: %d", p.status)
			}
			if p := b.post(t, ops, path, url.Values{"note": {fixture.ResolveNote}}, nil); p.status != http.StatusSeeOther {
				t.Fatalf("resolve: %d\n%s", p.status, p.body)
			}
			fixture.CheckResolved(t, b.store, b.unknown, ops, ledger.SurfaceWeb)
		})
	}
}
