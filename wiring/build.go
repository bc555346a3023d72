package wiring

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/bankaccount"
	"github.com/reconcilehq/reconcile/providers/intake"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/reconciler"
)

// Charges builds a charge service of this process, counting into m (nil
// for none), with no queue: the caller gives it one (serve gives it its
// working queue).
func (p *Parts) Charges(m *charge.Metrics) *charge.Service {
	c := p.cfg.Charges
	host, _ := os.Hostname()
	return charge.New(charge.Deps{Store: p.Store, Chargers: config.Chargers(p.Providers), Clock: p.Clock, Logger: p.Logger, Metrics: m},
		charge.Config{Lease: c.Lease, MaxAttempts: c.MaxAttempts, PendingPoll: c.PendingPoll,
			PendingGiveUp: c.PendingGiveUp, ReceiptPoll: c.ReceiptPoll, ReceiptWait: c.ReceiptWait,
			Owner:     fmt.Sprintf("%s-%d", host, os.Getpid()),
			Endpoints: p.cfg.Events.Endpoints, SigningSecret: p.cfg.Events.SigningSecret})
}

// QueuedCharges is the charge service of a command: it enqueues (events,
// the charges of imported intents, refunds, retries) through the
// insert-only Queue, which serve's workers work.
func (p *Parts) QueuedCharges() *charge.Service {
	svc := p.Charges(nil)
	svc.UseQueue(p.Queue)
	return svc
}

// Reconciler builds a reconciler: the providers' pullers, graces and zones,
// the bank accounts, settling through svc (so settling emits events), the
// replica for matching, and, when alerts are on, the Slack planner
// enqueuing through q as the findings hook.
func (p *Parts) Reconciler(q *queue.Queue, svc *charge.Service) (*reconciler.Reconciler, error) {
	rc := p.cfg.Reconcile
	cfg := reconciler.Config{Clock: p.Clock, Logger: p.Logger, Lease: rc.Lease, Tolerance: rc.Tolerance,
		Fuzzy: rc.Fuzzy, Grace: map[string]time.Duration{}, Pullers: map[string]providers.Puller{}, Settler: svc,
		Horizon: map[string]time.Duration{}, Zones: map[string]*time.Location{}, Banks: map[string]*bankaccount.Account{},
		PayoutPullers: map[string]providers.PayoutPuller{}}
	for name, pr := range p.Providers {
		cfg.Grace[name], cfg.Horizon[name], cfg.Zones[name] = pr.Grace, pr.Horizon, pr.Zone
		if pr.ExactReferences {
			cfg.ExactReferences = append(cfg.ExactReferences, name)
		}
		if pr.Puller != nil {
			cfg.Pullers[name] = pr.Puller
		}
		for acct, puller := range pr.AccountPullers {
			cfg.Pullers[ledger.Scope(name, acct)] = puller
		}
		if pr.PayoutPuller != nil {
			cfg.PayoutPullers[name] = pr.PayoutPuller
		}
		for acct, puller := range pr.AccountPayoutPullers {
			cfg.PayoutPullers[ledger.Scope(name, acct)] = puller
		}
		if pr.Bank != nil {
			cfg.Banks[name] = pr.Bank
		}
	}
	if p.AlertsOn {
		planner, err := alerts.NewPlanner(p.Alerts, p.Clock)
		if err != nil {
			return nil, err
		}
		cfg.OnFindings = planner.Hook(alerts.EnqueueFunc(q, p.Alerts))
	}
	if p.Replica != nil {
		cfg.Replica = p.Replica
	}
	return reconciler.New(p.Store, cfg), nil
}

// Intake is the callback intake, applying STK results through the queued
// charge service.
func (p *Parts) Intake() *intake.Processor {
	return &intake.Processor{Store: p.Store, Applier: p.QueuedCharges(), AttemptAccounts: config.AttemptAccounts(p.Providers),
		Clock: p.Clock, Logger: p.Logger}
}

// CallbackParsers are the configured providers' callback parsers, by
// provider.
func (p *Parts) CallbackParsers() map[string]providers.CallbackParser {
	return config.CallbackParsers(p.Providers)
}

// Replay submits a kept item's raw input through the path it came from
// and says what it added (intake.Processor.Replay).
func (p *Parts) Replay(ctx context.Context, q ledger.QuarantineItem) (string, error) {
	return p.Intake().Replay(ctx, q, p.CallbackParsers())
}

// ReplayKept replays the kept item id through the path it came from and
// records it replayed by who, with note (intake.Processor.ReplayKept): it
// returns the item as recorded and what the replay added.
func (p *Parts) ReplayKept(ctx context.Context, id int64, who ledger.Actor, note string) (ledger.QuarantineItem, string, error) {
	return p.Intake().ReplayKept(ctx, p.Store, intake.KeptReplay{ID: id, Actor: who, Note: note, Parsers: p.CallbackParsers()})
}

// PreviewAlerts is the alerts configuration previews show messages with:
// the configured one, or, when alerts are not configured yet, what they
// would look like.
func (p *Parts) PreviewAlerts() alerts.Config {
	if p.AlertsOn {
		return p.Alerts
	}
	return alerts.Config{Mode: alerts.ModeWebhook, Channel: "finance-ops", Zones: p.Zones,
		Webhooks: map[string]string{"finance-ops": "https://hooks.slack.com/services/preview"}}.WithDefaults()
}
