package main

import (
	"context"
	"os"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
	"github.com/reconcilehq/reconcile/report"
)

// dryRunIntents checks an intents file against the books and prints what
// importing it would do.
func (a *app) dryRunIntents(ctx context.Context, file string) error {
	d, err := a.resolve(ctx, storeExisting)
	if err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	kinds := intentcsv.Kinds{}
	for name, p := range d.providers {
		kinds[name] = p.IntentKind
	}
	c, err := report.CheckIntents(ctx, d.store, f, file, kinds, func(provider string) error { return checkProvider(d.providers, provider) })
	if err != nil {
		return err
	}
	return report.WriteFileCheck(a.stdout, c)
}

// dryRunStatement checks a statement file of provider against the books
// and prints what importing it would do.
func (a *app) dryRunStatement(ctx context.Context, provider string, setup config.Provider, file string) error {
	d, err := a.resolve(ctx, storeExisting)
	if err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := report.CheckStatement(ctx, d.store, f, file, provider, setup.Statement)
	if err != nil {
		return err
	}
	return report.WriteFileCheck(a.stdout, c)
}
