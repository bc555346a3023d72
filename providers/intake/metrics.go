package intake

import (
	"context"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics count the callbacks the endpoints receive. Register Collectors()
// with a Prometheus registry to export them.
type Metrics struct {
	// Callbacks counts intake by provider, kind and result (stored,
	// duplicate, quarantined, error).
	Callbacks *prometheus.CounterVec
	// Responses counts the answers of the callback endpoints by provider
	// and HTTP status, refusals (signature, allowlist, size) included.
	Responses *prometheus.CounterVec
}

// Label values known at start, exported at zero by Init.
var (
	callbackResults = []string{"stored", "duplicate", "quarantined", "error"}
	callbackCodes   = []string{"200", "400", "403", "404", "405", "408", "413", "500"}
)

// NewMetrics creates unregistered counters.
func NewMetrics() *Metrics {
	return &Metrics{
		Callbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_callbacks_total",
			Help: "Provider callbacks received, by provider, kind and result (stored, duplicate, quarantined, error)."},
			[]string{"provider", "kind", "result"}),
		Responses: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reconcile_callback_responses_total",
			Help: "Answers of the callback endpoints by provider and HTTP status code; refused deliveries (signature, allowlist, size) are the non-200 codes."},
			[]string{"provider", "code"}),
	}
}

// Collectors lists the metrics for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Callbacks, m.Responses}
}

// Init creates at zero the series of a provider whose endpoints are
// served: each of its callback kinds ("unknown" always) by result, and each
// status code.
func (m *Metrics) Init(provider string, kinds []string) {
	for _, kind := range append([]string{"unknown"}, kinds...) {
		for _, r := range callbackResults {
			m.Callbacks.WithLabelValues(provider, kind, r)
		}
	}
	for _, c := range callbackCodes {
		m.Responses.WithLabelValues(provider, c)
	}
}

// Counting is p with every delivery counted.
func (m *Metrics) Counting(p *Processor) *CountingReceiver {
	return &CountingReceiver{p: p, c: m.Callbacks}
}

// CountingReceiver receives and delivers callbacks through a Processor and
// counts each by provider, kind and result.
type CountingReceiver struct {
	p *Processor
	c *prometheus.CounterVec
}

// Deliver is Processor.Deliver, counted.
func (r *CountingReceiver) Deliver(ctx context.Context, d Delivery) (Result, error) {
	res, err := r.p.Deliver(ctx, d)
	r.count(d.Provider, res, err)
	return res, err
}

func (r *CountingReceiver) count(provider string, res Result, err error) {
	result := "stored"
	switch {
	case err != nil:
		result = "error"
	case res.Duplicate:
		result = "duplicate"
	case res.Rejected != nil:
		result = "quarantined"
	}
	kind := res.Kind
	if kind == "" {
		kind = "unknown"
	}
	r.c.WithLabelValues(provider, kind, result).Inc()
}

// CountResponses counts the status codes a callback handler of provider
// answers.
func (m *Metrics) CountResponses(provider string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		m.Responses.WithLabelValues(provider, strconv.Itoa(rec.code)).Inc()
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
