package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/wiring"
)

func newJobsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List and retry queued, retrying and discarded jobs (the dead letter)",
		Long: `Charges, alert deliveries, outgoing events and scheduled runs are River jobs. A job that
keeps failing is retried with backoff up to its attempt limit and then discarded: it stays in
the database, listed by 'reconcile jobs list --state discarded', until a person retries it.`,
	}
	cmd.AddCommand(newJobsListCmd(a), newJobsRetryCmd(a))
	return cmd
}

func newJobsListCmd(a *app) *cobra.Command {
	var (
		states, kinds []string
		limit         int
		format        string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List jobs, newest first (by default everything not completed: waiting, running, retrying, discarded, cancelled)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			params, err := queue.ListParams(states, kinds, limit)
			if err != nil {
				return usagef("--state %v", err)
			}
			f := formatOf(format)
			return a.with(cmd.Context(), wiring.Existing, func(ctx context.Context, d *wiring.Parts) error {
				res, err := d.Queue.List(ctx, params)
				if err != nil {
					return err
				}
				return report.WriteJobs(a.stdout, f, res.Jobs, a.redact)
			})
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&states, "state", nil, "states to list (available, running, retryable, scheduled, discarded, cancelled, completed, pending)")
	f.StringSliceVar(&kinds, "kind", nil, "job kinds to list (charge, refund, deliver_event, alerts.deliver, reconcile_tick, reconcile_run)")
	f.IntVar(&limit, "limit", 100, "at most this many")
	f.StringVar(&format, "format", "text", "text, json or csv")
	return cmd
}

func newJobsRetryCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "retry ID",
		Short: "Run a discarded, cancelled or retrying job again now",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return usagef("job id %q: not a number", args[0])
			}
			return a.with(cmd.Context(), wiring.Existing, func(ctx context.Context, d *wiring.Parts) error {
				job, err := d.Queue.Retry(ctx, id)
				if err != nil {
					return fmt.Errorf("retry job %d: %w", id, err)
				}
				fmt.Fprintf(a.stdout, "job %d (%s %s) is %s and will run again\n", job.ID, job.Kind, ledger.SafeLine(queue.JobSubject(job), 256), job.State)
				return nil
			})
		},
	}
}
