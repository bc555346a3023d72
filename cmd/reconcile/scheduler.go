package main

import (
	"fmt"
	"log/slog"
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

func (sc ScheduleConfig) spec(provider string, zone *time.Location) (schedule.Spec, error) {
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

// specs parses every schedule, naming the key at fault.
func (a *app) specs() ([]schedule.Spec, error) {
	var out []schedule.Spec
	setups := a.providerSetups()
	for _, name := range sortedNames(a.cfg.Schedules) {
		sc := a.cfg.Schedules[name]
		key := "schedules." + name
		setup, ok := setups[name]
		if !ok {
			return nil, fmt.Errorf("config %s: no provider %q is configured (known: %v)", key, name, sortedNames(setups))
		}
		if setup.Puller == nil && setup.PullSetting != "" && !sc.NoPull {
			return nil, fmt.Errorf("config %s: %s cannot be pulled without %s, so its scheduled runs would report "+
				"every charge not yet imported as missing_at_provider: set %s, or set %s.no_pull: true to reconcile "+
				"imported reports and webhooks only", key, name, setup.PullSetting, setup.PullSetting, key)
		}
		spec, err := sc.spec(name, setup.Zone)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", key, err)
		}
		out = append(out, spec)
	}
	return out, nil
}

// logSchedules says at start when each provider is reconciled next, or why
// nothing is scheduled in this process.
func logSchedules(logger *slog.Logger, specs []schedule.Spec, scheduler bool, now time.Time) {
	switch {
	case !scheduler:
		logger.Info("scheduler off in this process (roles.scheduler: false): another replica schedules runs")
		return
	case len(specs) == 0:
		logger.Info("no schedules: nothing is reconciled periodically; set schedules.<provider>.cron to schedule runs")
		return
	}
	for _, spec := range specs {
		size := spec.Size
		if size == 0 {
			size = schedule.DefaultSize
		}
		logger.Info("schedule", "provider", spec.Provider, "cron", spec.Expr, "next_run", spec.Local(spec.Next(now)),
			"window", size.String(), "lookback", spec.Lookback, "catch_up", spec.CatchUp,
			"note", "the elected leader ticks at start and then on the cron; each tick logs the next run")
	}
}
