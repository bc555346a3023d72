package main

import (
	"time"

	"github.com/reconcilehq/reconcile/providers"
)

// providerSetup is what reconcile knows of one provider from the config.
type providerSetup struct {
	// Zone is where the provider's local times and date-only windows live.
	Zone *time.Location
	// Grace keeps intents younger than this from being called missing.
	Grace   time.Duration
	Puller  providers.Puller
	Charger providers.Charger
}

var eat = time.FixedZone("EAT", 3*3600)

// providerSetups returns the configured providers by name.
func (a *app) providerSetups() map[string]providerSetup {
	return map[string]providerSetup{
		"mpesa":  {Zone: eat, Grace: 30 * time.Minute},
		"stripe": {Zone: time.UTC, Grace: 2 * time.Hour},
	}
}

// chargers returns the configured chargers by provider name.
func (a *app) chargers() map[string]providers.Charger {
	out := map[string]providers.Charger{}
	for name, p := range a.providerSetups() {
		if p.Charger != nil {
			out[name] = p.Charger
		}
	}
	return out
}
