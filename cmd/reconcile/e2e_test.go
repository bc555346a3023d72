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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
)

// chromiumPath is Debian's chromium; .ci/run installs it.
const chromiumPath = "/usr/bin/chromium"

const e2eSlackSecret = "slack-signing-secret-e2e-0123456789"

// TestConsoleInBrowser drives the console of a real `reconcile serve` on
// PostgreSQL in headless chromium, signed in through an OpenID provider
// (mockoidc): the operator filters the findings, opens one and resolves it
// with a note, and sees the history; the finding's Slack message is then
// updated in place. A viewer sees no forms and a forged action is refused.
// Slack interactions to the same process: forged and stale requests are
// refused and change nothing; a retried press is recorded once.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("chromium is needed (Debian: apt-get install chromium; .ci/run installs it): %v", err)
	}
	ctx := context.Background()
	dbURL := dbtest.PostgresURL(t)
	bot := alertstest.NewBot(t, time.Now)
	idp, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Shutdown() })
	ic := idp.Config()

	listen := freePort(t)
	base := "http://" + listen
	statements, err := os.ReadFile("../../examples/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`
http:
  listen: %s
console:
  mode: oidc
  operators: [ops@example.com]
  viewers: [finance-readers]
  oidc:
    issuer: %s
    client_id: %s
    redirect_url: %s/console/callback
    scopes: [openid, email, groups]
alerts:
  mode: bot
  channel: C0FINOPS
  api_url: %s
  interactions:
    enabled: true
    allowed_users: [U0OPS]
%s`, listen, ic.Issuer, ic.ClientID, base, bot.APIURL(), statements))
	env := []string{"RECONCILE_DATABASE_URL=" + dbURL, "RECONCILE_ALERTS_BOT_TOKEN=xoxb-000000000000-E2ETEST",
		"RECONCILE_ALERTS_SIGNING_SECRET=" + e2eSlackSecret, "RECONCILE_CONSOLE_OIDC_CLIENT_SECRET=" + ic.ClientSecret,
		"RECONCILE_CONSOLE_OIDC_SESSION_KEY=" + strings.Repeat("e", 32)}

	// The books: the quickstart's files, reconciled by the command line. The
	// run records its alerts; serve's worker posts them to Slack.
	for _, args := range [][]string{
		{"migrate"},
		{"import", "intents", "../../examples/intents.csv"},
		{"import", "statement", "--provider", "mpesa", "../../examples/mpesa-statement.csv"},
		{"import", "callbacks", "--provider", "mpesa", "../../examples/mpesa-callbacks.jsonl"},
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
	dup := findingOfKind(t, store, ledger.KindDuplicateCharge)
	other := findingOfKind(t, store, ledger.KindStatusMismatch)

	srv := startProc(t, "serve", env, "serve", "--config", cfg)
	if got := srv.url(); got != base {
		t.Fatalf("serving at %s, want %s", got, base)
	}
	poll.Wait(t, time.Minute, "the run's alerts delivered to Slack", func() bool {
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
	})
	dupMsg := messageOf(t, bot, dup)
	otherMsg := messageOf(t, bot, other)

	// The browser: a fresh profile, offline-friendly flags.
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true))...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	bctx, cancelRun := context.WithTimeout(bctx, 90*time.Second)
	t.Cleanup(cancelRun)
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, steps...); err != nil {
			html, _ := chromedp.Run(bctx, chromedp.OuterHTML(chromedp.CSS("html")))
			t.Fatalf("%s: %v\npage:\n%s\nserve:\n%s", what, err, html, srv.output())
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	who := func() string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("header .who")))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// The history table is the page's last.
	const historyJS = `[...document.querySelectorAll("main > table")].pop().innerText`

	// The operator signs in: the console sends the browser to the provider
	// and back to the page asked for.
	idp.QueueUser(&mockoidc.MockUser{Subject: "ops-1", Email: "ops@example.com", EmailVerified: true})
	do("operator sign-in", chromedp.Navigate(base+"/console/findings"), chromedp.WaitVisible(chromedp.CSS("header .who")))
	if w := who(); w != "ops@example.com (operator)" {
		t.Fatalf("signed in as %q", w)
	}
	// Filter by kind: the form's answer marks the kind selected.
	do("filter by kind",
		chromedp.SetValue(chromedp.CSS(`select[name="kind"]`), string(ledger.KindDuplicateCharge)),
		chromedp.Click(chromedp.CSS(`form[action="/console/findings"] button[type="submit"]`)),
		chromedp.WaitReady(chromedp.CSS(`select[name="kind"] option[value="duplicate_charge"][selected]`)))
	links := eval(`[...document.querySelectorAll('main a[href^="/console/findings/f_"]')].map(a => a.getAttribute("href")).join(" ")`)
	if links != "/console/findings/"+dup.ID {
		t.Fatalf("filtered by kind: %q, want the one duplicate charge %s", links, dup.ID)
	}
	// Open it and resolve it with a note.
	const note = "refunded the second payment to the customer"
	resolveForm := `form[action="/console/findings/` + dup.ID + `/resolve"]`
	do("open the finding", chromedp.Click(chromedp.CSS(`a[href="/console/findings/`+dup.ID+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(resolveForm+` input[name="note"]`)))
	do("resolve", chromedp.SendKeys(chromedp.CSS(resolveForm+` input[name="note"]`), note),
		chromedp.Click(chromedp.CSS(resolveForm+` button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/console/findings/`+dup.ID+`/reopen"]`)))
	rows := strings.Split(eval(historyJS), "\n")
	last := strings.Split(rows[len(rows)-1], "\t")
	if len(last) != 5 || last[1] != "resolved" || last[2] != "ops@example.com" || last[3] != "web" || last[4] != note {
		t.Fatalf("history on the page:\n%s", strings.Join(rows, "\n"))
	}
	f, err := store.GetFinding(ctx, dup.ID)
	if err != nil || f.Status != ledger.FindingResolved || f.Resolver != "ops@example.com" {
		t.Fatalf("in the books: %s by %q, %v", f.Status, f.Resolver, err)
	}
	// Slack: the resolution is posted in the finding's thread and its
	// message is updated in place (chat.update) by serve's alert worker.
	poll.Wait(t, time.Minute, "the Slack message of the resolved finding updated", func() bool {
		p, ok := postAt(bot, dupMsg.Channel, dupMsg.TS)
		return ok && p.Updates > dupMsg.Updates && threadReplies(bot, dupMsg) > 0
	})
	updated, _ := postAt(bot, dupMsg.Channel, dupMsg.TS)
	// Slack names who resolved it and where: the message says so, and so
	// does the thread reply.
	if !strings.HasPrefix(updated.Text, "Resolved: ") || !strings.Contains(string(updated.Blocks), "*Resolved* by ops@example.com in the console") {
		t.Errorf("updated Slack message does not say who resolved it:\n%s\n%s", updated.Text, updated.Blocks)
	}
	var replied bool
	for _, p := range bot.Posts() {
		if p.ThreadTS == dupMsg.TS && strings.Contains(p.Text, "resolved by hand by ops@example.com in the console") {
			replied = true
		}
	}
	if !replied {
		t.Errorf("no thread reply says who resolved it and where: %+v", bot.Posts())
	}
	if strings.Contains(string(updated.Blocks), "reconcile_resolve") {
		t.Errorf("resolved finding's message still has the Resolve button:\n%s", updated.Blocks)
	}

	// Sign out; a viewer (by group) signs in, sees no forms, and a forged
	// action from the page is refused and changes nothing.
	do("sign out", chromedp.Click(chromedp.CSS(`form[action="/console/logout"] button`)),
		chromedp.WaitNotPresent(chromedp.CSS(`header .who`)))
	idp.QueueUser(&mockoidc.MockUser{Subject: "viewer-1", Email: "reader@example.com", EmailVerified: true, Groups: []string{"finance-readers"}})
	do("viewer sign-in", chromedp.Navigate(base+"/console/findings/"+other.ID), chromedp.WaitVisible(chromedp.CSS("header .who")))
	if w := who(); w != "reader@example.com (viewer)" {
		t.Fatalf("signed in as %q", w)
	}
	if n := eval(`String(document.querySelectorAll('main form').length)`); n != "0" {
		t.Fatalf("a viewer is shown %s form(s)", n)
	}
	before, err := store.FindingHistory(ctx, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The page's policy allows no script requests (connect-src), so the
	// forgery is a form added to the page and submitted.
	resp, err := chromedp.RunResponse(bctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const f = document.createElement("form");
		f.method = "post";
		f.action = "/console/findings/`+other.ID+`/resolve";
		const note = document.createElement("input");
		note.name = "note";
		note.value = "mine";
		f.appendChild(note);
		document.body.appendChild(f);
		f.submit();
	})()`))
	if err != nil || resp.Status != http.StatusForbidden {
		t.Fatalf("viewer's forged resolve: %+v, %v", resp, err)
	}
	if f, err := store.GetFinding(ctx, other.ID); err != nil || f.Status != ledger.FindingOpen {
		t.Fatalf("after the viewer's attempt: %s, %v", f.Status, err)
	}
	if after, _ := store.FindingHistory(ctx, other.ID); len(after) != len(before) {
		t.Fatalf("the viewer's attempt changed the history: %+v", after)
	}

	// Slack interactions to the live process.
	ack := buttonValue(t, otherMsg, "reconcile_ack")
	press := slackPress(t, otherMsg, ack, "1714629601.000200")
	post := func(body string, secret string, at time.Time, retry bool) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+"/slack/interactions", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		stamp := strconv.FormatInt(at.Unix(), 10)
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
		return resp.StatusCode
	}
	history := func() []string {
		t.Helper()
		evs, err := store.FindingHistory(ctx, other.ID)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ev := range evs {
			out = append(out, string(ev.Action)+" "+ev.Who()+" "+string(ev.Surface))
		}
		return out
	}
	start := history()
	if code := post(press, "not-the-signing-secret", time.Now(), false); code != http.StatusUnauthorized {
		t.Errorf("forged interaction: %d", code)
	}
	if code := post(press, e2eSlackSecret, time.Now().Add(-6*time.Minute), false); code != http.StatusUnauthorized {
		t.Errorf("stale interaction: %d", code)
	}
	if h := history(); len(h) != len(start) {
		t.Fatalf("refused interactions changed the history: %v", h)
	}
	if p, _ := postAt(bot, otherMsg.Channel, otherMsg.TS); p.Updates != otherMsg.Updates {
		t.Fatalf("refused interactions updated the Slack message")
	}
	if code := post(press, e2eSlackSecret, time.Now(), false); code != http.StatusOK {
		t.Fatalf("interaction: %d\n%s", code, srv.output())
	}
	pressed, _ := postAt(bot, otherMsg.Channel, otherMsg.TS)
	if pressed.Updates != otherMsg.Updates+1 || strings.Count(string(pressed.Blocks), "Acknowledged by @ops (U0OPS)") != 1 ||
		strings.Contains(string(pressed.Blocks), `"reconcile_ack"`) {
		t.Errorf("Slack message after the press: %d update(s)\n%s", pressed.Updates-otherMsg.Updates, pressed.Blocks)
	}
	if code := post(press, e2eSlackSecret, time.Now(), true); code != http.StatusOK {
		t.Fatalf("retried interaction: %d\n%s", code, srv.output())
	}
	h := history()
	if len(h) != len(start)+1 || h[len(h)-1] != "acknowledged @ops (U0OPS) slack" {
		t.Fatalf("history after a press and its retry: %v", h)
	}
	if f, err := store.GetFinding(ctx, other.ID); err != nil || f.Status != ledger.FindingAcknowledged {
		t.Fatalf("after the press: %s, %v", f.Status, err)
	}
	// The retry is answered without acting again; the message is redrawn
	// from the books, unchanged.
	retried, _ := postAt(bot, otherMsg.Channel, otherMsg.TS)
	if string(retried.Blocks) != string(pressed.Blocks) || !strings.Contains(srv.output(), "applied once already") {
		t.Errorf("Slack message after the retry:\n%s\nwant\n%s", retried.Blocks, pressed.Blocks)
	}
	srv.term()
}

// findingOfKind returns the one open finding of kind.
func findingOfKind(t *testing.T, store ledger.Store, kind ledger.Kind) ledger.Finding {
	t.Helper()
	fs, err := store.ListFindings(context.Background(), ledger.FindingFilter{Kinds: []ledger.Kind{kind}})
	if err != nil || len(fs) != 1 {
		t.Fatalf("findings of kind %s: %+v, %v", kind, fs, err)
	}
	return fs[0]
}

// messageOf returns the top-level Slack message that announced finding f
// on its own.
func messageOf(t *testing.T, bot *alertstest.Bot, f ledger.Finding) alertstest.Post {
	t.Helper()
	var found []alertstest.Post
	for _, p := range bot.Posts() {
		if p.ThreadTS == "" && strings.Contains(string(p.Blocks), `\"f\":\"`+f.ID+`\"`) {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d Slack message(s) with the buttons of %s; posts: %+v", len(found), f.ID, bot.Posts())
	}
	return found[0]
}

func postAt(bot *alertstest.Bot, channel, ts string) (alertstest.Post, bool) {
	for _, p := range bot.Posts() {
		if p.Channel == channel && p.TS == ts {
			return p, true
		}
	}
	return alertstest.Post{}, false
}

func threadReplies(bot *alertstest.Bot, parent alertstest.Post) int {
	n := 0
	for _, p := range bot.Posts() {
		if p.Channel == parent.Channel && p.ThreadTS == parent.TS {
			n++
		}
	}
	return n
}

// buttonValue returns the value of the button actionID in a message.
func buttonValue(t *testing.T, p alertstest.Post, actionID string) string {
	t.Helper()
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(p.Blocks, &blocks); err != nil {
		t.Fatalf("blocks: %v\n%s", err, p.Blocks)
	}
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.ActionID == actionID {
				return e.Value
			}
		}
	}
	t.Fatalf("no button %s in\n%s", actionID, p.Blocks)
	return ""
}

// slackPress is the form Slack posts when U0OPS presses a button of p.
func slackPress(t *testing.T, p alertstest.Post, value, actionTS string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": "block_actions", "team": map[string]any{"id": "T0TEAM"},
		"user":      map[string]any{"id": "U0OPS", "name": "ops", "team_id": "T0TEAM"},
		"container": map[string]any{"type": "message", "channel_id": p.Channel, "message_ts": p.TS},
		"actions": []map[string]any{{"type": "button", "action_id": "reconcile_ack", "block_id": "reconcile_actions",
			"value": value, "action_ts": actionTS}}})
	if err != nil {
		t.Fatal(err)
	}
	return url.Values{"payload": {string(b)}}.Encode()
}
