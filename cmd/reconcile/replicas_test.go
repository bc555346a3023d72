package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
)

// The schedule of TestReplicas: a run every 2 seconds over 4-second windows,
// with 1 second of tolerance on either side of a window.
const (
	replicaWindow    = 4 * time.Second
	replicaTolerance = time.Second
)

// TestReplicas runs three `reconcile serve` processes on one PostgreSQL with
// a schedule every 2 seconds over 4-second windows, while provider evidence
// keeps arriving and the leader is killed with SIGKILL and restarted. Each
// window must be reconciled once: one run attempt (two only for a window the
// killed leader held), one pull from the provider per attempt, its findings
// written by one run, and each Slack alert sent once.
func TestReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.PostgresURL(t)
	bot := alertstest.NewBot(t, time.Now)
	daraja := newPullCounter(t)
	shortCode, passKey, key, secret := daraja.fake.Credentials()
	cfg := writeConfig(t, fmt.Sprintf(`
http:
  listen: 127.0.0.1:0
queue:
  job_timeout: 20s
  rescue_after: 25s
reconcile:
  lease: 6s
  tolerance: %s
schedules:
  mpesa:
    cron: "*/2 * * * * *"
    window: %s
    lookback: 0
    catch_up: 10
providers:
  mpesa:
    base_url: %s
    short_code: "%s"
    callbacks:
      public_url: https://pay.example.com
    pull:
      enabled: true
alerts:
  mode: bot
  channel: C0FINANCE
  api_url: %s
`, replicaTolerance, replicaWindow, daraja.url, shortCode, bot.APIURL()))
	env := []string{"RECONCILE_DATABASE_URL=" + url, "RECONCILE_ALERTS_BOT_TOKEN=xoxb-test-token",
		"RECONCILE_PROVIDERS_MPESA_CONSUMER_KEY=" + key, "RECONCILE_PROVIDERS_MPESA_CONSUMER_SECRET=" + secret,
		"RECONCILE_PROVIDERS_MPESA_PASS_KEY=" + passKey, "RECONCILE_PROVIDERS_MPESA_CALLBACKS_PATH_TOKEN=" + strings.Repeat("t", 40),
		"RECONCILE_PROVIDERS_MPESA_PULL_NOMINATED_NUMBER=254700000000"}
	daraja.register(t, shortCode, passKey, key, secret)
	start := time.Now()

	store, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	finished := func() int {
		runs, err := store.ListRuns(ctx, "mpesa", 1000)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range runs {
			if r.State == ledger.RunFinished {
				n++
			}
		}
		return n
	}

	stopPlanting := make(chan struct{})
	var planted sync.WaitGroup
	planted.Go(func() {
		amount, _ := money.Parse("250", "KES")
		tick := time.NewTicker(700 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stopPlanting:
				return
			case <-tick.C:
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
	poll.Wait(t, time.Minute, "two windows reconciled", func() bool { return finished() >= 2 })
	// Kill the leader: the one that schedules. A window it held when it
	// died may be taken over once its lease runs out: that window alone
	// may have a second attempt.
	leader := waitLeader(t, url, replicas, -1)
	killedOwner := fmt.Sprintf(":%d", replicas[leader].cmd.Process.Pid)
	replicas[leader].kill()
	heldByKilled := map[string]bool{}
	runs, err := store.ListRuns(ctx, "mpesa", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.State == ledger.RunRunning && strings.HasSuffix(r.Owner, killedOwner) {
			heldByKilled[r.Key] = true
		}
	}
	newLeader := waitLeader(t, url, replicas, leader)
	replicas[leader] = startProc(t, fmt.Sprintf("replica-%d-restarted", leader), env, "serve", "--config", cfg)
	replicas[leader].url() // serving
	afterRestart := finished()
	poll.Wait(t, time.Minute, "two more windows reconciled after the restart", func() bool { return finished() >= afterRestart+2 })
	close(stopPlanting)
	planted.Wait()
	plantedUntil := time.Now()

	// Let the last windows close, be run and be announced.
	first := start.UTC().Truncate(replicaWindow).Add(replicaWindow)
	// A window the killed leader held is run again once River rescues its
	// job and its lease has run out.
	settled := func() bool {
		for w := first; w.Add(replicaWindow).Before(plantedUntil); w = w.Add(replicaWindow) {
			r, err := store.GetRunByKey(ctx, ledger.RunKey("mpesa", w, w.Add(replicaWindow)))
			if err != nil || r.State != ledger.RunFinished {
				return false
			}
		}
		for k := range heldByKilled {
			r, err := store.GetRunByKey(ctx, k)
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
	poll.Wait(t, 90*time.Second, "every window reconciled and announced", settled)
	for _, r := range replicas {
		r.term()
	}

	runs, err = store.ListRuns(ctx, "mpesa", 1000)
	if err != nil {
		t.Fatal(err)
	}
	byFrom := map[time.Time]ledger.Run{}
	byID := map[int64]ledger.Run{}
	attempts, takenOver := 0, 0
	pulls := daraja.pulls()
	for _, r := range runs {
		byFrom[r.From] = r
		byID[r.ID] = r
		attempts += r.Attempt
		switch {
		case r.State == ledger.RunFinished:
		case r.To.Before(plantedUntil) || heldByKilled[r.Key]:
			t.Errorf("window %s: state %s after %d attempt(s) (%s)", r.Key, r.State, r.Attempt, r.Error)
		default:
			// Scheduled after the evidence stopped; the replicas were
			// stopped before it could finish.
			continue
		}
		switch {
		case r.Attempt == 2 && heldByKilled[r.Key]:
			takenOver++ // its holder died: taken over once
		case r.Attempt != 1:
			t.Errorf("window %s was run %d times", r.Key, r.Attempt)
		}
		// Each attempt pulls once, after its claim; the killed holder may
		// have died before it pulled. Counted at the provider, this sees a
		// second run whatever the runs table says.
		allowed := 1
		if heldByKilled[r.Key] {
			allowed = 2
		}
		p := pulls[pullStart(r.From)]
		if p < 1 || p > allowed || p > r.Attempt {
			t.Errorf("window %s: %d pull(s) from the provider for %d attempt(s)", r.Key, p, r.Attempt)
		}
	}
	pullTotal := 0
	for start, n := range pulls {
		pullTotal += n
		if _, ok := byFrom[windowOf(start)]; !ok {
			t.Errorf("a pull from %s belongs to no run", start)
		}
	}
	// Every 4-second window from the start to the end of planting was run.
	var windows int
	for w := first; w.Add(replicaWindow).Before(plantedUntil); w = w.Add(replicaWindow) {
		windows++
		if _, ok := byFrom[w]; !ok {
			t.Errorf("window starting %s was never reconciled", w.Format(time.RFC3339))
		}
	}

	// Findings: each written by one run, and once unless that window was
	// taken over (a second run writes it again and moves its last sighting).
	findings, err := store.ListFindings(ctx, ledger.FindingFilter{Provider: "mpesa", Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		r, ok := byID[f.FirstRunID]
		switch {
		case !ok:
			t.Errorf("finding %s was written by run %d, which is no run of ours", f.ID, f.FirstRunID)
		case f.LastRunID != f.FirstRunID:
			t.Errorf("finding %s written by runs %d and %d", f.ID, f.FirstRunID, f.LastRunID)
		case !heldByKilled[r.Key] && !f.LastSeenAt.Equal(f.FirstSeenAt):
			t.Errorf("finding %s of window %s written twice (first %s, last %s)", f.ID, r.Key, f.FirstSeenAt, f.LastSeenAt)
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
	t.Logf("3 replicas, the leader (replica %d) killed and restarted, replica %d led next: %d windows checked, %d runs, %d attempts (%d taken over from the killed leader); "+
		"%d pulls; %d findings, each written by one run; %d alerts, %d posts, each once",
		leader, newLeader, windows, len(runs), attempts, takenOver, pullTotal, len(findings), len(alertsSent), len(bot.Posts()))
}

// waitLeader waits until River has elected one of the replicas leader, other
// than not (-1 for any), and returns its index.
func waitLeader(t *testing.T, url string, replicas []*proc, not int) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	leader := -1
	poll.Wait(t, time.Minute, "a replica to lead", func() bool {
		var id string
		if err := conn.QueryRow(context.Background(), `SELECT leader_id FROM river_leader WHERE expires_at > now()`).Scan(&id); err != nil {
			return false
		}
		for i, r := range replicas {
			if i != not && strings.HasSuffix(id, fmt.Sprintf("_pid%d", r.cmd.Process.Pid)) {
				leader = i
				return true
			}
		}
		return false
	})
	return leader
}

// pullCounter is the fake Daraja API behind a handler that counts pull
// queries by the start of the span they ask for.
type pullCounter struct {
	fake   *mpesafake.Server
	url    string
	mu     sync.Mutex
	starts map[string]int
}

func newPullCounter(t *testing.T) *pullCounter {
	t.Helper()
	p := &pullCounter{fake: mpesafake.New(mpesafake.Config{Seed: 1}), starts: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == mpesafake.PathPullQuery {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var q struct{ StartDate, OffSetValue string }
			if json.Unmarshal(body, &q) == nil && q.OffSetValue == "0" {
				p.mu.Lock()
				p.starts[q.StartDate]++
				p.mu.Unlock()
			}
		}
		p.fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(p.fake.Close)
	p.url = srv.URL
	return p
}

// register registers the short code for pulls, as an operator does once.
func (p *pullCounter) register(t *testing.T, shortCode, passKey, key, secret string) {
	t.Helper()
	pl, err := mpesa.NewPuller(mpesa.Config{BaseURL: p.url, ShortCode: shortCode, PassKey: passKey, ConsumerKey: key, ConsumerSecret: secret},
		mpesa.PullConfig{NominatedNumber: "254700000000", CallbackURL: "https://pay.example.com/daraja/c2b/confirmation"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pl.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// pulls returns the first-page pull queries by span start.
func (p *pullCounter) pulls() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.starts))
	for k, v := range p.starts {
		out[k] = v
	}
	return out
}

// pullStart is the span start a run of the window from asks the provider
// for: the window widened by the tolerance, in Daraja's zone and layout.
func pullStart(from time.Time) string {
	return from.Add(-replicaTolerance).In(mpesafake.EAT).Format("2006-01-02 15:04:05")
}

// windowOf is the start of the window whose pull starts at start.
func windowOf(start string) time.Time {
	at, err := time.ParseInLocation("2006-01-02 15:04:05", start, mpesafake.EAT)
	if err != nil {
		return time.Time{}
	}
	return at.Add(replicaTolerance).UTC()
}
