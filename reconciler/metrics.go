package reconciler

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reconcilehq/reconcile/ledger"
)

// Metrics are the runs' metric families: scheduled runs by provider and
// result with their duration (counted by the RunWorker through Outcome),
// and when each provider last finished a run, read from the books by
// Refresh (runs of other replicas and of `reconcile run` included).
// Register Collectors() with a Prometheus registry to export them.
type Metrics struct {
	Runs     *prometheus.CounterVec
	Duration *prometheus.HistogramVec
	LastRun  *prometheus.GaugeVec

	mu        sync.Mutex
	providers []string
}

// runResults are the results of a scheduled run, exported at zero by Init.
var runResults = []string{OutcomeFinished, OutcomeFailed, OutcomeBusy, OutcomeSkipped}

// NewMetrics creates unregistered metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		Runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_runs_total",
			Help: "Scheduled reconcile runs by provider and result (finished, failed, busy, skipped)."}, []string{"provider", "result"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "reconcile_run_duration_seconds",
			Help: "Duration of scheduled reconcile runs.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 10)}, []string{"provider"}),
		LastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "reconcile_last_successful_run_timestamp_seconds",
			Help: "Unix time at which the latest finished reconcile run of the provider finished (0: none yet)."}, []string{"provider"}),
	}
}

// Collectors lists the metrics for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Runs, m.Duration, m.LastRun}
}

// Init creates at zero the series known at start: the runs and durations
// of every provider, the last run of each scheduled one. Refresh reads the
// last runs of providers.
func (m *Metrics) Init(providers, scheduled []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.providers = providers
	for _, p := range providers {
		for _, r := range runResults {
			m.Runs.WithLabelValues(p, r)
		}
		m.Duration.WithLabelValues(p)
	}
	for _, p := range scheduled {
		m.LastRun.WithLabelValues(p)
	}
}

// Outcome counts a scheduled run by result and times the finished ones:
// the RunWorker's Outcome.
func (m *Metrics) Outcome(provider, result string, took time.Duration) {
	m.Runs.WithLabelValues(provider, result).Inc()
	if result == OutcomeFinished {
		m.Duration.WithLabelValues(provider).Observe(took.Seconds())
	}
}

// RunLister lists a provider's latest runs; a ledger.Store has it.
type RunLister interface {
	ListRuns(ctx context.Context, provider string, limit int) ([]ledger.Run, error)
}

// Refresh sets the last finished run of each provider of Init from the
// books.
func (m *Metrics) Refresh(ctx context.Context, s RunLister) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.providers {
		runs, err := s.ListRuns(ctx, p, 50)
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
			m.LastRun.WithLabelValues(p).Set(float64(last.UnixNano()) / 1e9)
		}
	}
	return nil
}
