package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/queue"
)

// storeMode says how a command opens the books.
type storeMode int

const (
	// storeExisting never creates a database: a SQLite file that does not
	// exist is an error saying how to create one (commands that read, or
	// change what is there).
	storeExisting storeMode = iota
	// storeCreate opens the database, creating and migrating a SQLite file;
	// PostgreSQL must be migrated already.
	storeCreate
	// storeMigrate opens the database to migrate it.
	storeMigrate
)

// deps are what a command works with, built from the configuration once,
// by resolve, after the command has checked its flags and before it works:
// the books, the providers with their clients, the alerts configuration,
// the insert-only queue and the findings service. Nothing is built later
// and nothing is looked up from a global.
type deps struct {
	store ledger.Store
	// replica is the read replica of the books (database_read_url), or
	// nil: reports, the console's lists and a run's matching read there
	// while it keeps up.
	replica   *database.Replica
	providers map[string]config.Provider
	// zones are the providers' zones, by name.
	zones map[string]*time.Location
	// alerts is the alerts configuration for planning messages (the Slack
	// secrets are not needed to plan); alertsOn is false in mode off.
	alerts   alerts.Config
	alertsOn bool
	// queue inserts and lists jobs and works none.
	queue *queue.Queue
	// charges creates the refunds people ask for and retries or cancels
	// stuck intents, queueing on queue (serve's workers send them).
	charges  *charge.Service
	findings *findings.Service
	clock    func() time.Time
	logger   *slog.Logger
}

// resolve builds the command's dependencies from the configuration, once:
// it sets the amount limits (the one place they are set), opens the books
// as mode says, builds the providers once with a quarantine writing to
// those books, and wires the alerts, the queue and the findings service.
func (a *app) resolve(ctx context.Context, mode storeMode) (*deps, error) {
	if a.deps != nil {
		return a.deps, nil
	}
	max, err := a.cfg.Limits.Amounts()
	if err != nil {
		return nil, fmt.Errorf("config limits.max_amounts: %w", err)
	}
	if err := ledger.SetMaxAmounts(max); err != nil {
		return nil, fmt.Errorf("config limits.max_amounts: %w", err)
	}
	store, err := a.openStore(ctx, mode)
	if err != nil {
		return nil, err
	}
	d := &deps{store: store, zones: map[string]*time.Location{}, clock: a.clock, logger: a.logger}
	if a.cfg.DatabaseReadURL != "" && mode != storeMigrate {
		d.replica, err = database.OpenReplica(ctx, a.cfg.DatabaseReadURL, store, database.ReplicaOptions{
			MaxLag: a.cfg.DatabaseReadMaxLag, MaxConns: a.cfg.Database.MaxConns, Logger: a.logger})
		if err != nil {
			store.Close()
			return nil, fmt.Errorf("config database_read_url: %w", err)
		}
	}
	if err := a.wire(d); err != nil {
		d.close()
		return nil, err
	}
	a.deps = d
	return d, nil
}

// wire builds what the open books need: the providers, the alerts, the
// queue and the findings service.
func (a *app) wire(d *deps) error {
	var err error
	if d.providers, err = a.cfg.BuildProviders(a.clock, config.QuarantineTo(d.store, a.clock)); err != nil {
		return err
	}
	for name, p := range d.providers {
		d.zones[name] = p.Zone
	}
	if d.alerts, d.alertsOn, err = a.cfg.AlertsPlanning(d.zones); err != nil {
		return err
	}
	if d.queue, err = queue.New(d.store, queue.Config{Logger: a.logger}); err != nil {
		return err
	}
	announce, announceRemedy, err := d.announcer()
	if err != nil {
		return err
	}
	rules, err := a.cfg.Approvals.Rules()
	if err != nil {
		return fmt.Errorf("config approvals: %w", err)
	}
	d.charges = a.chargeService(d, charge.NewMetrics())
	d.charges.UseQueue(d.queue)
	d.findings = findings.NewService(d.store, findings.Options{Announce: announce, AnnounceRemedy: announceRemedy,
		Payments: d.charges, Approvals: rules, Clock: a.clock})
	return nil
}

// close closes the books and their replica.
func (d *deps) close() {
	if d.replica != nil {
		d.replica.Close()
	}
	d.store.Close()
}

// reads returns the books to read a report from: the replica while it
// lags no more than database_read_max_lag, the primary otherwise or
// without one. What a report shows may be that much behind what was
// written; commands that change the books read the primary.
func (d *deps) reads(ctx context.Context) ledger.Reader {
	if d.replica == nil {
		return d.store
	}
	rd, why := d.replica.Reader(ctx)
	d.logger.LogAttrs(ctx, slog.LevelDebug, "books read", slog.String("from", why))
	return rd
}

// announcer plans, when alerts are on, the Slack follow-up of a finding a
// person resolved and the messages of a request awaiting a second person
// and of its decision, each in the deciding transaction.
func (d *deps) announcer() (findings.Announcer, findings.RemedyAnnouncer, error) {
	if !d.alertsOn {
		return nil, nil, nil
	}
	planner, err := alerts.NewPlanner(d.alerts, d.clock)
	if err != nil {
		return nil, nil, err
	}
	announce, announceRemedy := planner.Announcers(alerts.EnqueueFunc(d.queue, d.alerts))
	return announce, announceRemedy, nil
}

// chargers returns the configured chargers by provider name.
func (d *deps) chargers() map[string]providers.Charger { return config.Chargers(d.providers) }

// openStore opens the books as mode says. On SQLite it migrates
// automatically; on PostgreSQL it refuses an out-of-date schema unless
// migrating is the point.
func (a *app) openStore(ctx context.Context, mode storeMode) (ledger.Store, error) {
	url := a.cfg.DatabaseURL
	if mode == storeExisting && database.Missing(url) {
		return nil, fmt.Errorf("database %s does not exist: create it with `reconcile migrate --database-url %s` "+
			"(then import intents and statements), or point --database-url at an existing one",
			database.Redact(url), database.Redact(url))
	}
	if a.defaultDB {
		fmt.Fprintf(a.stderr, "reconcile: using the default database %s (choose another with --database-url or RECONCILE_DATABASE_URL)\n",
			database.DefaultURL)
	}
	opts := database.Options{MaxConns: a.cfg.Database.MaxConns}
	if mode == storeMigrate {
		return database.Open(ctx, url, opts)
	}
	return database.OpenMigrated(ctx, url, opts)
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
		return s, usagef("--provider %q: want one of %s", provider, strings.Join(sortedNames(setups), ", "))
	}
	return s, nil
}
