package main

import (
	"context"
	"errors"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/wiring"
)

func newRunsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List reconcile runs and show one with its findings",
		Long: `Every reconcile of a provider's window is a run with an id: the id that alerts preview --run
and the findings' first and last runs name.`,
	}
	cmd.AddCommand(newRunsListCmd(a), newRunsShowCmd(a))
	return cmd
}

func newRunsListCmd(a *app) *cobra.Command {
	var (
		provider, format string
		limit            int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List runs, the latest windows first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := formatOf(format)
			return a.with(cmd.Context(), wiring.Create, func(ctx context.Context, d *wiring.Parts) error {
				if provider != "" {
					if _, _, err := findings.ListWindow(ctx, d.Store, d.Zones, provider, "", ""); err != nil {
						return err
					}
				}
				runs, err := d.Reads(ctx).ListRuns(ctx, provider, limit)
				if err != nil {
					return err
				}
				return report.WriteRuns(a.stdout, f, report.ViewRuns(runs))
			})
		},
	}
	cmd.Flags().StringVar(&provider, "provider", "", "only this provider")
	cmd.Flags().StringVar(&format, "format", "text", "text, json or csv")
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many")
	return cmd
}

func newRunsShowCmd(a *app) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a run: its window, outcome, counts and the findings it was the last to see",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := formatOf(format)
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return usagef("run id %q: want a positive number (see `reconcile runs list`)", args[0])
			}
			return a.with(cmd.Context(), wiring.Create, func(ctx context.Context, deps *wiring.Parts) error {
				err := findings.ShowRun(ctx, a.stdout, f, deps.Reads(ctx), id, deps.Zones)
				if errors.Is(err, ledger.ErrNotFound) {
					return notFound("run", args[0], "runs list")
				}
				return err
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text, json or csv (csv: the findings)")
	return cmd
}
