package main

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/console"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/wiring"
)

// How a command opens the books (wiring.Mode).
const (
	storeExisting = wiring.Existing
	storeCreate   = wiring.Create
	storeMigrate  = wiring.Migrate
)

// deps are what a command works with: the parts of the configuration
// (wiring.Parts), opened once by resolve after the command has checked its
// flags and before it works. store, replica and logger are the books the
// parts read and write (wiring.Books), as the commands use them. Nothing
// is built later and nothing is looked up from a global.
type deps struct {
	*wiring.Parts
	store   ledger.Store
	replica *database.Replica
	logger  *slog.Logger
}

// resolve opens the command's parts from the configuration, once, with the
// books opened as mode says.
func (a *app) resolve(ctx context.Context, mode wiring.Mode) (*deps, error) {
	if a.deps != nil {
		return a.deps, nil
	}
	opts := wiring.Options{Mode: mode, Clock: a.clock, Logger: a.logger}
	if a.defaultDB {
		opts.DefaultNotice = a.stderr
	}
	p, err := wiring.Open(ctx, a.cfg, opts)
	if err != nil {
		return nil, err
	}
	a.deps = &deps{Parts: p, store: p.Store, replica: p.Replica, logger: p.Logger}
	return a.deps, nil
}

// consoleBooks are the books the console reads and acts through
// (wiring.Books.Lists).
func consoleBooks(d *deps) console.Store {
	return wiring.Books{Store: d.store, Replica: d.replica, Logger: d.logger}.Lists()
}

// setup describes a configured provider without building its clients, for
// checking a command line before the books are opened; a usage error names
// the known ones.
func (a *app) setup(provider string) (config.Provider, error) {
	setups, err := a.cfg.DescribeProviders(a.clock)
	if err != nil {
		return config.Provider{}, err
	}
	s, ok := setups[provider]
	if !ok {
		return s, usagef("--provider %q: want one of %s", provider, strings.Join(slices.Sorted(maps.Keys(setups)), ", "))
	}
	return s, nil
}
