package main

import (
	"context"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/wiring"
)

// resolve opens the command's parts from the configuration (wiring.Open),
// once, after the command has checked its flags and before it works, with
// the books opened as mode says. Nothing is built later and nothing is
// looked up from a global.
func (a *app) resolve(ctx context.Context, mode wiring.Mode) (*wiring.Parts, error) {
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
	a.deps = p
	return p, nil
}

// setup describes a configured provider without building its clients, for
// checking a command line before the books are opened (wiring.Setup).
func (a *app) setup(provider string) (config.Provider, error) {
	return wiring.Setup(a.cfg, a.clock, provider)
}

// with resolves the command's parts (resolve), with the books opened as
// mode says, and does the command's work with them.
func (a *app) with(ctx context.Context, mode wiring.Mode, work func(ctx context.Context, d *wiring.Parts) error) error {
	d, err := a.resolve(ctx, mode)
	if err != nil {
		return err
	}
	return work(ctx, d)
}
