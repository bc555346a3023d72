package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/api"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/internal/poll"
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
		req.Header.Set(api.ActorHeader, actor)
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

// TestFindingsAPIServed checks that `reconcile serve` serves the findings
// API behind the API token, and the console in local mode.
func TestFindingsAPIServed(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	sd := fixture.Books(t, url)
	cfg := writeConfig(t, "http:\n  listen: "+freePort(t)+"\nconsole:\n  mode: local\n  local_user: amina\n")
	srv := startProc(t, "serve", []string{"RECONCILE_DATABASE_URL=" + url, "RECONCILE_HTTP_API_TOKEN=" + findingsToken}, "serve", "--config", cfg)
	base := srv.url()
	if code, _ := (apiCall{t: t, base: base}).do("GET", "/v1/findings", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", code)
	}
	c := apiCall{t: t, base: base, token: findingsToken}
	code, out := c.do("POST", "/v1/findings/"+sd.Unknown+"/ack", "gina", `{"note":"on it"}`)
	if code != 200 || strings.Join(historyOf(t, out), "|") != "opened run 1 run|acknowledged gina api" {
		t.Fatalf("ack through serve: %d %v\n%s", code, out, srv.output())
	}

	resp, err := http.Get(base + "/console/findings/" + sd.Unknown)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "amina (operator)") || !strings.Contains(string(page), "acknowledged") {
		t.Fatalf("console: %d\n%s", resp.StatusCode, page)
	}
	for origin, want := range map[string]int{"https://evil.example": http.StatusForbidden, "": http.StatusSeeOther} {
		req, _ := http.NewRequest(http.MethodPost, base+"/console/findings/"+sd.Unknown+"/note", strings.NewReader("note=from+the+console"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("console note with origin %q: %d, want %d", origin, resp.StatusCode, want)
		}
	}
	_, out = c.do("GET", "/v1/findings/"+sd.Unknown, "", "")
	if got := strings.Join(historyOf(t, out), "|"); got != "opened run 1 run|acknowledged gina api|noted amina web" {
		t.Fatalf("history after the console: %s", got)
	}
	srv.term()
}

// TestConsoleOnItsOwnListener: with console.listen the console answers on
// its own address and no longer on the public callback port.
func TestConsoleOnItsOwnListener(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	sd := fixture.Books(t, url)
	consoleAddr := freePort(t)
	cfg := writeConfig(t, "http:\n  listen: "+freePort(t)+"\nconsole:\n  mode: local\n  local_user: amina\n  listen: "+consoleAddr+"\n")
	srv := startProc(t, "serve", []string{"RECONCILE_DATABASE_URL=" + url}, "serve", "--config", cfg)
	base := srv.url()
	get := func(u string) (int, string) {
		resp, err := http.Get(u)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var code int
	var page string
	poll.Wait(t, 30*time.Second, "the console's own listener", func() bool {
		code, page = get("http://" + consoleAddr + "/console/findings/" + sd.Unknown)
		return code != 0
	})
	if code != 200 || !strings.Contains(page, "amina (operator)") {
		t.Fatalf("console on its listener: %d\n%s\n%s", code, page, srv.output())
	}
	if code, _ := get(base + "/console/findings"); code != http.StatusNotFound {
		t.Errorf("console on the public port: %d, want 404", code)
	}
}
