package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// TestReplicas runs three `reconcile serve` processes on one PostgreSQL with
// a schedule every 2 seconds over 4-second windows, while provider evidence
// keeps arriving and one replica is killed with SIGKILL and restarted. Each
// window must be reconciled exactly once and each Slack alert sent once.
func TestReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.PostgresURL(t)
	bot := alertstest.NewBot(t, time.Now)
	cfg := writeConfig(t, fmt.Sprintf(`
http:
  listen: 127.0.0.1:0
queue:
  job_timeout: 5s
  rescue_after: 5s
reconcile:
  lease: 6s
schedules:
  mpesa:
    cron: "*/2 * * * * *"
    window: 4s
    lookback: 0
    catch_up: 10
alerts:
  mode: bot
  channel: C0FINANCE
  api_url: %s
`, bot.APIURL()))
	env := []string{"RECONCILE_DATABASE_URL=" + url, "RECONCILE_ALERTS_BOT_TOKEN=xoxb-test-token"}
	start := time.Now()

	store, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	stopPlanting := make(chan struct{})
	var planted sync.WaitGroup
	planted.Go(func() {
		amount, _ := money.Parse("250", "KES")
		for i := 0; ; i++ {
			select {
			case <-stopPlanting:
				return
			case <-time.After(700 * time.Millisecond):
			}
			now := time.Now().UTC()
			txn := ledger.ProviderTxn{Provider: "mpesa", ID: fmt.Sprintf("UNK%07d", i), Type: ledger.TxnCharge,
				Status: ledger.TxnSucceeded, Amount: amount, OccurredAt: now.Add(-200 * time.Millisecond), Reference: "NOBODY"}
			if _, err := store.UpsertProviderTxn(ctx, txn, ledger.Source{Channel: "c2b_confirmation", Ref: txn.ID, ReceivedAt: now}); err != nil {
				t.Error(err)
				return
			}
		}
	})

	replicas := make([]*proc, 3)
	for i := range replicas {
		replicas[i] = startProc(t, fmt.Sprintf("replica-%d", i), env, "serve", "--config", cfg)
	}
	time.Sleep(8 * time.Second)
	// Kill the leader: the one that schedules.
	leader := leaderIndex(t, url, replicas)
	replicas[leader].kill()
	time.Sleep(3 * time.Second)
	replicas[leader] = startProc(t, fmt.Sprintf("replica-%d-restarted", leader), env, "serve", "--config", cfg)
	time.Sleep(8 * time.Second)
	close(stopPlanting)
	planted.Wait()
	plantedUntil := time.Now()
	// Let the last windows close, be run and be announced.
	first := start.UTC().Truncate(4 * time.Second).Add(4 * time.Second)
	settled := func() bool {
		for w := first; w.Add(4 * time.Second).Before(plantedUntil); w = w.Add(4 * time.Second) {
			r, err := store.GetRunByKey(ctx, ledger.RunKey("mpesa", w, w.Add(4*time.Second)))
			if err != nil || r.State != ledger.RunFinished {
				return false
			}
		}
		as, err := store.ListAlerts(ctx, 0, 10000)
		if err != nil {
			return false
		}
		for _, a := range as {
			if a.State != ledger.AlertDelivered {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(90 * time.Second); !settled() && time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
	}
	for _, r := range replicas {
		r.term()
	}

	runs, err := store.ListRuns(ctx, "mpesa", 1000)
	if err != nil {
		t.Fatal(err)
	}
	byFrom := map[time.Time]ledger.Run{}
	retried := 0
	for _, r := range runs {
		if r.State != ledger.RunFinished {
			t.Errorf("window %s..%s: state %s after %d attempt(s) (%s)", r.From, r.To, r.State, r.Attempt, r.Error)
		}
		if r.Attempt > 1 {
			// A claim taken over after its holder died or failed: the
			// window still finished once.
			retried++
		}
		byFrom[r.From] = r
	}
	// Every 4-second window from the start to the end of planting was run.
	var windows int
	for w := first; w.Add(4 * time.Second).Before(plantedUntil); w = w.Add(4 * time.Second) {
		windows++
		if _, ok := byFrom[w]; !ok {
			t.Errorf("window starting %s was never reconciled", w.Format(time.RFC3339))
		}
	}

	alertsSent, err := store.ListAlerts(ctx, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	perAlert := bot.PostsPerAlert()
	summaries := map[string]int{}
	for _, a := range alertsSent {
		if a.State != ledger.AlertDelivered {
			t.Errorf("alert %d (%s %s) is %s", a.ID, a.Subject, a.Reason, a.State)
		}
		if n := perAlert[fmt.Sprint(a.ID)]; n != 1 {
			t.Errorf("alert %d (%s %s) posted %d times", a.ID, a.Subject, a.Reason, n)
		}
		if strings.HasPrefix(a.Reason, "summary") {
			summaries[a.Subject]++
		}
	}
	if len(bot.Posts()) != len(alertsSent) {
		t.Errorf("slack saw %d posts for %d alerts", len(bot.Posts()), len(alertsSent))
	}
	for subject, n := range summaries {
		if n != 1 {
			t.Errorf("window %s summarised %d times", subject, n)
		}
	}
	if len(summaries) < windows/2 {
		t.Errorf("only %d windows with evidence were announced (of %d windows)", len(summaries), windows)
	}
	t.Logf("3 replicas, the leader killed and restarted: %d windows checked, %d runs, each finished once (%d taken over); %d alerts, %d posts, each once",
		windows, len(runs), retried, len(alertsSent), len(bot.Posts()))
}

// leaderIndex finds which replica River elected leader.
func leaderIndex(t *testing.T, url string, replicas []*proc) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var id string
	if err := conn.QueryRow(context.Background(), `SELECT leader_id FROM river_leader`).Scan(&id); err != nil {
		t.Fatalf("river leader: %v", err)
	}
	for i, r := range replicas {
		if strings.HasSuffix(id, fmt.Sprintf("_pid%d", r.cmd.Process.Pid)) {
			return i
		}
	}
	t.Fatalf("leader %q is none of the replicas", id)
	return 0
}
