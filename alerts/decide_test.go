package alerts

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestDecisionRow: a resolution from Slack's dialog goes through the
// findings service: without a note it is refused in the dialog, with one it
// writes the history row every surface writes, the Slack user as actor and
// "slack" as surface.
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
			cfg := testConfig(ModeBot, nil)
			cfg.APIURL = alertstest.NewBot(t, nil).APIURL()
			h, err := NewInteractions(InteractionsConfig{SigningSecret: testSigningSecret, AllowedUsers: []string{"U0ALICE"},
				Alerts: cfg, Store: store, Findings: findings.NewService(store, findings.Options{}), HTTPClient: testHTTPClient(t)})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			// The dialog of a message not in this test's channel: nothing to
			// redraw.
			meta := buttonRef{Alert: 1, Finding: sd.Unknown}.encode()
			r := slackRequest(t, srv.URL, testSigningSecret, time.Now(), viewSubmissionPayload("U0ALICE", "alice", "V1", meta, " "), 0)
			if body, _ := io.ReadAll(r.Body); r.StatusCode != http.StatusOK || !strings.Contains(string(body), `"response_action":"errors"`) {
				t.Fatalf("resolve without a note: %d %s", r.StatusCode, body)
			}
			r = slackRequest(t, srv.URL, testSigningSecret, time.Now(), viewSubmissionPayload("U0ALICE", "alice", "V2", meta, fixture.ResolveNote), 0)
			if body, _ := io.ReadAll(r.Body); r.StatusCode != http.StatusOK || len(body) != 0 {
				t.Fatalf("resolve: %d %s", r.StatusCode, body)
			}
			fixture.CheckResolved(t, store, sd.Unknown, "@alice (U0ALICE)", ledger.SurfaceSlack)
		})
	}
}
