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

// Label values known before the first event: Init creates their series at
// zero, so that dashboards and alert rules see them from the first scrape.
var (
	claimResults     = []string{"won", "held", "final"}
	skippedWhat      = []string{"charge_job", "refund_job", "verdict"}
	chargeCallResult = []string{"succeeded", "failed", "pending", "unknown", "retryable", "permanent", "ambiguous"}
	outcomeStates    = []ledger.State{ledger.StateSucceeded, ledger.StateFailed, ledger.StateUnknown}
	eventResults     = []string{"delivered", "retry", "refused", "error"}
)

// Init creates at zero every series known at start: claims, skipped
// duplicates and event deliveries by result, and the calls and outcomes of
// each charging provider.
func (m *Metrics) Init(chargers []string) {
	for _, r := range claimResults {
		m.Claims.WithLabelValues(r)
	}
	for _, w := range skippedWhat {
		m.SkippedDuplicates.WithLabelValues(w)
	}
	for _, r := range eventResults {
		m.EventDeliveries.WithLabelValues(r)
	}
	for _, p := range chargers {
		for _, r := range chargeCallResult {
			m.ProviderCalls.WithLabelValues(p, "charge", r)
		}
		for _, s := range outcomeStates {
			m.Outcomes.WithLabelValues(p, string(s))
			m.RefundOutcomes.WithLabelValues(p, string(s))
		}
	}
}
