package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestDecisionRow: a resolution through the API goes through the findings
// service: without a note it is refused, with one it writes the history row
// every surface writes, the X-Reconcile-Actor as actor and "api" as
// surface.
func TestDecisionRow(t *testing.T) {
	t.Parallel()
	for name, newURL := range map[string]func(testing.TB) string{"postgres": dbtest.PostgresURL, "sqlite": dbtest.SQLiteURL} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := newURL(t)
			sd := fixture.Books(t, url)
			store, err := database.Open(context.Background(), url, database.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(store.Close)
			mux := http.NewServeMux()
			New(Config{Store: store, Token: findingsToken, Findings: findings.NewService(store, findings.Options{}),
				Providers: func(context.Context) (map[string]*time.Location, error) { return nil, nil }}).Routes(mux)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			c := apiCall{t: t, base: srv.URL, token: findingsToken}
			path := "/v1/findings/" + sd.Unknown + "/resolve"
			if code, out := c.do("POST", path, "erin@example.com", `{}`); code != http.StatusUnprocessableEntity || fieldOf(out) != "note" {
				t.Fatalf("resolve without a note: %d %v", code, out)
			}
			if code, out := c.do("POST", path, "erin@example.com", `{"note":"`+fixture.ResolveNote+`"}`); code != http.StatusOK {
				t.Fatalf("resolve: %d %v", code, out)
			}
			fixture.CheckResolved(t, store, sd.Unknown, "erin@example.com", ledger.SurfaceAPI)
		})
	}
}
