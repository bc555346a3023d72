package wiring

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/schedule"
)

// Setup describes the configured provider without building its clients
// (config.Config.DescribeProviders), for checking a command line before
// the books are opened. A provider not configured is a *schedule.FlagError
// naming --provider and the known ones.
func Setup(cfg config.Config, clock func() time.Time, provider string) (config.Provider, error) {
	setups, err := cfg.DescribeProviders(clock)
	if err != nil {
		return config.Provider{}, err
	}
	s, ok := setups[provider]
	if !ok {
		return s, schedule.Flagf("provider", "--provider %q: want one of %s", provider, strings.Join(slices.Sorted(maps.Keys(setups)), ", "))
	}
	return s, nil
}
