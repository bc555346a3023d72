package alerts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
)

// deliveryBundle is a Deliverer on a real store with a fake Slack.
type deliveryBundle struct {
	store   ledger.Store
	rec     *reconciler
	clock   *fakeClock
	cfg     Config
	bot     *alertstest.Bot
	hook    *alertstest.Webhook
	d       *Deliverer
	metrics *Metrics
	logs    *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// setupDelivery builds a bundle in mode; edit may change the configuration.
func setupDelivery(t *testing.T, store ledger.Store, mode Mode, edit func(*Config)) *deliveryBundle {
	t.Helper()
	b := &deliveryBundle{store: store, metrics: NewMetrics(), logs: &syncBuffer{}}
	switch mode {
	case ModeBot:
		b.rec = newReconciler(t, store, testConfig(ModeBot, nil))
		b.clock = b.rec.clock
		b.bot = alertstest.NewBot(t, b.clock.Now)
		b.cfg = testConfig(ModeBot, nil)
		b.cfg.APIURL = b.bot.APIURL()
	case ModeWebhook:
		b.rec = newReconciler(t, store, testConfig(ModeBot, nil))
		b.clock = b.rec.clock
		b.hook = alertstest.NewWebhook(t, b.clock.Now, "C0FINOPS", "C0URGENT")
		b.cfg = testConfig(ModeWebhook, b.hook.URLs())
	}
	b.cfg.Timeout = 5 * time.Second
	if edit != nil {
		edit(&b.cfg)
	}
	var err error
	b.rec.planner, err = NewPlanner(b.cfg, b.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	b.d, err = NewDeliverer(store, b.cfg, Options{
		Logger:     slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics:    b.metrics,
		Now:        b.clock.Now,
		Sleep:      b.clock.Sleep,
		HTTPClient: testHTTPClient(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// findings makes n high findings (immediate) and m medium ones.
func manyFindings(t *testing.T, high, medium int) []ledger.Finding {
	dup, _, unknown := fixtureFindings(t)
	var out []ledger.Finding
	for i := range high + medium {
		f := dup
		if i >= high {
			f = unknown
		}
		f.ProviderTxnIDs = []string{fmt.Sprintf("SE41ABC%03d", i)}
		f.IntentKey = fmt.Sprintf("charge:order-%d", 5000+i)
		if f.Kind == ledger.KindUnknownCharge {
			f.IntentKey = ""
		}
		f.ID = ledger.FindingID(f.Kind, f.IntentKey, f.ProviderTxnIDs)
		f.AtRisk = kes(t, strconv.Itoa(1000+100*i)+".00")
		out = append(out, f)
	}
	return out
}

func ids(alerts []ledger.Alert) []int64 {
	out := make([]int64, len(alerts))
	for i, a := range alerts {
		out[i] = a.ID
	}
	return out
}

// queueJob is a delivery job of the fake queue.
type queueJob struct {
	id      int64
	attempt int
	at      time.Time
	state   string
}

// drain works the jobs like River would: any available job in random
// order (as parallel workers would take them), snoozes without counting an
// attempt, retries with River's default backoff (attempt^4 s), cancels
// permanent failures and discards after max attempts. It returns each
// job's final state.
func (b *deliveryBundle) drain(t *testing.T, alertIDs []int64, seed uint64) map[int64]string {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, seed))
	jobs := make([]*queueJob, len(alertIDs))
	for i, id := range alertIDs {
		jobs[i] = &queueJob{id: id, at: b.clock.Now(), state: "available"}
	}
	for step := 0; ; step++ {
		if step > 2000 {
			t.Fatal("queue did not drain")
		}
		var open []*queueJob
		for _, j := range jobs {
			if j.state == "available" {
				open = append(open, j)
			}
		}
		if len(open) == 0 {
			break
		}
		now := b.clock.Now()
		var ready []*queueJob
		next := open[0].at
		for _, j := range open {
			if !j.at.After(now) {
				ready = append(ready, j)
			}
			if j.at.Before(next) {
				next = j.at
			}
		}
		if len(ready) == 0 {
			b.clock.Set(next)
			continue
		}
		j := ready[rng.IntN(len(ready))]
		attempt := j.attempt + 1
		err := b.d.Deliver(ctx, j.id, attempt)
		if wait, ok := RetryAfter(err); ok {
			j.at = b.clock.Now().Add(wait)
			continue
		}
		j.attempt = attempt
		switch {
		case err == nil:
			j.state = "completed"
		case IsPermanent(err):
			j.state = "cancelled"
		case attempt >= b.cfg.MaxAttempts:
			j.state = "discarded"
		default:
			j.at = b.clock.Now().Add(time.Duration(attempt*attempt*attempt*attempt) * time.Second)
		}
	}
	out := map[int64]string{}
	for _, j := range jobs {
		out[j.id] = j.state
	}
	return out
}

// checkExactlyOnceInOrder asserts that every alert was posted once, that
// each channel saw its alerts in id order, and that the ledger recorded
// each post.
func checkExactlyOnceInOrder(t *testing.T, store ledger.Store, alerts []ledger.Alert, posts []alertstest.Post) {
	t.Helper()
	ctx := context.Background()
	count := map[string]int{}
	last := map[string]int64{}
	for _, p := range posts {
		count[p.AlertID]++
		id, err := strconv.ParseInt(p.AlertID, 10, 64)
		if err != nil {
			t.Fatalf("post without alert id: %+v", p)
		}
		if id < last[p.Channel] {
			t.Errorf("channel %s: alert %d posted after alert %d", p.Channel, id, last[p.Channel])
		}
		last[p.Channel] = id
	}
	for _, a := range alerts {
		if n := count[strconv.FormatInt(a.ID, 10)]; n != 1 {
			t.Errorf("alert %d (%s) posted %d times", a.ID, a.Reason, n)
		}
		got, err := store.GetAlert(ctx, a.ID)
		if err != nil || got.State != ledger.AlertDelivered {
			t.Errorf("alert %d: state %s, %v", a.ID, got.State, err)
		}
	}
	if len(posts) != len(alerts) {
		t.Errorf("%d posts for %d alerts", len(posts), len(alerts))
	}
}

// counterValue reads a counter.
func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func counter(b *deliveryBundle, result string) int {
	return int(counterValue(b.metrics.Deliveries.WithLabelValues(string(b.cfg.Mode), result)))
}

func duplicates(b *deliveryBundle) int {
	return int(counterValue(b.metrics.PossibleDuplicates.WithLabelValues(string(b.cfg.Mode))))
}

// TestBotOutage delivers a run's alerts through an outage of the Web API
// (5xx, 429 with Retry-After, Slack errors, timeouts before and after
// Slack took the message, a failing history lookup): afterwards every
// alert is posted exactly once, in order per channel.
func TestBotOutage(t *testing.T) {
	t.Parallel()
	for _, engine := range dbtest.Engines() {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			b := setupDelivery(t, engine.New(t), ModeBot, func(c *Config) {
				c.Timeout = 2 * time.Second // the hangs below outlast it
				c.ImmediateSeverity = ledger.SeverityMedium
				c.SeverityChannels[ledger.SeverityMedium] = "C0FINOPS"
			})
			alerts := b.rec.run(manyFindings(t, 5, 4)...)
			if len(alerts) != 10 {
				t.Fatalf("planned %d alerts", len(alerts))
			}
			hang := 2 * b.cfg.Timeout
			b.bot.Fail(alertstest.PostMessage,
				alertstest.Fault{Status: 500},
				alertstest.Fault{Status: 429, RetryAfter: "2"},
				alertstest.Fault{Accept: true, Hang: hang}, // posted, answer lost
				alertstest.Fault{Status: 503},
				alertstest.Fault{SlackError: "internal_error"},
				alertstest.Fault{Hang: hang}, // not posted, answer lost
				alertstest.Fault{Status: 429, RetryAfter: "1"},
				alertstest.Fault{Accept: true, Status: 502}, // posted, then a gateway error
				alertstest.Fault{Status: 429},               // no Retry-After
			)
			b.bot.Fail(alertstest.History, alertstest.Fault{Status: 500}, alertstest.Fault{Status: 429, RetryAfter: "1"})

			states := b.drain(t, ids(alerts), 1)
			for id, s := range states {
				if s != "completed" {
					t.Errorf("job of alert %d ended %s", id, s)
				}
			}
			if n := b.bot.PendingFaults(alertstest.PostMessage); n != 0 {
				t.Errorf("%d faults not reached", n)
			}
			checkExactlyOnceInOrder(t, b.store, alerts, b.bot.Posts())
			checkRetryAfterHonoured(t, b.bot.RequestLog())
			if got := counter(b, ResultRecovered); got != 2 {
				t.Errorf("recovered %d earlier posts, want 2", got)
			}
			if duplicates(b) != 0 {
				t.Errorf("possible duplicates counted in bot mode: %d", duplicates(b))
			}
			for _, a := range alerts {
				got, _ := b.store.GetAlert(context.Background(), a.ID)
				if got.MessageTS == "" {
					t.Errorf("alert %d delivered without its message ts", a.ID)
				}
			}
			checkNoSecrets(t, b)
		})
	}
}

// TestWebhookOutage is TestBotOutage for incoming webhooks, whose outage
// faults never take the message (a webhook cannot look an earlier post up:
// TestWebhookCrashAfterPost covers that case).
func TestWebhookOutage(t *testing.T) {
	t.Parallel()
	for _, engine := range dbtest.Engines() {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			b := setupDelivery(t, engine.New(t), ModeWebhook, func(c *Config) {
				c.Timeout = 2 * time.Second // the hang below outlasts it
				c.ImmediateSeverity = ledger.SeverityMedium
				c.SeverityChannels[ledger.SeverityMedium] = "C0FINOPS"
			})
			alerts := b.rec.run(manyFindings(t, 5, 4)...)
			b.hook.Fail(
				alertstest.Fault{Status: 500},
				alertstest.Fault{Status: 429, RetryAfter: "2"},
				alertstest.Fault{Hang: 2 * b.cfg.Timeout},
				alertstest.Fault{Status: 503},
				alertstest.Fault{Status: 429}, // no Retry-After: slack-go returns a plain status error
				alertstest.Fault{Status: 429, RetryAfter: "soon"},
				alertstest.Fault{Status: 500},
				alertstest.Fault{Status: 429, RetryAfter: "1"},
			)
			states := b.drain(t, ids(alerts), 2)
			for id, s := range states {
				if s != "completed" {
					t.Errorf("job of alert %d ended %s", id, s)
				}
			}
			if n := b.hook.PendingFaults(); n != 0 {
				t.Errorf("%d faults not reached", n)
			}
			checkExactlyOnceInOrder(t, b.store, alerts, b.hook.Posts())
			checkRetryAfterHonoured(t, b.hook.RequestLog())
			// A timeout or a 5xx may have posted as far as a webhook can
			// tell: posting that alert again counts a possible duplicate.
			doubtful := map[string]bool{}
			for _, r := range b.hook.RequestLog() {
				if r.Fault != nil && (r.Fault.Status >= 500 || r.Fault.Hang > 0) {
					doubtful[r.AlertID] = true
				}
			}
			if got := duplicates(b); got != len(doubtful) || got == 0 {
				t.Errorf("possible duplicates = %d, want %d (alerts retried after a 5xx or timeout)", got, len(doubtful))
			}
			checkNoSecrets(t, b)
		})
	}
}

// checkRetryAfterHonoured asserts that after a 429 with Retry-After, no
// request reached that channel before the wait was over.
func checkRetryAfterHonoured(t *testing.T, log []alertstest.Request) {
	t.Helper()
	until := map[string]time.Time{}
	for _, r := range log {
		if r.At.Before(until[r.Channel]) {
			t.Errorf("%s request to %s at %s, before its Retry-After ended at %s", r.Method, r.Channel, r.At, until[r.Channel])
		}
		if r.Fault != nil && r.Fault.Status == 429 {
			if secs, err := strconv.Atoi(r.Fault.RetryAfter); err == nil {
				until[r.Channel] = r.At.Add(time.Duration(secs) * time.Second)
			}
		}
	}
}

// checkNoSecrets asserts that no log line and no recorded error shows the
// token or a webhook URL.
func checkNoSecrets(t *testing.T, b *deliveryBundle) {
	t.Helper()
	alerts, _ := b.store.ListAlerts(context.Background(), 0, 0)
	var text strings.Builder
	text.WriteString(b.logs.String())
	for _, a := range alerts {
		text.WriteString(a.Error + "\n")
	}
	secrets := []string{b.cfg.BotToken}
	for _, u := range b.cfg.Webhooks {
		secrets = append(secrets, u, u[strings.LastIndex(u, "/"):])
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(text.String(), s) {
			t.Errorf("secret %q in logs or errors:\n%s", s, text.String())
		}
	}
}

// storeCrash is the real store, except that recording deliveries fails
// while armed: the process died between posting and recording.
type storeCrash struct {
	ledger.Store
	mu    sync.Mutex
	armed int
}

func (s *storeCrash) MarkAlertDelivered(ctx context.Context, d ledger.AlertDelivery) (ledger.Alert, error) {
	s.mu.Lock()
	crash := s.armed > 0
	if crash {
		s.armed--
	}
	s.mu.Unlock()
	if crash {
		return ledger.Alert{}, errors.New("killed before recording")
	}
	return s.Store.MarkAlertDelivered(ctx, d)
}

// TestBotCrashAfterPost: a try posts, then dies before recording. The
// redelivery (River's rescue makes it attempt 2) finds the message by its
// metadata and records it without posting again, for a top-level message
// and for a threaded follow-up.
func TestBotCrashAfterPost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	crash := &storeCrash{Store: dbtest.SQLite(t)}
	b := setupDelivery(t, crash, ModeBot, func(c *Config) { c.HistoryLimit = 300 })
	dup, _, _ := fixtureFindings(t)
	opened := b.rec.run(dup)

	crash.armed = 1
	if err := b.d.Deliver(ctx, opened[0].ID, 1); err == nil {
		t.Fatal("delivery that could not record returned nil")
	}
	if n := len(b.bot.Posts()); n != 1 {
		t.Fatalf("%d posts", n)
	}
	// Others post to the channel meanwhile: the lookup pages through them.
	for i := range 250 {
		b.clock.Advance(time.Second)
		b.bot.Seed(alertstest.Post{Channel: opened[0].Channel, Text: "chatter " + strconv.Itoa(i)})
	}
	if err := b.d.Deliver(ctx, opened[0].ID, 2); err != nil {
		t.Fatal(err)
	}
	if got := b.bot.PostsPerAlert()[strconv.FormatInt(opened[0].ID, 10)]; got != 1 {
		t.Fatalf("alert posted %d times", got)
	}
	first, _ := b.store.GetAlert(ctx, opened[0].ID)
	if first.State != ledger.AlertDelivered || first.MessageTS != b.bot.Posts()[0].TS {
		t.Fatalf("recovered alert = %+v", first)
	}
	if err := b.d.Deliver(ctx, opened[1].ID, 1); err != nil { // the summary
		t.Fatal(err)
	}

	// The finding goes away: its follow-up is a reply in the thread.
	resolved := b.rec.run()
	var followUp ledger.Alert
	for _, a := range resolved {
		if strings.HasPrefix(a.Reason, "resolved:") {
			followUp = a
		}
	}
	crash.armed = 1
	if err := b.d.Deliver(ctx, followUp.ID, 1); err == nil {
		t.Fatal("delivery that could not record returned nil")
	}
	if err := b.d.Deliver(ctx, followUp.ID, 2); err != nil {
		t.Fatal(err)
	}
	var replies []alertstest.Post
	for _, p := range b.bot.Posts() {
		if p.ThreadTS != "" {
			replies = append(replies, p)
		}
	}
	if len(replies) != 1 || replies[0].ThreadTS != first.MessageTS || replies[0].Channel != first.Channel {
		t.Fatalf("follow-up replies = %+v, want one in thread %s", replies, first.MessageTS)
	}
	got, _ := b.store.GetAlert(ctx, followUp.ID)
	if got.State != ledger.AlertDelivered || got.ThreadTS != first.MessageTS {
		t.Fatalf("follow-up = %+v", got)
	}
	if b.bot.Posts()[0].Updates != 1 {
		t.Fatal("the first message of the resolved finding was not updated")
	}
	if counter(b, ResultRecovered) != 2 || b.bot.Requests(alertstest.Replies) == 0 {
		t.Fatalf("recovered %d, replies lookups %d", counter(b, ResultRecovered), b.bot.Requests(alertstest.Replies))
	}
	// Delivering a delivered alert again does nothing.
	if err := b.d.Deliver(ctx, followUp.ID, 3); err != nil || len(b.bot.Posts()) != 253 {
		t.Fatalf("redelivery of a delivered alert: %v, %d posts", err, len(b.bot.Posts()))
	}
}

// TestWebhookCrashAfterPost: the same crash in webhook mode posts twice;
// the duplicate is counted and logged.
func TestWebhookCrashAfterPost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	crash := &storeCrash{Store: dbtest.SQLite(t)}
	b := setupDelivery(t, crash, ModeWebhook, func(c *Config) { c.Timeout = time.Second })
	dup, _, _ := fixtureFindings(t)
	alerts := b.rec.run(dup)
	crash.armed = 1
	if err := b.d.Deliver(ctx, alerts[0].ID, 1); err == nil {
		t.Fatal("delivery that could not record returned nil")
	}
	if err := b.d.Deliver(ctx, alerts[0].ID, 2); err != nil {
		t.Fatal(err)
	}
	if got := b.hook.PostsPerAlert()[strconv.FormatInt(alerts[0].ID, 10)]; got != 2 {
		t.Fatalf("posted %d times, want 2 (webhooks cannot look up)", got)
	}
	if duplicates(b) != 1 || !strings.Contains(b.logs.String(), "posted again") {
		t.Fatalf("duplicates = %d, logs:\n%s", duplicates(b), b.logs.String())
	}
	// A timeout after Slack took the message: the same.
	b.hook.Fail(alertstest.Fault{Accept: true, Hang: 2 * b.cfg.Timeout})
	if err := b.d.Deliver(ctx, alerts[1].ID, 1); err == nil {
		t.Fatal("timed out delivery returned nil")
	}
	a, _ := b.store.GetAlert(ctx, alerts[1].ID)
	if !strings.HasPrefix(a.Error, "timeout:") {
		t.Fatalf("recorded error %q", a.Error)
	}
	if err := b.d.Deliver(ctx, alerts[1].ID, 2); err != nil {
		t.Fatal(err)
	}
	if duplicates(b) != 2 || len(b.hook.Posts()) != 4 {
		t.Fatalf("duplicates = %d, posts = %d", duplicates(b), len(b.hook.Posts()))
	}
	checkNoSecrets(t, b)
}

// TestPermanentFailures: 4xx and payload errors are not retried; the alert
// is discarded and the error names the reason, not the secret.
func TestPermanentFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		mode  Mode
		fault alertstest.Fault
		want  string
	}{
		{"webhook channel gone", ModeWebhook, alertstest.Fault{Status: 404, Body: "channel_not_found"}, "rejected: HTTP 404 Not Found: channel_not_found"},
		{"webhook bad payload", ModeWebhook, alertstest.Fault{Status: 400, Body: "invalid_payload"}, "rejected: HTTP 400 Bad Request: invalid_payload"},
		{"webhook archived", ModeWebhook, alertstest.Fault{Status: 410, Body: "channel_is_archived"}, "channel_is_archived"},
		{"bot channel not found", ModeBot, alertstest.Fault{SlackError: "channel_not_found"}, "rejected: Slack error channel_not_found"},
		{"bot invalid blocks", ModeBot, alertstest.Fault{SlackError: "invalid_blocks"}, "invalid_blocks"},
		{"bot token revoked", ModeBot, alertstest.Fault{SlackError: "token_revoked"}, "token_revoked"},
		{"bot 403", ModeBot, alertstest.Fault{Status: 403}, "HTTP 403"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setupDelivery(t, dbtest.SQLite(t), c.mode, nil)
			dup, _, _ := fixtureFindings(t)
			alerts := b.rec.run(dup)
			if c.mode == ModeBot {
				b.bot.Fail(alertstest.PostMessage, c.fault)
			} else {
				b.hook.Fail(c.fault)
			}
			err := b.d.Deliver(ctx, alerts[0].ID, 1)
			if !IsPermanent(err) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want permanent with %q", err, c.want)
			}
			if _, retry := RetryAfter(err); retry {
				t.Fatal("permanent error asks for a retry")
			}
			a, _ := b.store.GetAlert(ctx, alerts[0].ID)
			if a.State != ledger.AlertDiscarded || !strings.Contains(a.Error, c.want) {
				t.Fatalf("alert = %s %q", a.State, a.Error)
			}
			if counter(b, ResultRejected) != 1 {
				t.Fatal("rejection not counted")
			}
			checkNoSecrets(t, b)
		})
	}
}

// TestExhausted: a delivery that keeps failing is discarded after
// MaxAttempts, with the last error recorded.
func TestExhausted(t *testing.T) {
	t.Parallel()
	b := setupDelivery(t, dbtest.SQLite(t), ModeBot, func(c *Config) { c.MaxAttempts = 3 })
	dup, _, _ := fixtureFindings(t)
	alerts := b.rec.run(dup)
	for range 3 {
		b.bot.Fail(alertstest.PostMessage, alertstest.Fault{Status: 500})
	}
	states := b.drain(t, ids(alerts[:1]), 3)
	if states[alerts[0].ID] != "discarded" {
		t.Fatalf("job ended %s", states[alerts[0].ID])
	}
	a, _ := b.store.GetAlert(context.Background(), alerts[0].ID)
	if a.State != ledger.AlertDiscarded || a.Attempts != 3 || !strings.HasPrefix(a.Error, "server_error: HTTP 500") {
		t.Fatalf("alert = %s, %d attempts, %q", a.State, a.Attempts, a.Error)
	}
	if counter(b, ResultDiscarded) != 1 || counter(b, ResultFailed) != 2 {
		t.Fatalf("discarded %d, failed %d", counter(b, ResultDiscarded), counter(b, ResultFailed))
	}
}

// TestNetworkErrorHidesURL: a webhook host that refuses connections yields
// a retryable error without the URL (whose path is the secret).
func TestNetworkErrorHidesURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	secretURL := "http://127.0.0.1:1/services/T0/B0/topsecretpathvalue"
	b := setupDelivery(t, dbtest.SQLite(t), ModeWebhook, func(c *Config) {
		c.Webhooks = map[string]string{"C0FINOPS": secretURL, "C0URGENT": secretURL}
	})
	dup, _, _ := fixtureFindings(t)
	alerts := b.rec.run(dup)
	err := b.d.Deliver(ctx, alerts[0].ID, 1)
	if err == nil || IsPermanent(err) || strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("err = %v", err)
	}
	if _, ok := RetryAfter(err); ok {
		t.Fatal("network error asks for a snooze")
	}
	a, _ := b.store.GetAlert(ctx, alerts[0].ID)
	if !strings.HasPrefix(a.Error, "network: ") || strings.Contains(a.Error, "topsecret") {
		t.Fatalf("recorded error %q", a.Error)
	}
}

// TestChannelPacing: one channel gets a message per ChannelInterval after
// its burst; a longer wait than MaxLocalWait is handed back as a snooze;
// another channel is not held up.
func TestChannelPacing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDelivery(t, dbtest.SQLite(t), ModeBot, func(c *Config) {
		c.ChannelInterval = time.Second
		c.ChannelBurst = 2
		c.MaxLocalWait = 1500 * time.Millisecond
	})
	var slept []time.Duration
	advance := true
	b.d.sleep = func(ctx context.Context, d time.Duration) error {
		slept = append(slept, d)
		if advance {
			b.clock.Advance(d)
		}
		return nil
	}
	alerts := b.rec.run(manyFindings(t, 5, 0)...) // 5 urgent, then the summary
	start := b.clock.Now()
	for _, a := range alerts[:3] {
		if err := b.d.Deliver(ctx, a.ID, 1); err != nil {
			t.Fatal(err)
		}
	}
	if waited := b.clock.Now().Sub(start); waited != time.Second || !slices.Equal(slept, []time.Duration{time.Second}) {
		t.Fatalf("3 messages with burst 2 waited %s (%v), want 1s", waited, slept)
	}
	// Two deliveries at the same instant (as two workers would): the
	// second's token is 2s away, more than MaxLocalWait.
	advance = false
	if err := b.d.Deliver(ctx, alerts[3].ID, 1); err != nil {
		t.Fatal(err)
	}
	err := b.d.Deliver(ctx, alerts[4].ID, 1)
	if wait, ok := RetryAfter(err); !ok || wait != 2*time.Second {
		t.Fatalf("err = %v", err)
	}
	// The summary goes to another channel: no wait.
	slept = nil
	if err := b.d.Deliver(ctx, alerts[5].ID, 1); err != nil || len(slept) != 0 {
		t.Fatalf("other channel: %v, slept %v", err, slept)
	}
	b.clock.Advance(2 * time.Second)
	if err := b.d.Deliver(ctx, alerts[4].ID, 1); err != nil || len(slept) != 0 {
		t.Fatalf("after the snooze: %v, slept %v", err, slept)
	}
	if got := int(counterValue(b.metrics.RateLimitWaits.WithLabelValues("local"))); got != 3 {
		t.Fatalf("local waits counted %d, want 3", got)
	}
	if len(b.bot.Posts()) != 6 {
		t.Fatalf("%d posts", len(b.bot.Posts()))
	}
}

// TestOrderPerChannel: an alert waits for the earlier undelivered alerts of
// its channel, unless they are older than OrderTimeout.
func TestOrderPerChannel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDelivery(t, dbtest.SQLite(t), ModeBot, nil)
	alerts := b.rec.run(manyFindings(t, 3, 0)...)
	err := b.d.Deliver(ctx, alerts[2].ID, 1)
	if wait, ok := RetryAfter(err); !ok || wait != b.cfg.OrderWait || !strings.Contains(err.Error(), "alert "+strconv.FormatInt(alerts[0].ID, 10)) {
		t.Fatalf("out of order delivery: %v", err)
	}
	// The summary has a channel of its own: it does not wait.
	if err := b.d.Deliver(ctx, alerts[3].ID, 1); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(b.cfg.OrderTimeout + time.Second)
	if err := b.d.Deliver(ctx, alerts[2].ID, 1); err != nil {
		t.Fatalf("after the order timeout: %v", err)
	}
	if counter(b, ResultOrdered) != 1 || len(b.bot.Posts()) != 2 {
		t.Fatalf("ordered %d, posts %d", counter(b, ResultOrdered), len(b.bot.Posts()))
	}
}

// TestSupersededSummary: a summary that a newer one replaced before it
// went out is dropped, not posted stale.
func TestSupersededSummary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDelivery(t, dbtest.SQLite(t), ModeBot, nil)
	_, _, unknown := fixtureFindings(t)
	first := b.rec.run(unknown)
	second := b.rec.run(grow(t, unknown, "800.00"))
	if len(first) != 1 || len(second) != 1 {
		t.Fatalf("planned %d and %d summaries", len(first), len(second))
	}
	if err := b.d.Deliver(ctx, first[0].ID, 1); err != nil {
		t.Fatal(err)
	}
	if err := b.d.Deliver(ctx, second[0].ID, 1); err != nil {
		t.Fatal(err)
	}
	a, _ := b.store.GetAlert(ctx, first[0].ID)
	if a.State != ledger.AlertDiscarded || !strings.Contains(a.Error, "superseded") || len(b.bot.Posts()) != 1 {
		t.Fatalf("stale summary: %s %q, %d posts", a.State, a.Error, len(b.bot.Posts()))
	}
	if !strings.Contains(string(b.bot.Posts()[0].Blocks), "KES 800.00") {
		t.Fatal("the newer summary was not the one posted")
	}
}

// TestHistoryLookupNeedsScope: without the history scope a retry cannot
// rule out a duplicate; it fails for good instead of posting blind.
func TestHistoryLookupNeedsScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDelivery(t, dbtest.SQLite(t), ModeBot, nil)
	dup, _, _ := fixtureFindings(t)
	alerts := b.rec.run(dup)
	b.bot.Fail(alertstest.History, alertstest.Fault{SlackError: "missing_scope"})
	err := b.d.Deliver(ctx, alerts[0].ID, 2)
	if !IsPermanent(err) || !strings.Contains(err.Error(), "missing_scope") || len(b.bot.Posts()) != 0 {
		t.Fatalf("err = %v, %d posts", err, len(b.bot.Posts()))
	}
}

// TestEndToEndThread plans a run, delivers it in bot mode, grows and then
// resolves the finding: one escalation, one follow-up in the thread of the
// first message, and nothing more on re-runs.
func TestEndToEndThread(t *testing.T) {
	t.Parallel()
	b := setupDelivery(t, dbtest.SQLite(t), ModeBot, nil)
	dup, failed, unknown := fixtureFindings(t)
	var all []ledger.Alert
	deliver := func(alerts []ledger.Alert) {
		t.Helper()
		all = append(all, alerts...)
		for id, s := range b.drain(t, ids(alerts), 4) {
			if s != "completed" {
				t.Fatalf("alert %d: %s", id, s)
			}
		}
	}
	for range 3 {
		deliver(b.rec.run(dup, failed, unknown))
	}
	if n := len(b.bot.Posts()); n != 3 {
		t.Fatalf("three runs of one window posted %d messages, want 3 (two findings, one summary)", n)
	}
	deliver(b.rec.run(grow(t, dup, "3000.00"), failed, unknown))
	deliver(b.rec.run(grow(t, dup, "3000.00"), unknown))
	deliver(b.rec.run(grow(t, dup, "3000.00"), unknown))
	checkExactlyOnceInOrder(t, b.store, all, b.bot.Posts())

	kinds := map[string][]string{}
	var openedFailed string
	for _, p := range b.bot.Posts() {
		form, _ := url.ParseQuery(string(p.Raw))
		text := form.Get("text") // as first posted
		var kind string
		switch {
		case strings.Contains(text, "Escalated"):
			kind = "escalated dup"
		case strings.HasPrefix(text, "Resolved"):
			kind = "resolved in thread " + p.ThreadTS
		case strings.Contains(text, "reconciliation"):
			kind = "summary"
		case strings.Contains(text, "status mismatch"):
			kind, openedFailed = "opened failed", p.TS
		default:
			kind = "opened dup"
		}
		kinds[p.Channel] = append(kinds[p.Channel], kind)
	}
	want := map[string][]string{
		"C0URGENT": {"opened failed", "opened dup", "escalated dup", "resolved in thread " + openedFailed},
		"C0FINOPS": {"summary", "summary", "summary"},
	}
	for ch := range want {
		if !slices.Equal(kinds[ch], want[ch]) {
			t.Errorf("%s posts\n  %q\nwant\n  %q", ch, kinds[ch], want[ch])
		}
	}
	// The resolved finding's first message now says so.
	for _, p := range b.bot.Posts() {
		resolved := strings.Contains(string(p.Blocks), "*Resolved* ")
		if wantResolved := p.TS == openedFailed; resolved != wantResolved || (p.Updates == 1) != wantResolved {
			t.Errorf("post %s (%q): %d updates, resolved banner %v", p.TS, p.Text, p.Updates, resolved)
		}
	}
	if got := counterValue(b.metrics.ParentUpdates.WithLabelValues("updated")); got != 1 {
		t.Errorf("parent updates = %v", got)
	}
}
