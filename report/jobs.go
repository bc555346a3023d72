package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
)

// WriteJobs renders jobs in format f: a table for a person, JSON or CSV.
// redact scrubs secrets from the jobs' errors; URLs in their arguments are
// cut to their host.
func WriteJobs(w io.Writer, f Format, jobs []*rivertype.JobRow, redact func(string) string) error {
	switch f {
	case JSON:
		return jobsJSON(w, jobs, redact)
	case CSV:
		return jobsCSV(w, jobs, redact)
	}
	return jobsText(w, jobs, redact)
}

func jobsText(w io.Writer, jobs []*rivertype.JobRow, redact func(string) string) error {
	if len(jobs) == 0 {
		fmt.Fprintln(w, "No jobs.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATE\tATTEMPT\tSUBJECT\tWHEN\tLAST ERROR")
	for _, j := range jobs {
		when := j.ScheduledAt
		if j.FinalizedAt != nil {
			when = *j.FinalizedAt
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", j.ID, j.Kind, j.State, j.Attempt, j.MaxAttempts,
			ledger.SafeLine(queue.JobSubject(j), 256), when.UTC().Format(time.RFC3339), ledger.SafeLine(redact(queue.LastError(j)), 1024))
	}
	return tw.Flush()
}

func jobsJSON(w io.Writer, jobs []*rivertype.JobRow, redact func(string) string) error {
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
			LastError: redact(queue.LastError(j))})
	}
	return encode(w, map[string]any{"jobs": out})
}

func jobsCSV(w io.Writer, jobs []*rivertype.JobRow, redact func(string) string) error {
	cw := csv.NewWriter(w)
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
			strconv.Itoa(j.Attempt), strconv.Itoa(j.MaxAttempts), queue.JobSubject(j), j.ScheduledAt.UTC().Format(time.RFC3339), fin,
			redact(queue.LastError(j))}); err != nil {
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
