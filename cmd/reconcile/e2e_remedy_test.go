package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
)

// TestRefundInBrowser drives a duplicate charge from its finding to its
// refund's confirmation, in headless chromium against a real `reconcile
// serve`, with M-Pesa's Reversal API faked: an order paid
// twice by paybill is reconciled, and an operator asks
// for the refund of the duplicate from the finding's page (above the
// KES 1,000 threshold, so it waits, and Slack is told); her own approval is
// refused; a second operator approves it from the requests page; the
// refund job sends the reversal once and its result callback settles it;
// the next run sees the reversal and resolves the finding, saying the
// refund is confirmed; and the month's close report shows the refund. On
// both engines, one after the other (one browser at a time).
func TestRefundInBrowser(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("chromium is needed (Debian: apt-get install chromium; .ci/run installs it): %v", err)
	}
	for _, e := range dbtest.EngineURLs() {
		t.Run(e.Name, func(t *testing.T) { refundInBrowser(t, e.URL(t)) })
	}
}

// refundInBrowser is TestRefundInBrowser on the database at dbURL.
func refundInBrowser(t *testing.T, dbURL string) {
	ctx := context.Background()
	bot := alertstest.NewBot(t, time.Now)
	idp, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Shutdown() })
	ic := idp.Config()
	daraja := mpesafake.New(mpesafake.Config{Seed: 11, AutoSettle: 200 * time.Millisecond,
		DecideReversal: func(mpesafake.Reversal, *rand.Rand) mpesafake.ReversalOutcome {
			return mpesafake.ReversalOutcome{ResultCode: mpesafake.ReversalSuccess}
		}})
	darajaURL := daraja.Start()
	t.Cleanup(daraja.Close)
	short, pass, key, secret := daraja.Credentials()
	initiator, credential := daraja.InitiatorCredentials()

	listen := freePort(t)
	base := "http://" + listen
	statements, err := os.ReadFile("../../examples/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`
http:
  listen: %s
charges:
  pending_poll: 1s
console:
  mode: oidc
  operators: [ops@example.com, lead@example.com]
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
approvals:
  thresholds: {KES: "1000"}
providers:
  mpesa:
    base_url: %s
    short_code: "%s"
    initiator: %s
    callbacks:
      public_url: %s
      allow_any_ip: true
%s`, listen, ic.Issuer, ic.ClientID, base, bot.APIURL(), darajaURL, short, initiator, base, statements))
	env := []string{"RECONCILE_DATABASE_URL=" + dbURL, "RECONCILE_ALERTS_BOT_TOKEN=xoxb-000000000000-E2ETEST",
		"RECONCILE_ALERTS_SIGNING_SECRET=" + e2eSlackSecret, "RECONCILE_CONSOLE_OIDC_CLIENT_SECRET=" + ic.ClientSecret,
		"RECONCILE_CONSOLE_OIDC_SESSION_KEY=" + strings.Repeat("r", 32),
		"RECONCILE_PROVIDERS_MPESA_CONSUMER_KEY=" + key, "RECONCILE_PROVIDERS_MPESA_CONSUMER_SECRET=" + secret,
		"RECONCILE_PROVIDERS_MPESA_PASS_KEY=" + pass, "RECONCILE_PROVIDERS_MPESA_CALLBACKS_PATH_TOKEN=" + strings.Repeat("p", 40),
		"RECONCILE_PROVIDERS_MPESA_SECURITY_CREDENTIAL=" + credential}
	cmd := func(args ...string) string {
		t.Helper()
		code, out, errOut := cliEnv(t, env, append(args, "--config", cfg)...)
		if code != 0 {
			t.Fatalf("%s: %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	// A customer's order charged twice by paybill two hours ago: the
	// intent, and the statement with both payments.
	paid := time.Now().Add(-2 * time.Hour).In(mpesafake.EAT)
	day := paid.Format("2006-01-02")
	dir := t.TempDir()
	intents := filepath.Join(dir, "intents.csv")
	stmt := filepath.Join(dir, "statement.csv")
	if err := os.WriteFile(intents, []byte("key,provider,amount,currency,status,created_at,reference,provider_refs,customer,kind\n"+
		"charge:order-7002,mpesa,2300.00,KES,succeeded,"+paid.Add(-time.Minute).Format(time.RFC3339)+",ORDER7002,,254722000111,charge\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	row := func(receipt string, at time.Time, balance string) string {
		ts := at.Format("02-01-2006 15:04:05")
		return receipt + "," + ts + "," + ts + ",Pay Bill from 2547****0111 - PETER O Acc. ORDER7002,Completed,\"2,300.00\",,\"" + balance +
			"\",TRUE,Pay Bill Online,2547****0111 - PETER O,,ORDER7002\n"
	}
	if err := os.WriteFile(stmt, []byte("Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,"+
		"Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n"+
		row("SDU2EF4GH5", paid, "2,300.00")+row("SDU2EF4GH6", paid.Add(time.Minute), "4,600.00")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"migrate"},
		{"import", "intents", intents},
		{"import", "statement", "--provider", "mpesa", stmt},
		{"run", "--provider", "mpesa", "--from", day, "--no-pull"},
	} {
		cmd(args...)
	}
	store, err := database.Open(ctx, dbURL, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	dup := findingOfKind(t, store, ledger.KindDuplicateCharge)

	srv := startProc(t, "serve", env, "serve", "--config", cfg)
	if got := srv.url(); got != base {
		t.Fatalf("serving at %s, want %s", got, base)
	}

	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true))...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	bctx, cancelRun := context.WithTimeout(bctx, 2*time.Minute)
	t.Cleanup(cancelRun)
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, steps...); err != nil {
			html, _ := chromedp.Run(bctx, chromedp.OuterHTML(chromedp.CSS("html")))
			t.Fatalf("%s: %v\npage:\n%s\nserve:\n%s", what, err, html, srv.output())
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return v
	}
	page := base + "/console/findings/" + dup.ID
	refundForm := `form[action="/console/findings/` + dup.ID + `/refund"]`
	approveForm := `form[action="/console/findings/` + dup.ID + `/approve"]`

	// The operator asks for the refund of the duplicate from its page.
	idp.QueueUser(&mockoidc.MockUser{Subject: "ops-1", Email: "ops@example.com", EmailVerified: true})
	do("operator sign-in", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(refundForm+` input[name="note"]`)))
	do("ask for the refund", chromedp.SendKeys(chromedp.CSS(refundForm+` input[name="note"]`), "customer paid twice"),
		chromedp.Click(chromedp.CSS(refundForm+` button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(approveForm+` button[type="submit"]`)))
	if got := text("table.remedies"); !strings.Contains(got, "refund of KES 2,300.00 (SDU2EF4GH6): customer paid twice") ||
		!strings.Contains(got, "awaiting approval") {
		t.Fatalf("remedies on the page:\n%s", got)
	}
	rs, err := store.ListRemedies(ctx, ledger.RemedyFilter{FindingIDs: []string{dup.ID}})
	if err != nil || len(rs) != 1 || rs[0].Status != ledger.RemedyAwaitingApproval || rs[0].RequestedBy != "ops@example.com" {
		t.Fatalf("request %+v, %v", rs, err)
	}
	// Slack is told, with Approve and Reject.
	poll.Wait(t, time.Minute, "the request posted to Slack", func() bool {
		for _, p := range bot.Posts() {
			if strings.Contains(p.Text, "Approval needed: refund of KES 2,300.00 (SDU2EF4GH6) asked by ops@example.com") &&
				strings.Contains(string(p.Blocks), "reconcile_approve") && strings.Contains(string(p.Blocks), "reconcile_reject") {
				return true
			}
		}
		return false
	})

	// Her own approval is refused, and changes nothing.
	do("self-approval", chromedp.Click(chromedp.CSS(approveForm+` button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(".problem")))
	if got := text(".problem"); got != "You asked for this: another operator must approve it." {
		t.Fatalf("self-approval says %q", got)
	}
	if r, err := store.GetRemedy(ctx, rs[0].ID); err != nil || r.Status != ledger.RemedyAwaitingApproval {
		t.Fatalf("after the self-approval: %+v, %v", r, err)
	}
	if _, err := store.GetIntent(ctx, findings.RefundKey(dup.ID, "SDU2EF4GH6")); err == nil {
		t.Fatal("a refused approval created the refund")
	}

	// A second operator approves it from the requests page.
	do("sign out", chromedp.Click(chromedp.CSS(`form[action="/console/logout"] button`)), chromedp.WaitNotPresent(chromedp.CSS(`header .who`)))
	idp.QueueUser(&mockoidc.MockUser{Subject: "lead-1", Email: "lead@example.com", EmailVerified: true})
	do("lead sign-in", chromedp.Navigate(base+"/console/requests"), chromedp.WaitVisible(chromedp.CSS(approveForm+` button[type="submit"]`)))
	do("approve", chromedp.Click(chromedp.CSS(approveForm+` button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("table.remedies")))
	if got := text("table.remedies"); !strings.Contains(got, "approved by lead@example.com (web)") ||
		!strings.Contains(got, findings.RefundKey(dup.ID, "SDU2EF4GH6")) {
		t.Fatalf("remedies after the approval:\n%s", got)
	}

	// The refund job sends the reversal, once; its result settles it.
	refundKey := findings.RefundKey(dup.ID, "SDU2EF4GH6")
	poll.Wait(t, time.Minute, "the refund settled by its result callback", func() bool {
		in, err := store.GetIntent(ctx, refundKey)
		return err == nil && in.State == ledger.StateSucceeded
	})
	if rv := daraja.Reversals(); len(rv) != 1 || rv[0].Original != "SDU2EF4GH6" || rv[0].Amount != "2300" {
		t.Fatalf("reversals sent: %+v", rv)
	}
	if f, _ := store.GetFinding(ctx, dup.ID); f.Status == ledger.FindingResolved {
		t.Fatal("the finding was resolved before a run saw the refund")
	}

	// The next run of the day the refund was given back resolves the
	// finding (running the payment's day again if it was another).
	today := time.Now().In(mpesafake.EAT).Format("2006-01-02")
	out := cmd("run", "--provider", "mpesa", "--from", today, "--no-pull")
	if !strings.Contains(out, dup.ID+"  duplicate_charge charge:order-7002: ") || !strings.Contains(out, "confirmed by the evidence") {
		t.Fatalf("run of %s:\n%s", today, out)
	}
	do("the finding after the run", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("table.remedies")))
	if got := text("main > dl"); !strings.Contains(got, "resolved") {
		t.Fatalf("finding after the run:\n%s", got)
	}
	const historyJS = `[...document.querySelectorAll("main > table")].pop().innerText`
	hist, err := chromedp.Run(bctx, chromedp.Evaluate[string](historyJS, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"requested\tops@example.com\tweb", "approved\tlead@example.com\tweb", "refund_created\tlead@example.com\tweb",
		"refund_confirmed\trun", "confirmed by the evidence"} {
		if !strings.Contains(hist, want) {
			t.Fatalf("history on the page has no %q:\n%s", want, hist)
		}
	}
	if rv := daraja.Reversals(); len(rv) != 1 {
		t.Fatalf("%d reversals after the run", len(rv))
	}

	// The month's close report shows the refund, who asked and who approved.
	out = cmd("report", "close", "--period", paid.Format("2006-01"), "--provider", "mpesa")
	if !strings.Contains(out, "refunded from findings              1  KES 2,300.00") ||
		!strings.Contains(out, dup.ID+"  duplicate_charge: KES 2,300.00 of SDU2EF4GH6, confirmed; asked by ops@example.com, approved by lead@example.com") {
		t.Fatalf("close report:\n%s", out)
	}
	srv.term()
}
