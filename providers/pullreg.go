package providers

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reconcilehq/reconcile/ledger"
)

// Results of a registration for pulling, the values of the result label.
const (
	// RegistrationMade: the provider was asked and accepted (or answered
	// that it was registered already), and the books record it.
	RegistrationMade = "registered"
	// RegistrationRecorded: the books record it already; nothing was asked.
	RegistrationRecorded = "recorded"
	// RegistrationFailed: the provider refused, could not be reached, or
	// the books could not be read or written.
	RegistrationFailed = "failed"
)

// RegistrationMetrics count registrations for pulling. Register
// Collectors() with a Prometheus registry to export them.
type RegistrationMetrics struct {
	// Registrations counts them by provider and result (RegistrationMade,
	// RegistrationRecorded, RegistrationFailed).
	Registrations *prometheus.CounterVec
}

// NewRegistrationMetrics creates an unregistered counter.
func NewRegistrationMetrics() *RegistrationMetrics {
	return &RegistrationMetrics{Registrations: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reconcile_pull_registrations_total",
		Help: "Registrations for pulling (M-Pesa's Pull Transactions API) that serve made at its start, by provider and result " +
			"(registered, recorded: the books had it already, failed)."}, []string{"provider", "result"})}
}

// Collectors lists the metrics for registration.
func (m *RegistrationMetrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Registrations}
}

// Init creates at zero every result of each provider.
func (m *RegistrationMetrics) Init(providers []string) {
	for _, p := range providers {
		for _, r := range []string{RegistrationMade, RegistrationRecorded, RegistrationFailed} {
			m.Registrations.WithLabelValues(p, r)
		}
	}
}

// RegisterPulls registers, for each provider of registrars in name order,
// what it needs registered for pulling unless book records it already
// (Registrar.EnsureRegistered), as by. It logs each outcome once, a failure
// at warning level with its cause, and counts it in m (when not nil). A
// failure stops neither the others nor the caller: registering again is
// tried at the next call. It returns how many failed.
func RegisterPulls(ctx context.Context, book ledger.PullRegistrationStore, registrars map[string]PullRegistrar, by string,
	m *RegistrationMetrics, logger *slog.Logger) int {
	failed := 0
	names := make([]string, 0, len(registrars))
	for name := range registrars {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		r := registrars[name]
		reg, asked, err := r.EnsureRegistered(ctx, book, by, false)
		result := RegistrationRecorded
		switch {
		case err != nil:
			result = RegistrationFailed
			failed++
			logger.LogAttrs(ctx, slog.LevelWarn, "registration for pulling failed: pulls fail until it is made; it is tried again at the next start",
				slog.String("provider", name), slog.String("short_code", r.PullShortCode()), slog.String("error", err.Error()))
		case asked:
			result = RegistrationMade
			logger.LogAttrs(ctx, slog.LevelInfo, "registered for pulling", slog.String("provider", name),
				slog.String("short_code", reg.ShortCode), slog.String("status", reg.Status), slog.String("ref", reg.ResponseRef),
				slog.String("nominated_number", reg.NominatedNumber))
		default:
			logger.LogAttrs(ctx, slog.LevelInfo, "registered for pulling already", slog.String("provider", name),
				slog.String("short_code", reg.ShortCode), slog.String("since", reg.RegisteredAt.Format(time.RFC3339)),
				slog.String("by", reg.By))
		}
		if m != nil {
			m.Registrations.WithLabelValues(name, result).Inc()
		}
	}
	return failed
}
