package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// RunView is a run as `runs list` and `runs show` print it.
type RunView struct {
	ID         int64            `json:"id"`
	Provider   string           `json:"provider"`
	Account    string           `json:"account,omitempty"`
	From       time.Time        `json:"from"`
	To         time.Time        `json:"to"`
	State      string           `json:"state"`
	Attempt    int              `json:"attempt"`
	StartedAt  time.Time        `json:"started_at"`
	FinishedAt *time.Time       `json:"finished_at,omitempty"`
	Counts     ledger.RunCounts `json:"counts"`
	Error      string           `json:"error,omitempty"`
}

// ViewRun is the view of r.
func ViewRun(r ledger.Run) RunView {
	return RunView{ID: r.ID, Provider: r.Provider, Account: r.Account, From: r.From.UTC(), To: r.To.UTC(), State: string(r.State), Attempt: r.Attempt,
		StartedAt: r.StartedAt.UTC(), FinishedAt: optTime(r.FinishedAt), Counts: r.Counts, Error: r.Error}
}

// ViewRuns are the views of runs, in their order.
func ViewRuns(runs []ledger.Run) []RunView {
	views := make([]RunView, 0, len(runs))
	for _, r := range runs {
		views = append(views, ViewRun(r))
	}
	return views
}

// WriteRuns renders runs in format f: text, JSON ({"runs": [...]}) or CSV.
func WriteRuns(w io.Writer, f Format, runs []RunView) error {
	switch f {
	case JSON:
		return encode(w, map[string]any{"runs": runs})
	case CSV:
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
		fmt.Fprintf(tw, "%d\t%s\t%s .. %s\t%s\t%s\t%d\t%d\t%d\t%s\n", r.ID, ledger.Scope(r.Provider, r.Account), ts(r.From), ts(r.To), state,
			ts(r.StartedAt), r.Counts.Findings, r.Counts.New, r.Counts.Resolved, firstLine(r.Error))
	}
	return tw.Flush()
}

// WriteRunText renders a run for a person, with the findings it was the
// last to see (fs), times of findings in their provider's zone.
func WriteRunText(w io.Writer, r RunView, fs []ledger.Finding, zones map[string]*time.Location) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Run\t%d\n", r.ID)
	fmt.Fprintf(tw, "Provider\t%s\n", ledger.Scope(r.Provider, r.Account))
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
	return WriteFindingsIn(w, Text, fs, zones)
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
