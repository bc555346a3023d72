package wiring

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
)

// Mode says how Open opens the books.
type Mode int

const (
	// Existing never creates a database: a SQLite file that does not exist
	// is an error saying how to create one (commands that read, or change
	// what is there).
	Existing Mode = iota
	// Create opens the database, creating and migrating a SQLite file;
	// PostgreSQL must be migrated already.
	Create
	// Migrate opens the database to migrate it, as it is.
	Migrate
)

// Options are what Open needs besides the configuration.
type Options struct {
	// Mode says how the books are opened.
	Mode Mode
	// Clock is the time of every part; time.Now when nil.
	Clock func() time.Time
	// Logger is every part's logger; a discarding one when nil.
	Logger *slog.Logger
	// DefaultNotice, when set, is told which database is used: set it when
	// nothing (flag, variable or file) chose one.
	DefaultNotice io.Writer
}

// Parts are the opened, ready parts of a configured process. Open builds
// them once; Close closes the books.
type Parts struct {
	Books
	// Providers are the configured providers with their clients, by name;
	// Zones their zones.
	Providers map[string]config.Provider
	Zones     map[string]*time.Location
	// Alerts is the alerts configuration for planning messages (the Slack
	// secrets are not needed to plan); AlertsOn is false in mode off.
	Alerts   alerts.Config
	AlertsOn bool
	// Queue inserts and lists jobs and works none.
	Queue *queue.Queue
	// Findings applies people's decisions, announcing them through the
	// alerts when they are on.
	Findings *findings.Service
	Clock    func() time.Time

	cfg config.Config
}

// Open sets the amount limits (the one place they are set), opens the books
// as opts.Mode says (with the read replica of database_read_url unless
// migrating), builds the providers once with a quarantine writing to those
// books, and wires the alerts planning, the queue, the charge service and
// the findings service.
func Open(ctx context.Context, cfg config.Config, opts Options) (*Parts, error) {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	max, err := cfg.Limits.Amounts()
	if err != nil {
		return nil, fmt.Errorf("config limits.max_amounts: %w", err)
	}
	if err := ledger.SetMaxAmounts(max); err != nil {
		return nil, fmt.Errorf("config limits.max_amounts: %w", err)
	}
	store, err := openStore(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	p := &Parts{Books: Books{Store: store, Logger: opts.Logger}, Zones: map[string]*time.Location{}, Clock: opts.Clock, cfg: cfg}
	if cfg.DatabaseReadURL != "" && opts.Mode != Migrate {
		p.Replica, err = database.OpenReplica(ctx, cfg.DatabaseReadURL, store, database.ReplicaOptions{
			MaxLag: cfg.DatabaseReadMaxLag, MaxConns: cfg.Database.MaxConns, Logger: opts.Logger})
		if err != nil {
			store.Close()
			return nil, fmt.Errorf("config database_read_url: %w", err)
		}
	}
	if err := p.wire(); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// wire builds what the open books need: the providers, the alerts, the
// queue and the findings service.
func (p *Parts) wire() error {
	var err error
	if p.Providers, err = p.cfg.BuildProviders(p.Clock, config.QuarantineTo(p.Store, p.Clock)); err != nil {
		return err
	}
	for name, pr := range p.Providers {
		p.Zones[name] = pr.Zone
	}
	if p.Alerts, p.AlertsOn, err = p.cfg.AlertsPlanning(p.Zones); err != nil {
		return err
	}
	if p.Queue, err = queue.New(p.Store, queue.Config{Logger: p.Logger}); err != nil {
		return err
	}
	announce, announceRemedy, err := p.announcers()
	if err != nil {
		return err
	}
	rules, err := p.cfg.Approvals.Rules()
	if err != nil {
		return fmt.Errorf("config approvals: %w", err)
	}
	p.Findings = findings.NewService(p.Store, findings.Options{Announce: announce, AnnounceRemedy: announceRemedy,
		Payments: p.QueuedCharges(), Approvals: rules, Clock: p.Clock})
	return nil
}

// announcers plan, when alerts are on, the Slack follow-up of a finding a
// person resolved and the messages of a request awaiting a second person
// and of its decision, each in the deciding transaction.
func (p *Parts) announcers() (findings.Announcer, findings.RemedyAnnouncer, error) {
	if !p.AlertsOn {
		return nil, nil, nil
	}
	planner, err := alerts.NewPlanner(p.Alerts, p.Clock)
	if err != nil {
		return nil, nil, err
	}
	announce, announceRemedy := planner.Announcers(alerts.EnqueueFunc(p.Queue, p.Alerts))
	return announce, announceRemedy, nil
}

// Close closes the books and their replica.
func (p *Parts) Close() {
	if p.Replica != nil {
		p.Replica.Close()
	}
	p.Store.Close()
}

// Embedded reports whether the books are SQLite, whose engine runs in this
// process.
func (p *Parts) Embedded() bool { return Embedded(p.cfg) }

// Embedded reports whether cfg's database is SQLite, whose engine runs in
// this process.
func Embedded(cfg config.Config) bool {
	engine, err := database.Engine(cfg.DatabaseURL)
	return err == nil && engine == ledger.EngineSQLite
}

// ModeOf is how a command that may be a dry run opens the books: a dry run
// writes nothing, not even a database (Existing); any other run creates
// them (Create).
func ModeOf(dryRun bool) Mode {
	if dryRun {
		return Existing
	}
	return Create
}
