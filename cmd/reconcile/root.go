package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
	"github.com/reconcilehq/reconcile/queue"
)

// app is what every command shares: the loaded configuration, the logger,
// the clock and the open store.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	configFile  string
	databaseURL string

	cfg *Config
	// defaultDB is true when no flag, variable or file chose the database:
	// commands then say which one they use.
	defaultDB bool
	logger    *slog.Logger
	clock     func() time.Time
	store     ledger.Store
	q         *queue.Queue
	setups    map[string]providerSetup
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "reconcile",
		Short: "Charge without charging twice; reconcile provider evidence against the books",
		Long: `reconcile records payment intents under stable keys, charges them through a queue that
survives crashes without charging twice, pulls provider evidence (Stripe, M-Pesa, CSV statements),
matches it to the books and reports findings (duplicate charges, missing or unknown charges,
mismatches, stuck intents) to finance ops.

The database is PostgreSQL (--database-url postgres://...) or, by default, an embedded SQLite
file (sqlite:reconcile.db). Every setting can also come from a RECONCILE_* environment variable
or a config file (see config.example.yaml).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.load(cmd); err != nil {
				return err
			}
			// cobra checks again after this and finds them set; checking
			// here makes a missing one a usage error.
			if err := cmd.ValidateRequiredFlags(); err != nil {
				return &usageError{err}
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.configFile, "config", "", "config file (default ./config.yaml if present)")
	pf.StringVar(&a.databaseURL, "database-url", "", "postgres://... or sqlite:PATH (env RECONCILE_DATABASE_URL; default "+database.DefaultURL+")")
	root.AddCommand(
		newMigrateCmd(a),
		newImportCmd(a),
		newFindingsCmd(a),
		newJobsCmd(a),
		newServeCmd(a),
		newRunCmd(a),
		newAlertsCmd(a),
		newDemoCmd(a),
		newQuarantineCmd(a),
		newVersionCmd(a),
		newRunsCmd(a),
		newConfigCmd(a),
		newBooksCmd(a),
	)
	setVersion(root)
	for _, c := range root.Commands() {
		setGroupUsage(c)
		setUsageArgs(c)
	}
	return root
}

// setGroupUsage makes a command that only groups others (findings, jobs,
// import, ...) refuse an unknown or missing subcommand with a usage error
// (exit 2) instead of printing its help and succeeding.
func setGroupUsage(c *cobra.Command) {
	if !c.HasSubCommands() {
		return
	}
	if c.RunE == nil && c.Run == nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q", args[0])
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error {
			var names []string
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			return usagef("%s needs a subcommand: %s", cmd.CommandPath(), strings.Join(names, ", "))
		}
	}
	for _, sub := range c.Commands() {
		setGroupUsage(sub)
	}
}

// setUsageArgs makes argument-count errors usage errors (exit 2) everywhere.
func setUsageArgs(c *cobra.Command) {
	if c.Args != nil {
		check := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return &usageError{fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		setUsageArgs(sub)
	}
}

// load reads the configuration and sets up logging; it runs before every
// command.
func (a *app) load(cmd *cobra.Command) error {
	if a.cfg != nil {
		return nil
	}
	cfg, err := loadConfig(cmd, a.configFile)
	if err != nil {
		return err
	}
	if cmd.Name() == "serve" {
		if err := cfg.ValidateDelivery(); err != nil {
			return err
		}
	}
	a.cfg = cfg
	if f := cmd.Flags().Lookup("database-url"); (f == nil || !f.Changed) && cfg.DatabaseURL == database.DefaultURL {
		_, fromEnv := os.LookupEnv("RECONCILE_DATABASE_URL")
		a.defaultDB = !fromEnv
	}
	if a.clock == nil {
		a.clock = time.Now
	}
	a.logger = newLogger(a.stderr, cfg.Log)
	return nil
}

// open opens the store. On SQLite it migrates automatically; on PostgreSQL it
// refuses an out-of-date schema unless migrating is the point.
func (a *app) open(ctx context.Context, forMigrate bool) (ledger.Store, error) {
	if a.store != nil {
		return a.store, nil
	}
	if a.defaultDB {
		fmt.Fprintf(a.stderr, "reconcile: using the default database %s (choose another with --database-url or RECONCILE_DATABASE_URL)\n",
			database.DefaultURL)
	}
	s, err := database.Open(ctx, a.cfg.DatabaseURL, database.Options{MaxConns: a.cfg.Database.MaxConns})
	if err != nil {
		return nil, err
	}
	if !forMigrate {
		drv, err := engine.Of(s)
		if err != nil {
			s.Close()
			return nil, err
		}
		if drv.MigrateOnOpen() {
			if _, err := database.Migrate(ctx, s); err != nil {
				s.Close()
				return nil, err
			}
		} else if err := database.Check(ctx, s); err != nil {
			s.Close()
			return nil, err
		}
	}
	a.store = s
	return s, nil
}

// openExisting opens the store for a command that only reads (or changes
// what is already there): it never creates a database. A SQLite file that
// does not exist is an error saying how to create one.
func (a *app) openExisting(ctx context.Context) (ledger.Store, error) {
	if a.store != nil {
		return a.store, nil
	}
	if engine, err := database.Engine(a.cfg.DatabaseURL); err == nil && engine == ledger.EngineSQLite {
		path := database.SQLitePath(a.cfg.DatabaseURL)
		if path != "" && path != ":memory:" && !strings.HasPrefix(path, "file:") {
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("database %s does not exist: create it with `reconcile migrate --database-url %s` "+
					"(then import intents and statements), or point --database-url at an existing one",
					database.Redact(a.cfg.DatabaseURL), database.Redact(a.cfg.DatabaseURL))
			}
		}
	}
	return a.open(ctx, false)
}

// queue returns a River client that inserts and lists jobs but works none.
func (a *app) queue(ctx context.Context) (*queue.Queue, error) {
	if a.q != nil {
		return a.q, nil
	}
	s, err := a.open(ctx, false)
	if err != nil {
		return nil, err
	}
	q, err := queue.New(s, queue.Config{Logger: a.logger})
	if err != nil {
		return nil, err
	}
	a.q = q
	return q, nil
}

func (a *app) close() {
	if a.store != nil {
		a.store.Close()
		a.store = nil
	}
}

// secrets lists configured secret values, to be scrubbed from any error text.
func (a *app) secrets() []string {
	if a.cfg == nil {
		return nil
	}
	return a.cfg.secretValues()
}

func newLogger(w io.Writer, c LogConfig) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.level(), ReplaceAttr: maskAttr}
	format := c.Format
	if format == "auto" || format == "" {
		format = "json"
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			format = "text"
		}
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// redactAll replaces every secret value in s, and the password of any
// database URL.
func redactAll(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 6 {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// minLevel drops records below a level: River's per-second info lines are
// kept out of the service log.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(attrs), h.level}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.level}
}

// maskAttr masks phone numbers in every message and attribute the binary
// logs (ledger.MaskMSISDNs): a CheckoutRequestID can end in the payer's
// number, and errors can quote a body that holds one.
func maskAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if v := a.Value.String(); ledger.MaskMSISDNs(v) != v {
			a.Value = slog.StringValue(ledger.MaskMSISDNs(v))
		}
	case slog.KindAny:
		switch v := a.Value.Any().(type) {
		case error:
			a.Value = slog.StringValue(ledger.MaskMSISDNs(v.Error()))
		case fmt.Stringer:
			a.Value = slog.StringValue(ledger.MaskMSISDNs(v.String()))
		}
	}
	return a
}
