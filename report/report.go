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

// Run is what a run report shows. Every format carries every field: text
// for people, JSON and CSV for programs.
type Run struct {
	Provider string
	// Account is the provider account run; empty for the default.
	Account  string
	From, To time.Time
	// Zone is the provider's zone: text shows times in it, with the offset;
	// JSON names it. Nil means UTC.
	Zone     *time.Location
	Summary  matcher.Summary
	Findings []ledger.Finding
	// Changes says, by finding id, what this run changed: new, reopened or
	// escalated.
	Changes map[string]string
	// ResolvedFindings are the findings of the window this run no longer
	// saw (and so resolved).
	ResolvedFindings []ledger.Finding
	// Confirmed are the other windows run again after this run to confirm
	// refunds asked for on their findings, with what each resolved.
	Confirmed []Confirmation
	// Evidence says where the run's evidence came from (pulled, or stored
	// only and why), when the caller knows; shown when set.
	Evidence  string
	RunID     int64
	Attempt   int
	DryRun    bool
	New       int
	Resolved  int
	Settled   int
	PullError string
	Duration  time.Duration
	// Bank is what a run of a bank account counted (payouts expected and
	// arrived, credits); nil for other providers.
	Bank *reconciler.BankStats
}

// Confirmation is the run of another window run again to confirm refunds:
// its window and what it resolved.
type Confirmation struct {
	RunID    int64
	From, To time.Time
	Resolved []ledger.Finding
}

// FromOutcome takes a run report from a reconciler outcome.
func FromOutcome(o *reconciler.Outcome) Run {
	r := Run{Provider: o.Run.Provider, Account: o.Run.Account, From: o.Run.From, To: o.Run.To, Summary: o.Summary, Findings: o.Findings,
		ResolvedFindings: o.Resolved, RunID: o.Run.ID, Attempt: o.Run.Attempt, DryRun: o.DryRun, New: o.Run.Counts.New,
		Resolved: len(o.Resolved), Settled: len(o.Settled), PullError: o.PullError,
		Duration: time.Duration(o.Run.Counts.DurationMS) * time.Millisecond, Changes: map[string]string{}, Bank: o.Bank}
	for _, c := range o.Confirmed {
		r.Confirmed = append(r.Confirmed, Confirmation{RunID: c.Run.ID, From: c.Run.From, To: c.Run.To, Resolved: c.Resolved})
	}
	for _, c := range o.Changes {
		switch {
		case c.New:
			r.Changes[c.Finding.ID] = "new"
		case c.Reopened:
			r.Changes[c.Finding.ID] = "reopened"
		case c.Escalated:
			r.Changes[c.Finding.ID] = "escalated"
		}
	}
	return r
}

func (r Run) zone() *time.Location {
	if r.Zone == nil {
		return time.UTC
	}
	return r.Zone
}

// WriteRun renders a run in format f.
func WriteRun(w io.Writer, f Format, r Run) error {
	switch f {
	case JSON:
		return runJSON(w, r)
	case CSV:
		return runCSV(w, r)
	default:
		return runText(w, r)
	}
}

// WriteFindings renders a list of findings (with their status and first
// and last seen times) in format f, in the order given (a findings list is
// newest first); text shows times in UTC.
func WriteFindings(w io.Writer, f Format, fs []ledger.Finding) error {
	return WriteFindingsIn(w, f, fs, nil)
}

// WriteFindingsIn is WriteFindings with each provider's zone: text shows a
// finding's times in its provider's zone, with the offset.
func WriteFindingsIn(w io.Writer, f Format, fs []ledger.Finding, zones map[string]*time.Location) error {
	switch f {
	case JSON:
		return findingsJSON(w, fs)
	case CSV:
		return findingsCSV(w, fs, true)
	default:
		return findingsText(w, fs, zones)
	}
}

// LocalTime renders t in loc with its zone and offset, as people read it on
// every surface (CLI, console, Slack): "2026-03-14 09:12 EAT (+03:00)".
// Zero is "-"; a nil loc is UTC.
func LocalTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02 15:04 MST (-07:00)")
}

// LocalWindow renders [from, to) in loc: "2026-03-14 00:00 → 2026-03-15
// 00:00 EAT (+03:00)"; both ends carry their zone when the offset changes
// inside.
func LocalWindow(from, to time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	_, fo := from.In(loc).Zone()
	_, to2 := to.In(loc).Zone()
	if fo != to2 {
		return LocalTime(from, loc) + " → " + LocalTime(to, loc)
	}
	return from.In(loc).Format("2006-01-02 15:04") + " → " + LocalTime(to, loc)
}

func showAmount(a moneyAmount) string { return a.Display() }

func utc(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// WriteRegistration says what registering provider's short code for
// pulling did: what the provider answered (asked), or the registration the
// books hold already, with its time in the provider's zone.
func WriteRegistration(w io.Writer, provider string, reg ledger.PullRegistration, asked bool, zone *time.Location) error {
	var b strings.Builder
	if asked {
		fmt.Fprintf(&b, "%s: short code %s registered for pulling (status %s: %s; ref %s)\n", provider, reg.ShortCode,
			reg.Status, reg.Description, reg.ResponseRef)
	} else {
		fmt.Fprintf(&b, "%s: short code %s is registered for pulling already, since %s by %s (ref %s); --force registers it again\n",
			provider, reg.ShortCode, LocalTime(reg.RegisteredAt, zone), reg.By, reg.ResponseRef)
	}
	fmt.Fprintf(&b, "  nominated number %s, callback %s\n", reg.NominatedNumber, reg.CallbackURL)
	_, err := io.WriteString(w, b.String())
	return err
}
