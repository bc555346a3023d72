package wiring

import "github.com/reconcilehq/reconcile/service"

// ServiceDeps are what serve builds its server from: the configuration and
// the parts, the console reading its lists as Lists says, every error and
// log redacted of the configured secrets.
func (p *Parts) ServiceDeps() service.Deps {
	return service.Deps{Config: p.cfg, Store: p.Store, ConsoleStore: p.Lists(), Providers: p.Providers, Zones: p.Zones,
		Findings: p.Findings, Charges: p.Charges, Reconciler: p.Reconciler, Replay: p.Replay, Redact: p.cfg.Redact,
		Clock: p.Clock, Logger: p.Logger}
}
