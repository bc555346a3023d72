package alerts

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Delivery results counted by Metrics.Deliveries.
const (
	ResultDelivered        = "delivered"         // posted and recorded
	ResultRecovered        = "recovered"         // an earlier try had posted it (bot mode history lookup); recorded without posting
	ResultAlreadyDelivered = "already_delivered" // the alert was delivered before the job ran again
	ResultSuperseded       = "superseded"        // a run summary replaced by a newer one before it went out
	ResultFailed           = "failed"            // a try failed and will be retried
	ResultDiscarded        = "discarded"         // the last try failed; the alert is given up
	ResultRejected         = "rejected"          // Slack refused the message for good
	ResultRateLimited      = "rate_limited"      // snoozed: Slack's 429 or the channel's token bucket
	ResultOrdered          = "ordered"           // snoozed behind an earlier undelivered alert of the channel
)

// Metrics counts deliveries. Register its Collectors with the process's
// registry; one Metrics serves every Deliverer of a process.
type Metrics struct {
	// Deliveries counts delivery outcomes by mode and result (Result*).
	Deliveries *prometheus.CounterVec
	// PossibleDuplicates counts alerts posted again after a try whose outcome
	// was unknown (a crash, a timeout, a 5xx) in webhook mode, where no
	// earlier post can be looked up, and posts that lost a race to be
	// recorded.
	PossibleDuplicates *prometheus.CounterVec
	// RateLimitWaits counts waits for a channel, by source: "slack" (429
	// Retry-After) or "local" (the token bucket).
	RateLimitWaits *prometheus.CounterVec
	// RateLimitWaitSeconds sums those waits.
	RateLimitWaitSeconds *prometheus.CounterVec
	// ParentUpdates counts chat.update calls that mark the first message
	// of a resolved finding, by result ("updated", "failed").
	ParentUpdates *prometheus.CounterVec
}

// NewMetrics creates unregistered collectors.
func NewMetrics() *Metrics {
	return &Metrics{
		Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "reconcile", Subsystem: "alerts", Name: "deliveries_total",
			Help: "Slack alert delivery outcomes by mode and result.",
		}, []string{"mode", "result"}),
		PossibleDuplicates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "reconcile", Subsystem: "alerts", Name: "possible_duplicates_total",
			Help: "Slack alerts posted again after a try whose outcome was unknown and could not be looked up.",
		}, []string{"mode"}),
		RateLimitWaits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "reconcile", Subsystem: "alerts", Name: "rate_limit_waits_total",
			Help: "Waits before posting to a Slack channel, by source (slack: 429 Retry-After, local: token bucket).",
		}, []string{"source"}),
		RateLimitWaitSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "reconcile", Subsystem: "alerts", Name: "rate_limit_wait_seconds_total",
			Help: "Seconds waited before posting to a Slack channel, by source.",
		}, []string{"source"}),
		ParentUpdates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "reconcile", Subsystem: "alerts", Name: "parent_updates_total",
			Help: "Updates of the first Slack message of a resolved finding, by result.",
		}, []string{"result"}),
	}
}

// Collectors lists the collectors to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Deliveries, m.PossibleDuplicates, m.RateLimitWaits, m.RateLimitWaitSeconds, m.ParentUpdates}
}

func (m *Metrics) result(mode Mode, result string) {
	m.Deliveries.WithLabelValues(string(mode), result).Inc()
}

func (m *Metrics) duplicate(mode Mode) {
	m.PossibleDuplicates.WithLabelValues(string(mode)).Inc()
}

func (m *Metrics) wait(source string, d time.Duration) {
	m.RateLimitWaits.WithLabelValues(source).Inc()
	m.RateLimitWaitSeconds.WithLabelValues(source).Add(d.Seconds())
}

// results are every delivery result, for Init.
var results = []string{ResultDelivered, ResultRecovered, ResultAlreadyDelivered, ResultSuperseded,
	ResultFailed, ResultDiscarded, ResultRejected, ResultRateLimited, ResultOrdered}

// Init creates at zero every series of mode known at start, so that
// dashboards and alert rules see them from the first scrape.
func (m *Metrics) Init(mode Mode) {
	for _, r := range results {
		m.Deliveries.WithLabelValues(string(mode), r)
	}
	m.PossibleDuplicates.WithLabelValues(string(mode))
	for _, s := range []string{"slack", "local"} {
		m.RateLimitWaits.WithLabelValues(s)
		m.RateLimitWaitSeconds.WithLabelValues(s)
	}
}
