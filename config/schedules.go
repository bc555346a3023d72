package config

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/reconcilehq/reconcile/schedule"
)

// ScheduleConfig says when and over which windows a provider is reconciled.
type ScheduleConfig struct {
	// Cron is when to run: five fields, six with leading seconds, or a
	// descriptor, optionally prefixed with CRON_TZ=Zone; e.g.
	// "CRON_TZ=Africa/Nairobi 30 2 * * *" (02:30 in Nairobi every day).
	Cron string `mapstructure:"cron"`
	// Window is the length of a window, aligned to midnight in the
	// provider's zone; it must divide a day. Default 24h (the local day).
	Window time.Duration `mapstructure:"window"`
	// Lookback is how many earlier windows each run reconciles again, to
	// pick up late evidence. Default 2.
	Lookback *int `mapstructure:"lookback"`
	// CatchUp caps how many windows missed during downtime are run on
	// start. Default 7.
	CatchUp *int `mapstructure:"catch_up"`
	// NoPull says to reconcile this provider's windows on stored evidence
	// only (imported reports, webhooks) although it could be pulled once
	// configured. Without it, a schedule for a provider that cannot be
	// pulled (Stripe without an API key) is refused at start: its runs would
	// report every charge not yet imported as missing. Default false.
	NoPull bool `mapstructure:"no_pull"`
}

// Spec is the schedule of provider, whose windows are cut in zone.
func (sc ScheduleConfig) Spec(provider string, zone *time.Location) (schedule.Spec, error) {
	cron, err := schedule.ParseCron(sc.Cron)
	if err != nil {
		return schedule.Spec{}, fmt.Errorf("cron: %w", err)
	}
	spec := schedule.Spec{Provider: provider, Expr: sc.Cron, Cron: cron, Size: sc.Window, Zone: zone,
		Lookback: schedule.DefaultLookback, CatchUp: schedule.DefaultCatchUp}
	if sc.Lookback != nil {
		spec.Lookback = *sc.Lookback
	}
	if sc.CatchUp != nil {
		spec.CatchUp = *sc.CatchUp
	}
	return spec, spec.Validate()
}

// Specs parses every schedule, in provider order, against the providers
// they name: a provider whose evidence must be pulled but cannot be
// (Stripe without its API key) is refused unless its schedule says
// no_pull, since its runs would report every charge not yet imported as
// missing. serve calls it; other commands do not run schedules.
func (c Config) Specs(providers map[string]Provider) ([]schedule.Spec, error) {
	var out []schedule.Spec
	for _, name := range slices.Sorted(maps.Keys(c.Schedules)) {
		sc := c.Schedules[name]
		key := "schedules." + name
		p, ok := providers[name]
		if !ok {
			return nil, fmt.Errorf("config %s: no provider %q is configured (known: %v)", key, name, slices.Sorted(maps.Keys(providers)))
		}
		if !p.Pulled && p.PullSetting != "" && !sc.NoPull {
			return nil, fmt.Errorf("config %s: %s cannot be pulled without %s, so its scheduled runs would report "+
				"every charge not yet imported as missing_at_provider: set %s, or set %s.no_pull: true to reconcile "+
				"imported reports and webhooks only", key, name, p.PullSetting, p.PullSetting, key)
		}
		spec, err := sc.Spec(name, p.Zone)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", key, err)
		}
		out = append(out, spec)
	}
	return out, nil
}
