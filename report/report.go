package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/reconciler"
)

// Format is an output format.
type Format string

// Formats.
const (
	Text Format = "text"
	JSON Format = "json"
	CSV  Format = "csv"
)

// ParseFormat validates s as a Format.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case Text, JSON, CSV:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (want text, json or csv)", s)
}

// Run is what a run report shows.
type Run struct {
	Provider string
	From, To time.Time
	Summary  matcher.Summary
	Findings []ledger.Finding
	// The fields below appear in the text form only.
	RunID     int64
	Attempt   int
	DryRun    bool
	New       int
	Resolved  int
	Settled   int
	PullError string
	Duration  time.Duration
}

// FromOutcome takes a run report from a reconciler outcome.
func FromOutcome(o *reconciler.Outcome) Run {
	return Run{Provider: o.Run.Provider, From: o.Run.From, To: o.Run.To, Summary: o.Summary, Findings: o.Findings,
		RunID: o.Run.ID, Attempt: o.Run.Attempt, DryRun: o.DryRun, New: o.Run.Counts.New,
		Resolved: len(o.Resolved), Settled: len(o.Settled), PullError: o.PullError,
		Duration: time.Duration(o.Run.Counts.DurationMS) * time.Millisecond}
}

// WriteRun renders a run in format f.
func WriteRun(w io.Writer, f Format, r Run) error {
	switch f {
	case JSON:
		return runJSON(w, r)
	case CSV:
		return findingsCSV(w, r.Findings, false)
	default:
		return runText(w, r)
	}
}

// WriteFindings renders a list of findings (with their status and first
// and last seen times) in format f.
func WriteFindings(w io.Writer, f Format, fs []ledger.Finding) error {
	switch f {
	case JSON:
		return findingsJSON(w, fs)
	case CSV:
		return findingsCSV(w, fs, true)
	default:
		return findingsText(w, fs)
	}
}

func showAmount(a moneyAmount) string {
	if a.IsZero() {
		return "-"
	}
	return a.Currency + " " + a.Format()
}

func utc(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
