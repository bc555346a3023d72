package main

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/reconciler"
)

// Label values that are known when serve starts. Every family is exported
// with these at zero from the first scrape, so that dashboards and alert
// rules see a series before the first event.
var (
	runResults       = []string{"finished", "failed", "busy", "skipped"}
	callbackResults  = []string{"stored", "duplicate", "quarantined", "error"}
	claimResults     = []string{"won", "held", "final"}
	skippedWhat      = []string{"charge_job", "refund_job", "verdict"}
	chargeCallResult = []string{"succeeded", "failed", "pending", "unknown", "retryable", "permanent", "ambiguous"}
	outcomeStates    = []ledger.State{ledger.StateSucceeded, ledger.StateFailed, ledger.StateUnknown}
	eventResults     = []string{"delivered", "retry", "refused", "error"}
	findingStatuses  = []ledger.FindingStatus{ledger.FindingOpen, ledger.FindingAcknowledged, ledger.FindingResolved}
	depthQueues      = []string{queue.QueueCharges, queue.QueueEvents, queue.QueueAlerts, queue.QueueRuns}
	depthStates      = []string{"available", "running", "retryable", "scheduled", "pending", "discarded"}
	callbackCodes    = []string{"200", "400", "403", "404", "405", "408", "413", "500"}
	alertResults     = []string{alerts.ResultDelivered, alerts.ResultRecovered, alerts.ResultAlreadyDelivered, alerts.ResultSuperseded,
		alerts.ResultFailed, alerts.ResultDiscarded, alerts.ResultRejected, alerts.ResultRateLimited, alerts.ResultOrdered}
)

// serveMetrics are the metric families `reconcile serve` defines itself (the
// charge and alerts packages define theirs).
type serveMetrics struct {
	runs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// callbacks counts callback intake by provider, kind and result.
	callbacks *prometheus.CounterVec
	// callbackResponses counts the answers of the callback endpoints by
	// provider and HTTP status, refusals (signature, allowlist, size)
	// included.
	callbackResponses *prometheus.CounterVec
	books             *booksGauges
}

func newServeMetrics(store ledger.Store, logger *slog.Logger) *serveMetrics {
	return &serveMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_runs_total",
			Help: "Scheduled reconcile runs by provider and result (finished, failed, busy, skipped)."}, []string{"provider", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "reconcile_run_duration_seconds",
			Help: "Duration of scheduled reconcile runs.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 10)}, []string{"provider"}),
		callbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_callbacks_total",
			Help: "Provider callbacks received, by provider, kind and result (stored, duplicate, quarantined, error)."},
			[]string{"provider", "kind", "result"}),
		callbackResponses: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_callback_responses_total",
			Help: "Answers of the callback endpoints by provider and HTTP status code; refused deliveries (signature, allowlist, size) are the non-200 codes."},
			[]string{"provider", "code"}),
		books: newBooksGauges(store, logger),
	}
}

// runOutcome counts a scheduled run by result and times the finished ones.
func (m *serveMetrics) runOutcome(provider, result string, took time.Duration) {
	m.runs.WithLabelValues(provider, result).Inc()
	if result == reconciler.OutcomeFinished {
		m.duration.WithLabelValues(provider).Observe(took.Seconds())
	}
}

func (m *serveMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.runs, m.duration, m.callbacks, m.callbackResponses, m.books.lastRun, m.books.atRisk}
}

// known is what serve knows at start: the providers and what each can do.
type known struct {
	providers []string // every configured provider
	scheduled []string // providers with a schedule
	chargers  []string // providers that can charge
	callbacks []string // providers whose callback endpoints are served
	alerts    alerts.Mode
}

// initialise creates every label set known at start, at zero.
func initialise(k known, sm *serveMetrics, cm *charge.Metrics, am *alerts.Metrics) {
	for _, p := range k.providers {
		for _, r := range runResults {
			sm.runs.WithLabelValues(p, r)
		}
		sm.duration.WithLabelValues(p)
	}
	for _, p := range k.callbacks {
		kinds := []string{"unknown"}
		if p == mpesa.Provider {
			for _, e := range mpesa.Endpoints {
				if !slices.Contains(kinds, e.Kind) {
					kinds = append(kinds, e.Kind)
				}
			}
		}
		for _, kind := range kinds {
			for _, r := range callbackResults {
				sm.callbacks.WithLabelValues(p, kind, r)
			}
		}
		for _, c := range callbackCodes {
			sm.callbackResponses.WithLabelValues(p, c)
		}
	}
	for _, r := range claimResults {
		cm.Claims.WithLabelValues(r)
	}
	for _, w := range skippedWhat {
		cm.SkippedDuplicates.WithLabelValues(w)
	}
	for _, r := range eventResults {
		cm.EventDeliveries.WithLabelValues(r)
	}
	for _, p := range k.chargers {
		for _, r := range chargeCallResult {
			cm.ProviderCalls.WithLabelValues(p, "charge", r)
		}
		for _, s := range outcomeStates {
			cm.Outcomes.WithLabelValues(p, string(s))
			cm.RefundOutcomes.WithLabelValues(p, string(s))
		}
	}
	if am != nil {
		for _, r := range alertResults {
			am.Deliveries.WithLabelValues(string(k.alerts), r)
		}
		am.PossibleDuplicates.WithLabelValues(string(k.alerts))
		for _, s := range []string{"slack", "local"} {
			am.RateLimitWaits.WithLabelValues(s)
			am.RateLimitWaitSeconds.WithLabelValues(s)
		}
	}
	sm.books.init(k)
}

// booksGauges are the gauges read from the books: when each provider last
// finished a run, and the money open findings put at risk. They are set at
// start, after every run of this process, and every minute (runs of other
// replicas and of `reconcile run`).
type booksGauges struct {
	store   booksStore
	logger  *slog.Logger
	lastRun *prometheus.GaugeVec
	atRisk  *prometheus.GaugeVec

	mu        sync.Mutex
	providers []string
	riskKeys  map[[2]string]bool
}

// atRiskScanLimit bounds the open findings summed per refresh.
const atRiskScanLimit = 100_000

func newBooksGauges(store booksStore, logger *slog.Logger) *booksGauges {
	return &booksGauges{store: store, logger: logger, riskKeys: map[[2]string]bool{},
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "reconcile_last_successful_run_timestamp_seconds",
			Help: "Unix time at which the latest finished reconcile run of the provider finished (0: none yet)."}, []string{"provider"}),
		atRisk: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "reconcile_open_at_risk",
			Help: "Money at risk in open findings, by provider and currency, in major units (approximate: for alerting only; the books hold exact decimals)."},
			[]string{"provider", "currency"}),
	}
}

func (g *booksGauges) init(k known) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.providers = k.providers
	for _, p := range k.scheduled {
		g.lastRun.WithLabelValues(p)
	}
	if slices.Contains(k.providers, mpesa.Provider) {
		g.riskKeys[[2]string{mpesa.Provider, mpesa.Currency}] = true
		g.atRisk.WithLabelValues(mpesa.Provider, mpesa.Currency)
	}
}

// refresh reads both gauges from the books.
func (g *booksGauges) refresh(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.providers {
		runs, err := g.store.ListRuns(ctx, p, 50)
		if err != nil {
			return err
		}
		var last time.Time
		for _, r := range runs {
			if r.State == ledger.RunFinished && r.FinishedAt.After(last) {
				last = r.FinishedAt
			}
		}
		if !last.IsZero() {
			g.lastRun.WithLabelValues(p).Set(float64(last.UnixNano()) / 1e9)
		}
	}
	open, err := g.store.ListFindings(ctx, ledger.FindingFilter{Statuses: []ledger.FindingStatus{ledger.FindingOpen}, Limit: atRiskScanLimit})
	if err != nil {
		return err
	}
	if len(open) == atRiskScanLimit {
		g.logger.Warn("reconcile_open_at_risk sums only the first open findings", "limit", atRiskScanLimit)
	}
	sums := map[[2]string]decimal.Decimal{}
	for _, f := range open {
		if f.AtRisk.Currency == "" {
			continue
		}
		k := [2]string{f.Provider, f.AtRisk.Currency}
		sums[k] = sums[k].Add(f.AtRisk.Value)
	}
	for k := range sums {
		g.riskKeys[k] = true
	}
	for k := range g.riskKeys {
		// A float only here, at the edge: Prometheus samples are floats.
		v, _ := sums[k].Float64()
		g.atRisk.WithLabelValues(k[0], k[1]).Set(v)
	}
	return nil
}

// refreshLogged refreshes and logs a failure; the gauges keep their values.
func (g *booksGauges) refreshLogged(ctx context.Context) {
	if err := g.refresh(ctx); err != nil && ctx.Err() == nil {
		g.logger.Warn("reading run times and open findings for metrics", "error", err)
	}
}

// loop refreshes the gauges every interval until ctx ends.
func (g *booksGauges) loop(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			g.refreshLogged(ctx)
		}
	}
}

// countResponses counts the status codes a callback handler answers.
func countResponses(provider string, c *prometheus.CounterVec, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		c.WithLabelValues(provider, strconv.Itoa(rec.code)).Inc()
	})
}

type statusRecorder struct {
	http.ResponseWriter
	code    int
	written bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.written {
		s.code, s.written = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.written = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (the M-Pesa
// handler sets read deadlines).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// findingsCollector exports the findings by provider, kind and status at
// scrape time; every (known provider, kind, status) is exported, at zero
// when there are none.
type findingsCollector struct {
	store     findingsCounter
	providers []string
}

var findingsDesc = prometheus.NewDesc("reconcile_findings", "Findings by provider, kind and status.",
	[]string{"provider", "kind", "status"}, nil)

func (f *findingsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- findingsDesc }

func (f *findingsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := f.store.CountFindings(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(findingsDesc, err)
		return
	}
	n := map[[3]string]float64{}
	for _, p := range f.providers {
		for _, k := range ledger.Kinds {
			for _, s := range findingStatuses {
				n[[3]string{p, string(k), string(s)}] = 0
			}
		}
	}
	for _, c := range counts {
		n[[3]string{c.Provider, string(c.Kind), string(c.Status)}] += float64(c.N)
	}
	for k, v := range n {
		ch <- prometheus.MustNewConstMetric(findingsDesc, prometheus.GaugeValue, v, k[0], k[1], k[2])
	}
}

// depthCollector exports River's queue depth at scrape time, every queue
// and state at zero when empty.
type depthCollector struct{ q *queue.Queue }

var depthDesc = prometheus.NewDesc("reconcile_queue_jobs", "Jobs waiting, running or discarded, by queue and state.",
	[]string{"queue", "state"}, nil)

func (d *depthCollector) Describe(ch chan<- *prometheus.Desc) { ch <- depthDesc }

func (d *depthCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	depth, err := d.q.Depth(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(depthDesc, err)
		return
	}
	n := map[queue.DepthKey]int64{}
	for _, q := range depthQueues {
		for _, s := range depthStates {
			n[queue.DepthKey{Queue: q, State: s}] = 0
		}
	}
	for k, v := range depth {
		n[k] += v
	}
	for k, v := range n {
		ch <- prometheus.MustNewConstMetric(depthDesc, prometheus.GaugeValue, float64(v), k.Queue, k.State)
	}
}
