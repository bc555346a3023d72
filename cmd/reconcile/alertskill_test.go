package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// TestAlertWorkerKilledMidDelivery kills `reconcile serve` with SIGKILL after
// Slack took an alert's message but before the worker recorded it. After a
// restart the alert is delivered: in bot-token mode without a second post
// (found in the channel's history by its metadata); in webhook mode, which
// cannot look messages up, posted again and counted as a possible duplicate.
func TestAlertWorkerKilledMidDelivery(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"bot", "webhook"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			alertKilled(t, mode)
		})
	}
}

func alertKilled(t *testing.T, mode string) {
	ctx := context.Background()
	url := dbtest.PostgresURL(t)
	var (
		alertsYAML string
		env        = []string{"RECONCILE_DATABASE_URL=" + url}
		fail       func(alertstest.Fault)
		posts      func() map[string]int
		waitPosts  func(context.Context, int) error
	)
	switch mode {
	case "bot":
		bot := alertstest.NewBot(t, time.Now)
		alertsYAML = fmt.Sprintf("  mode: bot\n  channel: C0FINANCE\n  api_url: %s\n", bot.APIURL())
		env = append(env, "RECONCILE_ALERTS_BOT_TOKEN=xoxb-test-token")
		fail = func(f alertstest.Fault) { bot.Fail("chat.postMessage", f) }
		posts, waitPosts = bot.PostsPerAlert, bot.WaitForPosts
	default:
		hook := alertstest.NewWebhook(t, time.Now, "finance-ops")
		alertsYAML = "  mode: webhook\n  channel: finance-ops\n"
		env = append(env, "RECONCILE_ALERTS_WEBHOOK_URL="+hook.URLs()["finance-ops"])
		fail = func(f alertstest.Fault) { hook.Fail(f) }
		posts, waitPosts = hook.PostsPerAlert, hook.WaitForPosts
	}
	cfg := writeConfig(t, "http:\n  listen: 127.0.0.1:0\nqueue:\n  job_timeout: 3s\n  rescue_after: 3s\n  shutdown_grace: 5s\nalerts:\n"+alertsYAML)

	// A window with a payment nobody asked for: its run records a summary
	// alert and enqueues its delivery.
	store, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	amount, _ := money.Parse("750", "KES")
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	if _, err := store.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "mpesa", ID: "SKA1B2C3D4", Type: ledger.TxnCharge,
		Status: ledger.TxnSucceeded, Amount: amount, OccurredAt: at, Reference: "WALKIN"},
		ledger.Source{Channel: "c2b_confirmation", Ref: "c2b:SKA1B2C3D4", ReceivedAt: at}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cliEnv(t, env, "run", "--config", cfg, "--provider", "mpesa", "--from", "2026-11-02", "--to", "2026-11-03", "--no-pull")
	if code != 0 || !strings.Contains(out, "unknown_charge") {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	recorded, err := store.ListAlerts(ctx, 0, 10)
	if err != nil || len(recorded) != 1 {
		t.Fatalf("alerts = %+v, %v", recorded, err)
	}
	alertID := recorded[0].ID

	// Slack takes the message, then the answer hangs: kill the worker then.
	fail(alertstest.Fault{Accept: true, Hang: time.Minute})
	first := startProc(t, "serve-1", env, "serve", "--config", cfg)
	waitCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := waitPosts(waitCtx, 1); err != nil {
		t.Fatalf("no post reached Slack: %v\n%s", err, first.output())
	}
	first.kill()

	second := startProc(t, "serve-2", env, "serve", "--config", cfg)
	base := second.adminURL()
	var a ledger.Alert
	err = poll.Until(ctx, 90*time.Second, 250*time.Millisecond, func() (bool, error) {
		var err error
		a, err = store.GetAlert(ctx, alertID)
		return a.State == ledger.AlertDelivered, err
	})
	if err != nil {
		t.Fatalf("alert %d is %s after the restart: %v\n%s", alertID, a.State, err, second.output())
	}
	n := posts()[fmt.Sprint(alertID)]
	dups := metric(t, base, `reconcile_alerts_possible_duplicates_total{mode="webhook"}`)
	second.term()
	switch mode {
	case "bot":
		if n != 1 {
			t.Fatalf("bot mode posted alert %d %d times, want once", alertID, n)
		}
	default:
		if n != 2 || dups != "1" {
			t.Fatalf("webhook mode posted alert %d %d times with %q counted duplicates, want 2 and 1", alertID, n, dups)
		}
	}
	t.Logf("%s mode: worker killed after Slack took the message; after restart the alert is delivered, posted %d time(s)", mode, n)
}
