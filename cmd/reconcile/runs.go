package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
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

type runView struct {
	ID         int64            `json:"id"`
	Provider   string           `json:"provider"`
	From       time.Time        `json:"from"`
	To         time.Time        `json:"to"`
	State      string           `json:"state"`
	Attempt    int              `json:"attempt"`
	StartedAt  time.Time        `json:"started_at"`
	FinishedAt *time.Time       `json:"finished_at,omitempty"`
	Counts     ledger.RunCounts `json:"counts"`
	Error      string           `json:"error,omitempty"`
}

func viewRun(r ledger.Run) runView {
	return runView{ID: r.ID, Provider: r.Provider, From: r.From.UTC(), To: r.To.UTC(), State: string(r.State), Attempt: r.Attempt,
		StartedAt: r.StartedAt.UTC(), FinishedAt: findings.OptTime(r.FinishedAt), Counts: r.Counts, Error: r.Error}
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
			f, err := report.ParseFormat(format)
			if err != nil {
				return usagef("--format: %v", err)
			}
			ctx := cmd.Context()
			d, err := a.resolve(ctx, storeCreate)
			if err != nil {
				return err
			}
			if provider != "" {
				if _, _, err := listWindow(ctx, d, provider, "", ""); err != nil {
					return err
				}
			}
			runs, err := d.store.ListRuns(ctx, provider, limit)
			if err != nil {
				return err
			}
			views := make([]runView, 0, len(runs))
			for _, r := range runs {
				views = append(views, viewRun(r))
			}
			return writeRuns(a.stdout, f, views)
		},
	}
	cmd.Flags().StringVar(&provider, "provider", "", "only this provider")
	cmd.Flags().StringVar(&format, "format", "text", "text, json or csv")
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many")
	return cmd
}

func writeRuns(w io.Writer, f report.Format, runs []runView) error {
	switch f {
	case report.JSON:
		return writeIndented(w, map[string]any{"runs": runs})
	case report.CSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"id", "provider", "from", "to", "state", "attempt", "started_at", "finished_at",
			"intents", "transactions", "matched", "findings", "new", "resolved", "settled", "duration_ms", "error"})
		for _, r := range runs {
			fin := ""
			if r.FinishedAt != nil {
				fin = ts(*r.FinishedAt)
			}
			c := r.Counts
			_ = cw.Write([]string{strconv.FormatInt(r.ID, 10), r.Provider, ts(r.From), ts(r.To), r.State, strconv.Itoa(r.Attempt),
				ts(r.StartedAt), fin, strconv.Itoa(c.Intents), strconv.Itoa(c.Transactions), strconv.Itoa(c.Matched),
				strconv.Itoa(c.Findings), strconv.Itoa(c.New), strconv.Itoa(c.Resolved), strconv.Itoa(c.Settled),
				strconv.Itoa(c.DurationMS), r.Error})
		}
		cw.Flush()
		return cw.Error()
	}
	if len(runs) == 0 {
		_, err := fmt.Fprintln(w, "No runs.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPROVIDER\tWINDOW\tSTATE\tSTARTED\tFINDINGS\tNEW\tRESOLVED\tERROR")
	for _, r := range runs {
		state := r.State
		if r.Attempt > 1 {
			state = fmt.Sprintf("%s (attempt %d)", r.State, r.Attempt)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s .. %s\t%s\t%s\t%d\t%d\t%d\t%s\n", r.ID, r.Provider, ts(r.From), ts(r.To), state,
			ts(r.StartedAt), r.Counts.Findings, r.Counts.New, r.Counts.Resolved, firstLine(r.Error))
	}
	return tw.Flush()
}

// runDetail is a run with the findings it saw last.
type runDetail struct {
	Run      runView                `json:"run"`
	Findings []findings.FindingView `json:"findings"`
}

func newRunsShowCmd(a *app) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a run: its window, outcome, counts and the findings it was the last to see",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := report.ParseFormat(format)
			if err != nil {
				return usagef("--format: %v", err)
			}
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return usagef("run id %q: want a positive number (see `reconcile runs list`)", args[0])
			}
			ctx := cmd.Context()
			deps, err := a.resolve(ctx, storeCreate)
			if err != nil {
				return err
			}
			r, err := deps.store.GetRun(ctx, id)
			if errors.Is(err, ledger.ErrNotFound) {
				return notFound("run", args[0], "runs list")
			}
			if err != nil {
				return err
			}
			fs, err := deps.store.ListFindings(ctx, ledger.FindingFilter{RunID: id, Limit: 10000})
			if err != nil {
				return err
			}
			d := runDetail{Run: viewRun(r), Findings: make([]findings.FindingView, 0, len(fs))}
			for _, f := range fs {
				d.Findings = append(d.Findings, findings.ViewFinding(f))
			}
			switch f {
			case report.JSON:
				return writeIndented(a.stdout, d)
			case report.CSV:
				return report.WriteFindingsIn(a.stdout, report.CSV, fs, deps.zones)
			}
			return writeRunText(a.stdout, d, fs, deps.zones)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text, json or csv (csv: the findings)")
	return cmd
}

func writeRunText(w io.Writer, d runDetail, fs []ledger.Finding, zones map[string]*time.Location) error {
	r := d.Run
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Run\t%d\n", r.ID)
	fmt.Fprintf(tw, "Provider\t%s\n", r.Provider)
	fmt.Fprintf(tw, "Window\t%s .. %s\n", ts(r.From), ts(r.To))
	fmt.Fprintf(tw, "State\t%s (attempt %d)\n", r.State, r.Attempt)
	fmt.Fprintf(tw, "Started\t%s\n", ts(r.StartedAt))
	if r.FinishedAt != nil {
		fmt.Fprintf(tw, "Finished\t%s (%s)\n", ts(*r.FinishedAt), time.Duration(r.Counts.DurationMS)*time.Millisecond)
	}
	c := r.Counts
	fmt.Fprintf(tw, "Counts\t%d intents, %d transactions, %d matched, %d findings (%d new), %d resolved, %d settled\n",
		c.Intents, c.Transactions, c.Matched, c.Findings, c.New, c.Resolved, c.Settled)
	if r.Error != "" {
		fmt.Fprintf(tw, "Error\t%s\n", r.Error)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nFindings last seen by this run")
	if len(fs) == 0 {
		_, err := fmt.Fprintln(w, "  none")
		return err
	}
	return report.WriteFindingsIn(w, report.Text, fs, zones)
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
