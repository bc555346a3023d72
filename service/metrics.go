package service

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/reconciler"
)

// serveMetrics are the metric families of `reconcile serve`, each defined by
// the package whose work it counts. Every family is exported with the label
// values known at start at zero, so that dashboards and alert rules see a
// series before the first event.
type serveMetrics struct {
	runs      *reconciler.Metrics
	callbacks *intake.Metrics
	findings  *findings.Metrics
	charges   *charge.Metrics
	// alerts is nil when alerts are off.
	alerts *alerts.Metrics
	// registrations counts the registrations for pulling made at start.
	registrations *providers.RegistrationMetrics
	store         ledger.Store
	logger        *slog.Logger
}

// newServeMetrics creates the families; names are the configured
// providers.
func newServeMetrics(store ledger.Store, names []string, logger *slog.Logger) *serveMetrics {
	return &serveMetrics{runs: reconciler.NewMetrics(), callbacks: intake.NewMetrics(), charges: charge.NewMetrics(),
		findings:      findings.NewMetrics(store, names, map[string]string{mpesa.Provider: mpesa.Currency}, logger),
		registrations: providers.NewRegistrationMetrics(), store: store, logger: logger}
}

// register registers every family, the queue's depth and Go's own.
func (m *serveMetrics) register(ctx context.Context, r *prometheus.Registry, q *queue.Queue) {
	r.MustRegister(m.runs.Collectors()...)
	r.MustRegister(m.callbacks.Collectors()...)
	r.MustRegister(m.findings.Collectors(ctx)...)
	r.MustRegister(m.charges.Collectors()...)
	r.MustRegister(m.registrations.Collectors()...)
	if m.alerts != nil {
		r.MustRegister(m.alerts.Collectors()...)
	}
	r.MustRegister(queue.NewDepthCollector(ctx, q))
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
func (m *serveMetrics) initialise(k known) {
	m.runs.Init(k.providers, k.scheduled)
	for _, p := range k.callbacks {
		var kinds []string
		if p == mpesa.Provider {
			for _, e := range mpesa.Endpoints {
				if !slices.Contains(kinds, e.Kind) {
					kinds = append(kinds, e.Kind)
				}
			}
		}
		m.callbacks.Init(p, kinds)
	}
	// The charging providers' series exist whether or not a charger is
	// configured: zero charges is the truth until one is.
	chargers := slices.Clone(k.chargers)
	for _, p := range []string{mpesa.Provider, "stripe"} {
		if !slices.Contains(chargers, p) {
			chargers = append(chargers, p)
		}
	}
	m.charges.Init(chargers)
	// M-Pesa is the provider that registers for pulling.
	m.registrations.Init([]string{mpesa.Provider})
	if m.alerts != nil {
		m.alerts.Init(k.alerts)
	}
}

// refresh reads the gauges kept from the books (the last run of each
// provider, the money at risk in unresolved findings) and logs a failure; they
// keep their values.
func (m *serveMetrics) refresh(ctx context.Context) {
	err := m.runs.Refresh(ctx, m.store)
	if err == nil {
		err = m.findings.Refresh(ctx)
	}
	if err != nil && ctx.Err() == nil {
		m.logger.Warn("reading run times and open findings for metrics", "error", err)
	}
}

// loop refreshes the gauges every interval until ctx ends: runs of other
// replicas and of `reconcile run` show within a minute.
func (m *serveMetrics) loop(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			m.refresh(ctx)
		}
	}
}
