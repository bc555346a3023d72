package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/service"
)

// Secrets of the test server (they only ever come from the environment in
// a real process; here they are set on the loaded configuration).
const (
	testAPIToken      = "tok_test_openapi_0123456789"
	testPathToken     = "0123456789abcdef0123456789abcdef"
	testWebhookSecret = "whsec_test_openapi_secret"
)

// syncBuffer is a log sink shared by the server's goroutines.
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

// testServer builds the real `reconcile serve` wiring on url with every
// HTTP surface switched on: the intents API, the M-Pesa callbacks (any
// source address) and the Stripe webhook, an hourly M-Pesa schedule and
// Slack alerts in webhook mode, then as adjust changes the configuration.
// Nothing is started.
func testServer(t *testing.T, url string, adjust ...func(*config.Config)) (*testService, *syncBuffer) {
	t.Helper()
	file := writeConfig(t, fmt.Sprintf(`
database_url: %q
http:
  listen: 127.0.0.1:0
  admin_listen: 127.0.0.1:0
providers:
  mpesa:
    callbacks:
      public_url: http://127.0.0.1:1
      allow_any_ip: true
schedules:
  mpesa:
    cron: "CRON_TZ=Africa/Nairobi 30 2 * * *"
`, url))
	cfg, err := config.Load(config.Source{File: file})
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTP.APIToken = testAPIToken
	cfg.Providers.Mpesa.Callbacks.PathToken = testPathToken
	cfg.Providers.Stripe.WebhookSecrets = []string{testWebhookSecret}
	// A Stripe charger, so that intents can be created; nothing charges
	// (no worker runs in these tests).
	cfg.Providers.Stripe.APIKey = "sk_test_openapi_0123456789"
	cfg.Providers.Stripe.BaseURL = "http://127.0.0.1:1"
	cfg.Alerts.Mode = "webhook"
	cfg.Alerts.Channel = "finance"
	cfg.Alerts.WebhookURL = "http://127.0.0.1:1/hooks/test"
	for _, f := range adjust {
		f(&cfg)
	}
	logs := &syncBuffer{}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: logs, cfg: cfg, clock: time.Now,
		logger: slog.New(slog.NewJSONHandler(logs, nil))}
	t.Cleanup(a.close)
	s, err := newServer(t.Context(), a)
	if err != nil {
		t.Fatalf("newServer: %v\n%s", err, logs)
	}
	return &testService{Server: s, store: a.deps.Store}, logs
}

// testService is the service under test with its books.
type testService struct {
	*service.Server
	store ledger.Store
}

// documentedFamilies are the metric families the docs list; each must be
// exported from the first scrape.
var documentedFamilies = []string{
	"reconcile_runs_total", "reconcile_run_duration_seconds", "reconcile_findings",
	"reconcile_charge_claims_total", "reconcile_skipped_duplicates_total", "reconcile_provider_calls_total",
	"reconcile_charge_outcomes_total", "reconcile_refund_outcomes_total", "reconcile_event_deliveries_total", "reconcile_callbacks_total",
	"reconcile_callback_responses_total", "reconcile_alerts_deliveries_total", "reconcile_alerts_possible_duplicates_total",
	"reconcile_alerts_rate_limit_waits_total", "reconcile_queue_jobs",
	"reconcile_last_successful_run_timestamp_seconds", "reconcile_open_at_risk", "reconcile_pull_registrations_total",
}

// scrape reads the admin listener's /metrics.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// sample returns the value of the family's series with exactly labels.
func sample(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no family %s", name)
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if fmt.Sprint(got) != fmt.Sprint(labels) {
			continue
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

// reconcileOneDay books an unknown M-Pesa charge of KES 1,500.00 on
// 7 March 2024 and reconciles that day: one finished run, one open finding.
func reconcileOneDay(t *testing.T, url string) {
	t.Helper()
	stmt := filepath.Join(t.TempDir(), "statement.csv")
	body := "Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n" +
		`SC71AB12CD,2024-03-07 09:15:00,2024-03-07 09:14:58,Pay Bill from 2547****0111 - MARY ATIENO Acc. HSE-12,Completed,"1,500.00",,"1,500.00",TRUE,Pay Bill Online,2547****0111 - MARY ATIENO,,HSE-12` + "\n"
	if err := os.WriteFile(stmt, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := cli(t, "import", "statement", "--provider", "mpesa", stmt, "--database-url", url); code != 0 {
		t.Fatalf("import: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "run", "--provider", "mpesa", "--from", "2024-03-07", "--to", "2024-03-08", "--no-pull", "--database-url", url); code != 0 {
		t.Fatalf("run: %d %s %s", code, out, errOut)
	}
}

// TestMetricsFromStart: every documented family is on the admin listener
// from the first scrape, the run-time and at-risk gauges are read from the
// books at start, and neither metrics nor health are on the public port.
func TestMetricsFromStart(t *testing.T) {
	t.Parallel()
	for name, newURL := range map[string]func(testing.TB) string{"postgres": dbtest.PostgresURL, "sqlite": dbtest.SQLiteURL} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := newURL(t)
			reconcileOneDay(t, url)
			s, logs := testServer(t, url)
			fams := scrape(t, s.Admin())
			for _, f := range documentedFamilies {
				if fams[f] == nil || len(fams[f].GetMetric()) == 0 {
					t.Errorf("family %s is not exported at start", f)
				}
			}
			// The documented families are all of ours.
			for f := range fams {
				if strings.HasPrefix(f, "reconcile_") && !contains(documentedFamilies, f) && f != "reconcile_alerts_rate_limit_wait_seconds_total" && f != "reconcile_alerts_parent_updates_total" {
					t.Errorf("family %s is exported but not documented here", f)
				}
			}
			last := sample(t, fams, "reconcile_last_successful_run_timestamp_seconds", map[string]string{"provider": "mpesa"})
			if age := float64(time.Now().UnixNano())/1e9 - last; age < 0 || age > 300 {
				t.Errorf("last successful run %v s ago, want the run just made", age)
			}
			if got := sample(t, fams, "reconcile_open_at_risk", map[string]string{"provider": "mpesa", "currency": "KES"}); got != 1500 {
				t.Errorf("open at risk = %v, want 1500", got)
			}
			if got := sample(t, fams, "reconcile_findings", map[string]string{"provider": "mpesa", "kind": "unknown_charge", "status": "open"}); got != 1 {
				t.Errorf("open unknown charges = %v, want 1", got)
			}
			for labels, want := range map[[2]string]float64{{"charges", "discarded"}: 0, {"runs", "available"}: 0} {
				if got := sample(t, fams, "reconcile_queue_jobs", map[string]string{"queue": labels[0], "state": labels[1]}); got != want {
					t.Errorf("queue jobs %v = %v, want %v", labels, got, want)
				}
			}
			if got := sample(t, fams, "reconcile_runs_total", map[string]string{"provider": "mpesa", "result": "failed"}); got != 0 {
				t.Errorf("failed runs = %v", got)
			}
			if got := sample(t, fams, "reconcile_callbacks_total", map[string]string{"provider": "mpesa", "kind": "stk_callback", "result": "quarantined"}); got != 0 {
				t.Errorf("quarantined stk callbacks = %v", got)
			}
			for path, want := range map[string]int{"/healthz": 200, "/readyz": 200} {
				rec := httptest.NewRecorder()
				s.Admin().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != want {
					t.Errorf("admin %s = %d", path, rec.Code)
				}
				rec = httptest.NewRecorder()
				s.Public().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusNotFound {
					t.Errorf("public %s = %d, want 404", path, rec.Code)
				}
			}
			rec := httptest.NewRecorder()
			s.Public().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			if rec.Code != http.StatusNotFound {
				t.Errorf("public /metrics = %d, want 404", rec.Code)
			}
			// The schedule's next run is logged at start, in Nairobi time.
			if !regexp.MustCompile(`"msg":"schedule","provider":"mpesa",.*"next_run":"\d{4}-\d\d-\d\dT02:30:00\+03:00"`).MatchString(logs.String()) {
				t.Errorf("no next run logged:\n%s", logs)
			}
		})
	}
}

// TestOpenAtRiskFollowsTheBooks: the gauge drops to zero once the finding
// is resolved and the books are read again.
func TestOpenAtRiskFollowsTheBooks(t *testing.T) {
	t.Parallel()
	url := dbtest.SQLiteURL(t)
	s, _ := testServer(t, url)
	if got := sample(t, scrape(t, s.Admin()), "reconcile_open_at_risk", map[string]string{"provider": "mpesa", "currency": "KES"}); got != 0 {
		t.Fatalf("at start = %v", got)
	}
	reconcileOneDay(t, url)
	// A server reads the gauges from the books when it starts.
	s, _ = testServer(t, url)
	if got := sample(t, scrape(t, s.Admin()), "reconcile_open_at_risk", map[string]string{"provider": "mpesa", "currency": "KES"}); got != 1500 {
		t.Fatalf("after the run = %v", got)
	}
	code, out, errOut := cli(t, "findings", "list", "--database-url", url, "--format", "json")
	id := regexp.MustCompile(`"id":\s*"([^"]+)"`).FindStringSubmatch(out)
	if code != 0 || id == nil {
		t.Fatalf("findings list: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "findings", "resolve", id[1], "--note", "refunded by hand", "--database-url", url); code != 0 {
		t.Fatalf("resolve: %d %s %s", code, out, errOut)
	}
	s, _ = testServer(t, url)
	if got := sample(t, scrape(t, s.Admin()), "reconcile_open_at_risk", map[string]string{"provider": "mpesa", "currency": "KES"}); got != 0 || math.IsNaN(got) {
		t.Fatalf("after resolving = %v, want 0", got)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestAdminAddressTaken: a taken admin address stops serve before any work
// starts, naming the setting.
func TestAdminAddressTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	s, _ := testServer(t, dbtest.SQLiteURL(t), func(cfg *config.Config) { cfg.HTTP.AdminListen = taken.Addr().String() })
	err = s.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "http.admin_listen "+taken.Addr().String()) {
		t.Fatalf("run = %v, want an error naming http.admin_listen", err)
	}
}
