package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
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

var jobStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateRunning, rivertype.JobStateRetryable,
	rivertype.JobStateScheduled, rivertype.JobStateDiscarded, rivertype.JobStateCancelled, rivertype.JobStateCompleted,
	rivertype.JobStatePending}

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
			params := river.NewJobListParams().First(limit).OrderBy(river.JobListOrderByID, river.SortOrderDesc)
			var st []rivertype.JobState
			for _, s := range states {
				ok := false
				for _, js := range jobStates {
					if string(js) == s {
						st, ok = append(st, js), true
					}
				}
				if !ok {
					return usagef("--state %q: want one of available, running, retryable, scheduled, discarded, cancelled, completed, pending", s)
				}
			}
			if len(st) == 0 {
				st = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateRunning, rivertype.JobStateRetryable,
					rivertype.JobStateScheduled, rivertype.JobStateDiscarded, rivertype.JobStateCancelled, rivertype.JobStatePending}
			}
			params = params.States(st...)
			if len(kinds) > 0 {
				params = params.Kinds(kinds...)
			}
			f, err := report.ParseFormat(format)
			if err != nil {
				return usagef("--format: %v", err)
			}
			d, err := a.resolve(cmd.Context(), storeExisting)
			if err != nil {
				return err
			}
			res, err := d.queue.List(cmd.Context(), params)
			if err != nil {
				return err
			}
			switch f {
			case report.JSON:
				return writeJobsJSON(a, res.Jobs)
			case report.CSV:
				return writeJobsCSV(a, res.Jobs)
			}
			return writeJobsText(a, res.Jobs)
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
			d, err := a.resolve(cmd.Context(), storeExisting)
			if err != nil {
				return err
			}
			job, err := d.queue.Retry(cmd.Context(), id)
			if err != nil {
				return fmt.Errorf("retry job %d: %w", id, err)
			}
			fmt.Fprintf(a.stdout, "job %d (%s %s) is %s and will run again\n", job.ID, job.Kind, ledger.SafeLine(jobSubject(job), 256), job.State)
			return nil
		},
	}
}

// jobSubject is what a job is about, read from its arguments.
func jobSubject(j *rivertype.JobRow) string {
	var args map[string]any
	if json.Unmarshal(j.EncodedArgs, &args) != nil {
		return ""
	}
	for _, k := range []string{"intent_key", "event_id", "alert_id"} {
		if v, ok := args[k]; ok {
			return fmt.Sprint(v)
		}
	}
	if p, ok := args["provider"]; ok {
		if from, ok := args["from"]; ok {
			return fmt.Sprintf("%v %v/%v", p, from, args["to"])
		}
		return fmt.Sprint(p)
	}
	return ""
}

func lastError(j *rivertype.JobRow) string {
	if len(j.Errors) == 0 {
		return ""
	}
	msg := j.Errors[len(j.Errors)-1].Error
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

func writeJobsText(a *app, jobs []*rivertype.JobRow) error {
	if len(jobs) == 0 {
		fmt.Fprintln(a.stdout, "No jobs.")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATE\tATTEMPT\tSUBJECT\tWHEN\tLAST ERROR")
	for _, j := range jobs {
		when := j.ScheduledAt
		if j.FinalizedAt != nil {
			when = *j.FinalizedAt
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", j.ID, j.Kind, j.State, j.Attempt, j.MaxAttempts,
			ledger.SafeLine(jobSubject(j), 256), when.UTC().Format(time.RFC3339), ledger.SafeLine(redactAll(lastError(j), a.secrets()), 1024))
	}
	return tw.Flush()
}

func writeJobsJSON(a *app, jobs []*rivertype.JobRow) error {
	type row struct {
		ID          int64           `json:"id"`
		Kind        string          `json:"kind"`
		State       string          `json:"state"`
		Queue       string          `json:"queue"`
		Attempt     int             `json:"attempt"`
		MaxAttempts int             `json:"max_attempts"`
		Args        json.RawMessage `json:"args"`
		ScheduledAt time.Time       `json:"scheduled_at"`
		FinalizedAt *time.Time      `json:"finalized_at,omitempty"`
		LastError   string          `json:"last_error,omitempty"`
	}
	out := make([]row, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, row{ID: j.ID, Kind: j.Kind, State: string(j.State), Queue: j.Queue, Attempt: j.Attempt,
			MaxAttempts: j.MaxAttempts, Args: redactArgs(j.EncodedArgs), ScheduledAt: j.ScheduledAt.UTC(), FinalizedAt: j.FinalizedAt,
			LastError: redactAll(lastError(j), a.secrets())})
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"jobs": out})
}

func writeJobsCSV(a *app, jobs []*rivertype.JobRow) error {
	cw := csv.NewWriter(a.stdout)
	if err := cw.Write([]string{"id", "kind", "state", "queue", "attempt", "max_attempts", "subject", "scheduled_at",
		"finalized_at", "last_error"}); err != nil {
		return err
	}
	for _, j := range jobs {
		fin := ""
		if j.FinalizedAt != nil {
			fin = j.FinalizedAt.UTC().Format(time.RFC3339)
		}
		if err := cw.Write([]string{strconv.FormatInt(j.ID, 10), j.Kind, string(j.State), j.Queue,
			strconv.Itoa(j.Attempt), strconv.Itoa(j.MaxAttempts), jobSubject(j), j.ScheduledAt.UTC().Format(time.RFC3339), fin,
			redactAll(lastError(j), a.secrets())}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// redactArgs hides URLs in job arguments (an event endpoint may carry a
// token in its query).
func redactArgs(raw json.RawMessage) json.RawMessage {
	var args map[string]any
	if json.Unmarshal(raw, &args) != nil {
		return raw
	}
	changed := false
	for k, v := range args {
		if s, ok := v.(string); ok && (strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")) {
			if u, err := url.Parse(s); err == nil {
				args[k] = u.Scheme + "://" + u.Host + "/..."
				changed = true
			}
		}
	}
	if !changed {
		return raw
	}
	out, err := json.Marshal(args)
	if err != nil {
		return raw
	}
	return out
}
