package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/schedule"
	"github.com/reconcilehq/reconcile/wiring"
)

func newFindingsShowCmd(a *app) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a finding with its evidence and the history of every decision",
		Long: `Show a finding: its amounts and lifecycle, the intent with its attempts, the provider
transactions it names with every source they were seen through (raw payloads with phone numbers,
e-mail addresses and long digit runs masked), and its history: who opened, escalated,
acknowledged, noted, resolved or reopened it, through which surface, when, and the note.

--format csv prints the history only, one event a row.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := formatOf(format)
			ctx := cmd.Context()
			deps, err := a.resolve(ctx, storeCreate)
			if err != nil {
				return err
			}
			d, err := findings.Load(ctx, deps.Reads(ctx), args[0])
			if errors.Is(err, ledger.ErrNotFound) {
				return notFound("finding", args[0], "findings list")
			}
			if err != nil {
				return err
			}
			v := d.View()
			return findings.Write(a.stdout, f, v, deps.Zones[v.Finding.Provider])
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text, json or csv (csv: the history)")
	return cmd
}

// listWindow validates --provider and reads --from and --to for findings
// list: times are RFC 3339 or YYYY-MM-DD (midnight in the provider's zone,
// UTC without --provider), and select on the evidence time.
func listWindow(ctx context.Context, d *wiring.Parts, provider, from, to string) (time.Time, time.Time, error) {
	zone := time.UTC
	if provider != "" {
		known, err := findings.Providers(ctx, d.Store, d.Zones)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		z, ok := known[provider]
		if !ok {
			return time.Time{}, time.Time{}, usagef("--provider %q: unknown provider (want one of %s)", provider,
				strings.Join(findings.ProviderNames(known), ", "))
		}
		zone = z
	}
	var start, end time.Time
	var err error
	if from != "" {
		if start, err = schedule.ParseTime(from, zone); err != nil {
			return start, end, usagef("--from %v", err)
		}
	}
	if to != "" {
		if end, err = schedule.ParseTime(to, zone); err != nil {
			return start, end, usagef("--to %v", err)
		}
	}
	if !start.IsZero() && !end.IsZero() && !end.After(start) {
		return start, end, usagef("--to %s is not after --from %s", to, from)
	}
	return start, end, nil
}
