package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/ledger"
)

const findingsToken = "tok_findings_0123456789"

type apiCall struct {
	t     *testing.T
	base  string
	token string
}

func (c apiCall) do(method, path, actor, body string) (int, map[string]any) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if actor != "" {
		req.Header.Set(ActorHeader, actor)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		c.t.Fatalf("%s %s: content type %q: %s", method, path, ct, raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		c.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return resp.StatusCode, out
}

// fieldOf is the first field an error answer names.
func fieldOf(out map[string]any) string {
	fs, _ := out["fields"].([]any)
	if len(fs) == 0 {
		return ""
	}
	f, _ := fs[0].(map[string]any)
	s, _ := f["field"].(string)
	return s
}

// history returns "action actor surface" for each event of a detail answer.
func historyOf(t *testing.T, detail map[string]any) []string {
	t.Helper()
	var out []string
	evs, _ := detail["history"].([]any)
	for _, e := range evs {
		ev := e.(map[string]any)
		out = append(out, ev["action"].(string)+" "+ev["actor"].(string)+" "+ev["surface"].(string))
	}
	return out
}

// TestFindingsAPI drives /v1/findings on a real HTTP server over each
// engine: filters, detail with history, actions with their actor, and the
// JSON errors.
func TestFindingsAPI(t *testing.T) {
	t.Parallel()
	nairobi, err := time.LoadLocation("Africa/Nairobi")
	if err != nil {
		t.Fatal(err)
	}
	for name, url := range map[string]string{"postgres": dbtest.NewSchemaURL(t), "sqlite": "sqlite:" + filepath.Join(t.TempDir(), "r.db")} {
		t.Run(name, func(t *testing.T) {
			sd := fixture.Books(t, url)
			store, err := database.Open(context.Background(), url, database.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(store.Close)
			var resolutions atomic.Int32
			clock := func() time.Time { return fixture.T0.Add(5 * time.Hour) }
			api := New(Config{Store: store, Token: findingsToken, Clock: clock,
				Providers: func(context.Context) (map[string]*time.Location, error) {
					return map[string]*time.Location{"mpesa": nairobi}, nil
				},
				Findings: findings.NewService(store, findings.Options{Clock: clock,
					Announce: func(context.Context, ledger.Tx, ledger.Finding) error { resolutions.Add(1); return nil }})})
			mux := http.NewServeMux()
			api.Routes(mux)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			c := apiCall{t: t, base: srv.URL, token: findingsToken}

			if code, _ := (apiCall{t: t, base: srv.URL, token: "wrong"}).do("GET", "/v1/findings", "", ""); code != http.StatusUnauthorized {
				t.Fatalf("wrong token: %d", code)
			}
			code, out := c.do("GET", "/v1/findings", "", "")
			fs := out["findings"].([]any)
			risk := out["at_risk"].([]any)
			if code != 200 || len(fs) != 1 || fs[0].(map[string]any)["id"] != sd.Unknown ||
				risk[0].(map[string]any)["amount"] != "250.00" || risk[0].(map[string]any)["currency"] != "KES" {
				t.Fatalf("default list: %d %v", code, out)
			}
			code, out = c.do("GET", "/v1/findings?status=open,resolved&provider=mpesa&from=2026-11-02&to=2026-11-03", "", "")
			if fs := out["findings"].([]any); code != 200 || len(fs) != 1 || fs[0].(map[string]any)["id"] != sd.Dup {
				t.Fatalf("window list: %d %v", code, out)
			}
			// The resolved duplicate (KES 1,500) is listed but puts nothing at risk.
			code, out = c.do("GET", "/v1/findings?status=open,resolved", "", "")
			if risk := out["at_risk"].([]any); code != 200 || len(out["findings"].([]any)) != 2 || len(risk) != 1 ||
				risk[0].(map[string]any)["amount"] != "250.00" || risk[0].(map[string]any)["findings"] != float64(1) {
				t.Fatalf("at risk of resolved and open: %d %v", code, out)
			}
			for q, field := range map[string]string{"provider=paypal": "provider", "status=closed": "status", "from=yesterday": "from",
				"kind=theft": "kind", "limit=0": "limit", "run=x": "run"} {
				if code, out := c.do("GET", "/v1/findings?"+q, "", ""); code != http.StatusUnprocessableEntity || fieldOf(out) != field {
					t.Errorf("%s: %d %v", q, code, out)
				}
			}
			code, out = c.do("GET", "/v1/findings/"+sd.Dup, "", "")
			if code != 200 || strings.Join(historyOf(t, out), "|") !=
				"opened run 1 run|acknowledged alice cli|noted carol api|resolved bob@example.com web" ||
				len(out["transactions"].([]any)) != 2 || out["intent"].(map[string]any)["customer"] != "2547****0845" {
				t.Fatalf("get: %d %v", code, out)
			}
			if code, out := c.do("GET", "/v1/findings/f_nope", "", ""); code != 404 || out["error"] != "no such finding" {
				t.Fatalf("missing: %d %v", code, out)
			}

			// Actions.
			code, out = c.do("POST", "/v1/findings/"+sd.Unknown+"/ack", "erin@example.com", "")
			if code != 200 || out["finding"].(map[string]any)["acknowledged_by"] != "erin@example.com" {
				t.Fatalf("ack: %d %v", code, out)
			}
			if code, out := c.do("POST", "/v1/findings/"+sd.Unknown+"/resolve", "erin@example.com", `{}`); code != 422 || fieldOf(out) != "note" {
				t.Fatalf("resolve without note: %d %v", code, out)
			}
			if code, out := c.do("POST", "/v1/findings/"+sd.Unknown+"/resolve", "erin@example.com", `{"note":`); code != 400 {
				t.Fatalf("bad body: %d %v", code, out)
			}
			if code, out := c.do("POST", "/v1/findings/"+sd.Unknown+"/resolve", "erin@example.com", `{"note":"x","by":"y"}`); code != 400 {
				t.Fatalf("unknown field: %d %v", code, out)
			}
			if code, out := c.do("POST", "/v1/findings/"+sd.Unknown+"/notes", "run", `{"note":"x"}`); code != 422 || fieldOf(out) != ActorHeader {
				t.Fatalf("reserved actor: %d %v", code, out)
			}
			code, out = c.do("POST", "/v1/findings/"+sd.Unknown+"/resolve", "erin@example.com", `{"note":"our test charge"}`)
			if code != 200 || out["finding"].(map[string]any)["status"] != "resolved" || resolutions.Load() != 1 {
				t.Fatalf("resolve: %d %v", code, out)
			}
			if code, out := c.do("POST", "/v1/findings/"+sd.Unknown+"/resolve", "erin@example.com", `{"note":"again"}`); code != 409 || out["status"] != "resolved" {
				t.Fatalf("resolve twice: %d %v", code, out)
			}
			if code, out := c.do("POST", "/v1/findings/f_nope/ack", "erin@example.com", ""); code != 404 {
				t.Fatalf("ack missing: %d %v", code, out)
			}
			code, out = c.do("POST", "/v1/findings/"+sd.Unknown+"/reopen", "", `{"note":"it was not ours"}`)
			if code != 200 || out["finding"].(map[string]any)["status"] != "open" {
				t.Fatalf("reopen: %d %v", code, out)
			}
			code, out = c.do("POST", "/v1/findings/"+sd.Unknown+"/notes", "frank", `{"note":"asked the bank"}`)
			if code != 200 || strings.Join(historyOf(t, out), "|") !=
				"opened run 1 run|acknowledged erin@example.com api|resolved erin@example.com api|reopened api-token api|noted frank api" {
				t.Fatalf("notes: %d %v", code, out)
			}
			if resolutions.Load() != 1 {
				t.Fatalf("%d resolutions announced, want 1", resolutions.Load())
			}
		})
	}
}
