package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/reconcilehq/reconcile/schedule"
)

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
		spec, err := sc.Spec(name, setup.Zone)
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
