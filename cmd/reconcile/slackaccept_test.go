package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestSlackAcceptSuggestion runs `reconcile serve` on each engine with the
// Slack signing secret and bot token from the environment. A payer typed
// account number INV1O01 for INV1001: the run's unknown_charge and
// missing_at_provider suggest each other and are posted with an Accept
// suggestion button. A signed press matches them in the books with the
// Slack user as actor, resolves both (history: matched and resolved by the
// user, surface slack), rewrites the message, and the follow-ups in the
// threads say who matched them and where; a retried delivery of the press
// changes nothing.
func TestSlackAcceptSuggestion(t *testing.T) {
	t.Parallel()
	for _, engine := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"postgres", func(t *testing.T) string { return dbtest.NewSchemaURL(t) }},
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "reconcile.db") }},
	} {
		t.Run(engine.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dbURL := engine.url(t)
			bot := alertstest.NewBot(t, time.Now)
			secret := "slack-signing-secret-accept-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			listen := freePort(t)
			base := "http://" + listen
			cfg := writeConfig(t, fmt.Sprintf(`
http:
  listen: %s
alerts:
  mode: bot
  channel: C0FINOPS
  api_url: %s
  immediate_severity: low
  interactions:
    enabled: true
    allowed_users: [U0OPS]
`, listen, bot.APIURL()))
			env := []string{"RECONCILE_DATABASE_URL=" + dbURL, "RECONCILE_ALERTS_BOT_TOKEN=xoxb-000000000000-ACCEPTTEST",
				"RECONCILE_ALERTS_SIGNING_SECRET=" + secret}
			dir := t.TempDir()
			intents := filepath.Join(dir, "intents.csv")
			stmt := filepath.Join(dir, "statement.csv")
			write := func(path, body string) {
				if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write(intents, "key,provider,amount,currency,status,created_at,reference,customer\n"+
				"charge:order-6001,mpesa,1500.00,KES,succeeded,2026-03-14T09:10:00+03:00,INV1001,254712340845\n")
			write(stmt, "Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n"+
				`SCE9TY1PO1,14-03-2026 09:12:31,14-03-2026 09:12:05,Pay Bill from 2547****0845 - JANE W Acc. INV1O01,Completed,"1,500.00",,"1,500.00",TRUE,Pay Bill Online,2547****0845 - JANE W,,INV1O01`+"\n")
			for _, args := range [][]string{
				{"migrate"},
				{"import", "intents", intents},
				{"import", "statement", "--provider", "mpesa", stmt},
				{"run", "--provider", "mpesa", "--from", "2026-03-14", "--no-pull"},
			} {
				if code, out, errOut := cliEnv(t, env, append(args, "--config", cfg)...); code != 0 {
					t.Fatalf("%s: %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
				}
			}
			store, err := database.Open(ctx, dbURL, database.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(store.Close)
			unknown := findingOfKind(t, store, ledger.KindUnknownCharge)
			missing := findingOfKind(t, store, ledger.KindMissingAtProvider)
			if unknown.Suggestion.IntentKey != "charge:order-6001" || missing.Suggestion.FindingID != unknown.ID {
				t.Fatalf("no suggestion: %+v / %+v", unknown.Suggestion, missing.Suggestion)
			}

			srv := startProc(t, "serve", env, "serve", "--config", cfg)
			if got := srv.url(); got != base {
				t.Fatalf("serving at %s, want %s", got, base)
			}
			delivered := func() bool {
				as, err := store.ListAlerts(ctx, 0, 100)
				if err != nil || len(as) == 0 {
					return false
				}
				for _, a := range as {
					if a.State != ledger.AlertDelivered {
						return false
					}
				}
				return true
			}
			poll.Wait(t, time.Minute, "the run's alerts delivered to Slack", delivered)
			msg := messageOf(t, bot, unknown)
			value := buttonValue(t, msg, "reconcile_accept")

			b, err := json.Marshal(map[string]any{"type": "block_actions", "team": map[string]any{"id": "T0TEAM"},
				"user":      map[string]any{"id": "U0OPS", "name": "ops", "team_id": "T0TEAM"},
				"container": map[string]any{"type": "message", "channel_id": msg.Channel, "message_ts": msg.TS},
				"actions": []map[string]any{{"type": "button", "action_id": "reconcile_accept", "block_id": "reconcile_actions",
					"value": value, "action_ts": "1773468000.000100"}}})
			if err != nil {
				t.Fatal(err)
			}
			body := url.Values{"payload": {string(b)}}.Encode()
			press := func(retry bool) {
				t.Helper()
				req, err := http.NewRequest(http.MethodPost, base+"/slack/interactions", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				stamp := strconv.FormatInt(time.Now().Unix(), 10)
				mac := hmac.New(sha256.New, []byte(secret))
				mac.Write([]byte("v0:" + stamp + ":" + body))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("X-Slack-Request-Timestamp", stamp)
				req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
				if retry {
					req.Header.Set("X-Slack-Retry-Num", "1")
					req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("press: %d\n%s", resp.StatusCode, srv.output())
				}
			}
			history := func(id string) []string {
				t.Helper()
				evs, err := store.FindingHistory(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, ev := range evs {
					out = append(out, string(ev.Action)+" "+ev.Who()+" "+string(ev.Surface))
				}
				return out
			}
			before := map[string]int{unknown.ID: len(history(unknown.ID)), missing.ID: len(history(missing.ID))}

			unpressed, _ := postAt(bot, msg.Channel, msg.TS)
			press(false)
			l, err := store.GetManualLink(ctx, "mpesa", "SCE9TY1PO1")
			if err != nil || l.IntentKey != "charge:order-6001" || l.Actor != "@ops (U0OPS)" {
				t.Fatalf("manual link after the press: %+v, %v\n%s", l, err, srv.output())
			}
			for id, n := range before {
				f, err := store.GetFinding(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				h := history(id)
				if f.Status != ledger.FindingResolved || len(h) != n+2 || h[n] != "matched @ops (U0OPS) slack" || h[n+1] != "resolved @ops (U0OPS) slack" {
					t.Errorf("%s after the press: %s, history %v", f.Kind, f.Status, h)
				}
			}
			// The press redraws the message with who accepted the match; the
			// worker's follow-up may redraw it again, as resolved, before or
			// after that. Neither version offers the button again.
			poll.Wait(t, time.Minute, "the message redrawn as accepted", func() bool {
				pressed, _ := postAt(bot, msg.Channel, msg.TS)
				for _, v := range append(pressed.Earlier, pressed.Blocks) {
					if strings.Contains(string(v), "Suggested match accepted* by @ops (U0OPS)") {
						return true
					}
				}
				return false
			})
			pressed, _ := postAt(bot, msg.Channel, msg.TS)
			if pressed.Updates <= unpressed.Updates {
				t.Fatalf("the press did not redraw the message:\n%s", pressed.Blocks)
			}
			for _, v := range append(pressed.Earlier[unpressed.Updates+1:], pressed.Blocks) {
				if strings.Contains(string(v), `"reconcile_accept"`) || !strings.Contains(string(v), "by @ops (U0OPS)") {
					t.Errorf("Slack message after the press:\n%s", v)
				}
			}

			// The worker posts the follow-ups: who matched them and where.
			poll.Wait(t, time.Minute, "the follow-ups delivered", func() bool {
				n := 0
				for _, p := range bot.Posts() {
					if p.ThreadTS != "" && strings.Contains(p.Text, "matched by hand by @ops (U0OPS) in Slack") {
						n++
					}
				}
				return n == 2 && delivered()
			})

			// Slack retries the press: nothing changes.
			alertsBefore, err := store.ListAlerts(ctx, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			press(true)
			for id, n := range before {
				if h := history(id); len(h) != n+2 {
					t.Errorf("history of %s after a retried press: %v", id, h)
				}
			}
			if as, err := store.ListAlerts(ctx, 0, 100); err != nil || len(as) != len(alertsBefore) {
				t.Errorf("a retried press planned alerts: %d, was %d (%v)", len(as), len(alertsBefore), err)
			}
			if !strings.Contains(srv.output(), "applied once already") {
				t.Errorf("the retry was not recognised:\n%s", srv.output())
			}
			if strings.Contains(srv.output(), secret) || strings.Contains(srv.output(), "ACCEPTTEST") {
				t.Errorf("a secret in the log")
			}
			srv.term()
		})
	}
}
