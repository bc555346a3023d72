package alerts

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
)

const testSigningSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// slackRequest signs body as Slack does (v0, HMAC-SHA256 of
// "v0:timestamp:body").
func slackRequest(t *testing.T, base, secret string, at time.Time, payload string, retry int) *http.Response {
	t.Helper()
	body := url.Values{"payload": {payload}}.Encode()
	stamp := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + stamp + ":" + body))
	req, err := http.NewRequest(http.MethodPost, base+"/slack/interactions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", stamp)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	if retry > 0 {
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(retry))
		req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func blockActionPayload(user, name, channel, ts, actionID, value, actionTS string) string {
	b, _ := json.Marshal(map[string]any{
		"type": "block_actions", "team": map[string]any{"id": "T0TEAM"},
		"user":       map[string]any{"id": user, "name": name, "username": name, "team_id": "T0TEAM"},
		"trigger_id": "1337.42.abcd", "api_app_id": "A0APP",
		"container": map[string]any{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false},
		"channel":   map[string]any{"id": channel, "name": "finance-urgent"},
		"actions": []map[string]any{{"type": "button", "action_id": actionID, "block_id": actionsBlockID,
			"value": value, "action_ts": actionTS, "text": map[string]any{"type": "plain_text", "text": "x"}}},
	})
	return string(b)
}

func viewSubmissionPayload(user, name, viewID, meta, note string) string {
	b, _ := json.Marshal(map[string]any{
		"type": "view_submission", "team": map[string]any{"id": "T0TEAM"},
		"user": map[string]any{"id": user, "name": name, "username": name, "team_id": "T0TEAM"},
		"view": map[string]any{"id": viewID, "type": "modal", "callback_id": resolveCallbackID, "private_metadata": meta,
			"hash": "1714629600.abc", "state": map[string]any{"values": map[string]any{
				noteBlockID: map[string]any{noteActionID: map[string]any{"type": "plain_text_input", "value": note}}}}},
	})
	return string(b)
}

// TestInteractions drives the Slack interactions endpoint on each engine:
// forged and stale requests are refused and change nothing, an unauthorised
// user is refused, a retried interaction is recorded once, and the message
// is updated in place.
func TestInteractions(t *testing.T) {
	t.Parallel()
	for _, engine := range dbtest.Engines() {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setupDelivery(t, engine.New(t), ModeBot, func(c *Config) {
				c.Buttons = true
				c.FindingsURL = "https://reconcile.example.com/console/findings"
			})
			dup, _, _ := fixtureFindings(t)
			planned := b.rec.run(dup)
			var alert ledger.Alert
			for _, a := range planned {
				if a.Subject == dup.ID {
					alert = a
				}
			}
			if alert.ID == 0 {
				t.Fatalf("no alert about %s in %v", dup.ID, planned)
			}
			b.drain(t, ids(planned), 1)
			post := func() alertstest.Post {
				for _, p := range b.bot.Posts() {
					if p.AlertID == strconv.FormatInt(alert.ID, 10) {
						return p
					}
				}
				t.Fatalf("alert %d not posted", alert.ID)
				return alertstest.Post{}
			}
			p := post()
			golden.AssertJSON(t, "testdata/interactive.opened.blocks.json", p.Blocks)
			value := buttonRef{Alert: alert.ID, Finding: dup.ID}.encode()
			if !strings.Contains(string(p.Blocks), `"action_id":"reconcile_ack"`) {
				t.Fatalf("no buttons: %s", p.Blocks)
			}

			b.bot.SetGroup("S0FINOPS", "U0BOB", "U0CAROL")
			var resolutions atomic.Int32
			h, err := NewInteractions(InteractionsConfig{SigningSecret: testSigningSecret, AllowedUsers: []string{"U0ALICE"},
				AllowedGroups: []string{"S0FINOPS"}, Alerts: b.cfg, Store: b.store, Clock: b.clock.Now, HTTPClient: testHTTPClient(t),
				Findings: findings.NewService(b.store, findings.Options{Clock: b.clock.Now,
					Announce: func(context.Context, ledger.Tx, ledger.Finding) error { resolutions.Add(1); return nil }})})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			mux.Handle("POST /slack/interactions", h)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)

			history := func() []string {
				evs, err := b.store.FindingHistory(ctx, dup.ID)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, ev := range evs {
					out = append(out, string(ev.Action)+" "+ev.Who()+" "+string(ev.Surface))
				}
				return out
			}
			unchanged := func(what string, wantEvents int, wantUpdates int) {
				t.Helper()
				if h := history(); len(h) != wantEvents {
					t.Errorf("%s: history %v, want %d events", what, h, wantEvents)
				}
				if u := post().Updates; u != wantUpdates {
					t.Errorf("%s: message updated %d times, want %d", what, u, wantUpdates)
				}
			}
			start := len(history())
			ack := blockActionPayload("U0BOB", "bob", p.Channel, p.TS, actionAck, value, "1714629600.000100")

			// Forged: signed with another secret.
			if r := slackRequest(t, srv.URL, "not-the-secret", time.Now(), ack, 0); r.StatusCode != http.StatusUnauthorized {
				t.Errorf("forged: %d", r.StatusCode)
			}
			unchanged("forged", start, 0)
			// Stale: signed right, six minutes ago.
			if r := slackRequest(t, srv.URL, testSigningSecret, time.Now().Add(-6*time.Minute), ack, 0); r.StatusCode != http.StatusUnauthorized {
				t.Errorf("stale: %d", r.StatusCode)
			}
			unchanged("stale", start, 0)
			// Unauthorised: neither listed nor in the group.
			mallory := blockActionPayload("U0MALLORY", "mallory", p.Channel, p.TS, actionAck, value, "1714629600.000200")
			if r := slackRequest(t, srv.URL, testSigningSecret, time.Now(), mallory, 0); r.StatusCode != http.StatusOK {
				t.Errorf("unauthorised: %d", r.StatusCode)
			}
			unchanged("unauthorised", start, 0)
			if e := b.bot.Ephemerals(); len(e) != 1 || e[0].User != "U0MALLORY" || !strings.Contains(e[0].Text, "nothing was changed") {
				t.Errorf("refusal: %+v", e)
			}
			// A payload naming a key twice: encoding/json would keep the
			// last value (the user's "ID" matches the field id), making
			// Mallory Alice.
			twice := strings.Replace(blockActionPayload("U0MALLORY", "mallory", p.Channel, p.TS, actionAck, value, "1714629600.000300"),
				`"id":"U0MALLORY"`, `"id":"U0MALLORY","ID":"U0ALICE"`, 1)
			if r := slackRequest(t, srv.URL, testSigningSecret, time.Now(), twice, 0); r.StatusCode != http.StatusBadRequest {
				t.Errorf("a key named twice: %d", r.StatusCode)
			} else if body, _ := io.ReadAll(r.Body); !strings.Contains(string(body), "user.ID: duplicate key") {
				t.Errorf("a key named twice: %s", body)
			}
			unchanged("a key named twice", start, 0)

			// Bob (in the group) acknowledges; Slack delivers it twice.
			for retry := range 2 {
				if r := slackRequest(t, srv.URL, testSigningSecret, time.Now(), ack, retry); r.StatusCode != http.StatusOK {
					t.Errorf("ack (retry %d): %d", retry, r.StatusCode)
				}
			}
			f, err := b.store.GetFinding(ctx, dup.ID)
			if err != nil {
				t.Fatal(err)
			}
			if f.Status != ledger.FindingAcknowledged || f.AcknowledgedBy != "@bob (U0BOB)" {
				t.Errorf("after ack: %s by %q", f.Status, f.AcknowledgedBy)
			}
			h1 := history()
			if len(h1) != start+1 || h1[len(h1)-1] != "acknowledged @bob (U0BOB) slack" {
				t.Errorf("history after a retried ack: %v", h1)
			}
			p = post()
			if p.Updates < 1 || !strings.Contains(string(p.Blocks), "Acknowledged by @bob (U0BOB)") ||
				strings.Contains(string(p.Blocks), actionAck) {
				t.Errorf("message after ack (%d updates): %s", p.Updates, p.Blocks)
			}
			golden.AssertJSON(t, "testdata/interactive.acknowledged.blocks.json", p.Blocks)

			// Alice opens the resolve dialog.
			open := blockActionPayload("U0ALICE", "alice", p.Channel, p.TS, actionResolve, value, "1714629700.000100")
			if r := slackRequest(t, srv.URL, testSigningSecret, time.Now(), open, 0); r.StatusCode != http.StatusOK {
				t.Errorf("resolve button: %d", r.StatusCode)
			}
			views := b.bot.Views()
			if len(views) != 1 || views[0].TriggerID != "1337.42.abcd" {
				t.Fatalf("views opened: %+v", views)
			}
			golden.AssertJSON(t, "testdata/interactive.resolve.view.json", views[0].View)
			var view struct {
				PrivateMetadata string `json:"private_metadata"`
			}
			if err := json.Unmarshal(views[0].View, &view); err != nil {
				t.Fatal(err)
			}
			if len(history()) != start+1 {
				t.Errorf("opening the dialog changed the history: %v", history())
			}

			// Mallory submits a dialog: refused in the dialog.
			r := slackRequest(t, srv.URL, testSigningSecret, time.Now(), viewSubmissionPayload("U0MALLORY", "mallory", "V0MAL", view.PrivateMetadata, "mine"), 0)
			body, _ := io.ReadAll(r.Body)
			if r.StatusCode != http.StatusOK || !strings.Contains(string(body), `"response_action":"errors"`) {
				t.Errorf("unauthorised submission: %d %s", r.StatusCode, body)
			}
			// A blank note is refused in the dialog.
			r = slackRequest(t, srv.URL, testSigningSecret, time.Now(), viewSubmissionPayload("U0ALICE", "alice", "V1", view.PrivateMetadata, "  "), 0)
			body, _ = io.ReadAll(r.Body)
			if !strings.Contains(string(body), `"response_action":"errors"`) {
				t.Errorf("blank note: %d %s", r.StatusCode, body)
			}
			updates := post().Updates
			unchanged("refused submissions", start+1, updates)

			// Alice resolves with a note; Slack delivers it twice.
			submit := viewSubmissionPayload("U0ALICE", "alice", "V1", view.PrivateMetadata, "Refunded SE41XYZ124 to the customer")
			for retry := range 2 {
				r := slackRequest(t, srv.URL, testSigningSecret, time.Now(), submit, retry)
				body, _ := io.ReadAll(r.Body)
				if r.StatusCode != http.StatusOK || len(body) != 0 {
					t.Errorf("submission (retry %d): %d %s", retry, r.StatusCode, body)
				}
			}
			f, _ = b.store.GetFinding(ctx, dup.ID)
			if f.Status != ledger.FindingResolved || f.Resolver != "@alice (U0ALICE)" || f.Note != "Refunded SE41XYZ124 to the customer" {
				t.Errorf("after resolve: %s by %q: %q", f.Status, f.Resolver, f.Note)
			}
			h2 := history()
			if len(h2) != start+2 || h2[len(h2)-1] != "resolved @alice (U0ALICE) slack" {
				t.Errorf("history after a retried resolve: %v", h2)
			}
			if n := resolutions.Load(); n != 1 {
				t.Errorf("resolution follow-up planned %d times", n)
			}
			p = post()
			if strings.Contains(string(p.Blocks), actionsBlockID) || !strings.Contains(string(p.Blocks), "Resolved* by @alice (U0ALICE)") {
				t.Errorf("message after resolve: %s", p.Blocks)
			}
			golden.AssertJSON(t, "testdata/interactive.resolved.blocks.json", p.Blocks)

			// The old Acknowledge button, pressed again later: the finding
			// is resolved; nothing changes and the user is told.
			late := blockActionPayload("U0BOB", "bob", p.Channel, p.TS, actionAck, value, "1714629900.000100")
			slackRequest(t, srv.URL, testSigningSecret, time.Now(), late, 0)
			if len(history()) != start+2 {
				t.Errorf("a late ack changed the history: %v", history())
			}
			if e := b.bot.Ephemerals(); len(e) != 2 || !strings.Contains(e[1].Text, "resolved already") {
				t.Errorf("late ack: %+v", e)
			}
			checkNoSecrets(t, b)
		})
	}
}

// TestInteractionsConfig refuses a configuration that names nobody, or
// ids that are not Slack's.
func TestInteractionsConfig(t *testing.T) {
	cfg := testConfig(ModeBot, nil)
	for name, c := range map[string]InteractionsConfig{
		"no secret": {AllowedUsers: []string{"U0ALICE"}, Alerts: cfg, Store: dbtest.SQLite(t)},
		"nobody":    {SigningSecret: testSigningSecret, Alerts: cfg, Store: dbtest.SQLite(t)},
		"bad user":  {SigningSecret: testSigningSecret, AllowedUsers: []string{"alice"}, Alerts: cfg, Store: dbtest.SQLite(t)},
		"bad group": {SigningSecret: testSigningSecret, AllowedGroups: []string{"U0ALICE"}, Alerts: cfg, Store: dbtest.SQLite(t)},
		"webhook":   {SigningSecret: testSigningSecret, AllowedUsers: []string{"U0ALICE"}, Alerts: testConfig(ModeWebhook, nil), Store: dbtest.SQLite(t)},
	} {
		if _, err := NewInteractions(c); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), testSigningSecret) {
			t.Errorf("%s: the error shows the secret: %v", name, err)
		}
	}
}
