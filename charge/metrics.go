package charge

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/reconcilehq/reconcile/ledger"
)

// Metrics counts what the charge worker and the callbacks did. Register
// Collectors() with a Prometheus registry to export them.
type Metrics struct {
	Claims            *prometheus.CounterVec
	SkippedDuplicates *prometheus.CounterVec
	ProviderCalls     *prometheus.CounterVec
	Outcomes          *prometheus.CounterVec
	RefundOutcomes    *prometheus.CounterVec
	EventDeliveries   *prometheus.CounterVec
}

// NewMetrics creates unregistered counters.
func NewMetrics() *Metrics {
	return &Metrics{
		Claims: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_charge_claims_total",
			Help: "Claims of intents by charge workers, by result (won, held, final)."}, []string{"result"}),
		SkippedDuplicates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_skipped_duplicates_total",
			Help: "Duplicate deliveries that changed nothing, by what was duplicated."}, []string{"what"}),
		ProviderCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_provider_calls_total",
			Help: "Calls to providers by provider, call and result."}, []string{"provider", "call", "result"}),
		Outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_charge_outcomes_total",
			Help: "Intents reaching a state, by provider and state."}, []string{"provider", "state"}),
		RefundOutcomes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_refund_outcomes_total",
			Help: "Refund intents reaching a state, by provider and state."}, []string{"provider", "state"}),
		EventDeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_event_deliveries_total",
			Help: "Outgoing event deliveries by result."}, []string{"result"}),
	}
}

// Collectors lists the metrics for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Claims, m.SkippedDuplicates, m.ProviderCalls, m.Outcomes, m.RefundOutcomes, m.EventDeliveries}
}

// countOutcome counts in reaching state, as a charge or as a refund.
func (s *Service) countOutcome(in ledger.Intent, state ledger.State) {
	if in.IsRefund() {
		s.metrics.RefundOutcomes.WithLabelValues(in.Provider, string(state)).Inc()
		return
	}
	s.metrics.Outcomes.WithLabelValues(in.Provider, string(state)).Inc()
}
