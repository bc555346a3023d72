package findings

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
)

// MetricsStore is what the findings' metrics read; a ledger.Store has it.
type MetricsStore interface {
	ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error)
	Counter
}

// Metrics are the findings' metric families: reconcile_findings, by
// provider, kind and status, read from the books at scrape time, and
// reconcile_open_at_risk, the money at risk in unresolved findings by provider
// and currency, read by Refresh. Register Collectors() with a Prometheus
// registry to export them.
type Metrics struct {
	AtRisk *prometheus.GaugeVec

	store     MetricsStore
	logger    *slog.Logger
	providers []string

	mu       sync.Mutex
	riskKeys map[[2]string]bool
}

// atRiskScanLimit bounds the open findings summed per refresh.
const atRiskScanLimit = 100_000

// NewMetrics creates unregistered metrics over store. providers are the
// configured providers, exported at zero; currencies names the currency a
// provider's money at risk is exported in from the start (M-Pesa: KES).
func NewMetrics(store MetricsStore, providers []string, currencies map[string]string, logger *slog.Logger) *Metrics {
	m := &Metrics{store: store, logger: logger, providers: providers, riskKeys: map[[2]string]bool{},
		AtRisk: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "reconcile_open_at_risk",
			Help: "Money at risk in unresolved (open and acknowledged) findings, by provider and currency, in major units (approximate: for alerting only; the books hold exact decimals)."},
			[]string{"provider", "currency"}),
	}
	for _, p := range providers {
		if cur, ok := currencies[p]; ok {
			m.riskKeys[[2]string{p, cur}] = true
			m.AtRisk.WithLabelValues(p, cur)
		}
	}
	return m
}

// Collectors lists the metrics for registration. A scrape's query runs in
// a context of ctx's values, not cancelled with it (a scrape during
// shutdown still answers), bounded to two seconds.
func (m *Metrics) Collectors(ctx context.Context) []prometheus.Collector {
	return []prometheus.Collector{m.AtRisk, &countCollector{store: m.store, providers: m.providers, base: context.WithoutCancel(ctx)}}
}

// Refresh sums the money at risk in unresolved findings (AtRiskStatuses,
// as the console and the API total them) from the books. A
// currency once exported stays, at zero when nothing is at risk.
func (m *Metrics) Refresh(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	open, err := m.store.ListFindings(ctx, ledger.FindingFilter{Statuses: AtRiskStatuses, Limit: atRiskScanLimit})
	if err != nil {
		return err
	}
	if len(open) == atRiskScanLimit {
		m.logger.Warn("reconcile_open_at_risk sums only the first open findings", "limit", atRiskScanLimit)
	}
	sums := map[[2]string]decimal.Decimal{}
	for _, f := range open {
		if !CountsAtRisk(f) {
			continue
		}
		k := [2]string{f.Provider, f.AtRisk.Currency}
		sums[k] = sums[k].Add(f.AtRisk.Value)
	}
	for k := range sums {
		m.riskKeys[k] = true
	}
	for k := range m.riskKeys {
		// A float only here, at the edge: Prometheus samples are floats.
		v, _ := sums[k].Float64()
		m.AtRisk.WithLabelValues(k[0], k[1]).Set(v)
	}
	return nil
}

// countCollector exports the findings by provider, kind and status at
// scrape time; every (known provider, kind, status) is exported, at zero
// when there are none.
type countCollector struct {
	store     Counter
	providers []string
	// base is the context a scrape's query derives from: a scrape brings
	// none (prometheus.Collector has no context).
	base context.Context
}

var (
	countDesc = prometheus.NewDesc("reconcile_findings", "Findings by provider, kind and status.",
		[]string{"provider", "kind", "status"}, nil)
	statuses = []ledger.FindingStatus{ledger.FindingOpen, ledger.FindingAcknowledged, ledger.FindingResolved}
)

func (c *countCollector) Describe(ch chan<- *prometheus.Desc) { ch <- countDesc }

func (c *countCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(c.base, 2*time.Second)
	defer cancel()
	counts, err := c.store.CountFindings(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(countDesc, err)
		return
	}
	n := map[[3]string]float64{}
	for _, p := range c.providers {
		for _, k := range ledger.Kinds {
			for _, s := range statuses {
				n[[3]string{p, string(k), string(s)}] = 0
			}
		}
	}
	for _, cnt := range counts {
		n[[3]string{cnt.Provider, string(cnt.Kind), string(cnt.Status)}] += float64(cnt.N)
	}
	for k, v := range n {
		ch <- prometheus.MustNewConstMetric(countDesc, prometheus.GaugeValue, v, k[0], k[1], k[2])
	}
}
