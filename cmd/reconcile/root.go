package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/logging"
	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/wiring"
)

// app is what every command shares: the command line's streams and
// flags, the configuration (loaded and checked before every command), the
// logger, the clock, and the command's dependencies once resolved.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	configFile  string
	databaseURL string

	cfg    config.Config
	loaded bool
	// defaultDB is true when no flag, variable or file chose the database:
	// commands then say which one they use.
	defaultDB bool
	logger    *slog.Logger
	clock     func() time.Time
	// deps are the parts resolve opened, once.
	deps *wiring.Parts
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
			// Every --format is checked here, once, before the command
			// runs (formatOf).
			if f := cmd.Flags().Lookup("format"); f != nil {
				if _, err := report.ParseFormat(f.Value.String()); err != nil {
					return usagef("--format: %v", err)
				}
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
		newIntentsCmd(a),
		newJobsCmd(a),
		newServeCmd(a),
		newRunCmd(a),
		newAlertsCmd(a),
		newDemoCmd(a),
		newQuarantineCmd(a),
		newVersionCmd(a),
		newRunsCmd(a),
		newReportCmd(a),
		newConfigCmd(a),
		newBooksCmd(a),
		newProvidersCmd(a),
	)
	setVersion(root)
	for _, c := range root.Commands() {
		setGroupUsage(c)
		setUsageArgs(c)
	}
	return root
}

// formatOf is the report format a --format flag names, checked before
// the command ran.
func formatOf(flag string) report.Format {
	f, _ := report.ParseFormat(flag)
	return f
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

// load reads the configuration, checks it and sets up logging; it runs
// before every command. It builds nothing: a command resolves what it needs
// (resolve) once it has checked its flags.
func (a *app) load(cmd *cobra.Command) error {
	if a.loaded {
		return nil
	}
	src := config.Source{File: a.configFile}
	if f := cmd.Flags().Lookup("database-url"); f != nil && f.Changed {
		src.DatabaseURL = f.Value.String()
	}
	cfg, err := config.LoadChecked(src, cmd.Name() == "serve")
	if err != nil {
		return err
	}
	a.cfg, a.loaded, a.defaultDB = cfg, true, src.DefaultDatabase(cfg)
	if a.clock == nil {
		a.clock = time.Now
	}
	a.logger = logging.New(a.stderr, cfg.Log.LevelOf(), cfg.Log.Format)
	return nil
}

func (a *app) close() {
	if a.deps != nil {
		a.deps.Close()
		a.deps = nil
	}
}

// redact scrubs the configured secrets from s (config.Config.Redact), once
// the configuration is loaded.
func (a *app) redact(s string) string {
	if !a.loaded {
		return s
	}
	return a.cfg.Redact(s)
}
