package main

import (
	"context"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// providerSetups builds the configured providers by name (once).
func (a *app) providerSetups() map[string]config.Provider {
	if a.setups == nil {
		setups, err := config.BuildProviders(a.cfg, a.clock, a.quarantiner())
		if err != nil {
			panic(err) // Validate built them already
		}
		a.setups = setups
	}
	return a.setups
}

// quarantiner keeps records a pull rejects, once a store is open.
func (a *app) quarantiner() config.Quarantiner {
	return func(source string) func(ctx context.Context, perr *ledger.ParseError, raw []byte) error {
		return func(ctx context.Context, perr *ledger.ParseError, raw []byte) error {
			if a.store == nil {
				return perr
			}
			// Once: pulling the window again meets the same record.
			_, _, err := a.store.AddQuarantineOnce(ctx, ledger.QuarantineItem{Source: source, Origin: perr.File, Line: perr.Line,
				Field: perr.Field, Reason: perr.Err.Error(), Raw: raw, At: a.clock()})
			return err
		}
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
