package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// ordered returns fs in report order without changing the caller's slice.
func ordered(fs []ledger.Finding) []ledger.Finding {
	out := slices.Clone(fs)
	matcher.SortFindings(out)
	return out
}

func count(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func runText(w io.Writer, r Run) error {
	var b strings.Builder
	what := "reconcile run"
	if r.DryRun {
		what = "reconcile dry run (nothing written)"
	}
	fmt.Fprintf(&b, "%s: %s %s", what, ledger.SafeLine(ledger.Scope(r.Provider, r.Account), 64), LocalWindow(r.From, r.To, r.zone()))
	if r.RunID != 0 {
		fmt.Fprintf(&b, " (run %d, attempt %d)", r.RunID, r.Attempt)
	}
	b.WriteString("\n\n")
	if r.Bank != nil {
		bankSummary(&b, r)
	} else {
		fmt.Fprintf(&b, "  intents       %s\n", count(r.Summary.Intents))
		fmt.Fprintf(&b, "  transactions  %s\n", count(r.Summary.Transactions))
		fmt.Fprintf(&b, "  matched       %s\n", count(r.Summary.Matched))
	}
	fmt.Fprintf(&b, "  findings      %s", count(len(r.Findings)))
	if !r.DryRun {
		fmt.Fprintf(&b, " (%s new, %s resolved)", count(r.New), count(r.Resolved))
	}
	b.WriteString("\n")
	if r.Bank == nil {
		fmt.Fprintf(&b, "  settled       %s unknown intent(s)\n", count(r.Settled))
	}
	if r.Evidence != "" {
		fmt.Fprintf(&b, "  evidence      %s\n", r.Evidence)
	}
	if len(r.Findings) > 0 {
		b.WriteString("\n")
		for _, k := range ledger.Kinds {
			if n := countKind(r.Findings, k); n > 0 {
				fmt.Fprintf(&b, "  %-*s %s\n", kindWidth(r.Findings), k, count(n))
			}
		}
	}
	switch {
	case r.PullError != "" && r.Bank != nil:
		fmt.Fprintf(&b, "\n  WARNING: the payout pull failed, so unexplained_bank_credit was not judged:\n  %s\n", ledger.SafeText(r.PullError, 2000))
	case r.PullError != "":
		fmt.Fprintf(&b, "\n  WARNING: the pull failed, so missing_at_provider was not judged:\n  %s\n", ledger.SafeText(r.PullError, 2000))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if len(r.Findings) == 0 {
		if _, err := io.WriteString(w, "\nNo findings.\n"); err != nil {
			return err
		}
		if err := resolvedText(w, r.ResolvedFindings); err != nil {
			return err
		}
		return confirmedText(w, r)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	if err := table(w, ordered(r.Findings), false, func(string) *time.Location { return r.zone() }); err != nil {
		return err
	}
	if err := resolvedText(w, r.ResolvedFindings); err != nil {
		return err
	}
	return confirmedText(w, r)
}

// confirmedText lists the windows run again to confirm refunds, with what
// each resolved.
func confirmedText(w io.Writer, r Run) error {
	if len(r.Confirmed) == 0 {
		return nil
	}
	var b strings.Builder
	for _, c := range r.Confirmed {
		fmt.Fprintf(&b, "\nRun again to confirm refunds: %s (run %d), %d resolved\n", LocalWindow(c.From, c.To, r.zone()), c.RunID, len(c.Resolved))
		for _, f := range ordered(c.Resolved) {
			fmt.Fprintf(&b, "  %s  %s %s: %s\n", f.ID, f.Kind, ledger.SafeLine(f.IntentKey, 80), ledger.SafeText(f.Note, 400))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// bankSummary is the summary block of a bank account's run.
func bankSummary(b *strings.Builder, r Run) {
	fmt.Fprintf(b, "  payouts       %s expected, %s arrived\n", count(r.Bank.Payouts), count(r.Bank.Arrived))
	fmt.Fprintf(b, "  credits       %s\n", count(r.Bank.Credits))
	if r.Bank.LatePayouts+r.Bank.LateCredits > 0 {
		fmt.Fprintf(b, "  looked up     %s payout(s) and %s credit(s) of other windows\n", count(r.Bank.LatePayouts),
			count(r.Bank.LateCredits))
	}
}

// kindWidth is the width of the kind column of a summary: 20, or the
// longest kind's.
func kindWidth(fs []ledger.Finding) int {
	w := 20
	for _, f := range fs {
		w = max(w, len(f.Kind))
	}
	return w
}

// resolvedText lists the findings a run resolved, each with the reason it
// recorded: the evidence that explains it, when there is some, wherever
// the finding's window.
func resolvedText(w io.Writer, fs []ledger.Finding) error {
	if len(fs) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\nResolved by this run:\n")
	for _, f := range ordered(fs) {
		what := f.IntentKey
		if what == "" {
			what = strings.Join(f.ProviderTxnIDs, ", ")
		}
		fmt.Fprintf(&b, "  %s  %s %s: %s\n", f.ID, f.Kind, ledger.SafeLine(what, 80), ledger.SafeText(f.Note, 400))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func countKind(fs []ledger.Finding, k ledger.Kind) int {
	n := 0
	for _, f := range fs {
		if f.Kind == k {
			n++
		}
	}
	return n
}

func findingsText(w io.Writer, fs []ledger.Finding, zones map[string]*time.Location) error {
	if len(fs) == 0 {
		_, err := io.WriteString(w, "No findings.\n")
		return err
	}
	return table(w, fs, true, func(p string) *time.Location { return zones[p] })
}

// table writes the findings table, in the order given, and below it each
// finding's detail.
func table(w io.Writer, fs []ledger.Finding, listed bool, zone func(provider string) *time.Location) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "ID\tSEVERITY\tKIND\tINTENT\tEXPECTED\tACTUAL\tAT RISK\tCOUNTERPARTY\tPROVIDER TXNS"
	if listed {
		head += "\tOCCURRED\tSTATUS\tLAST SEEN"
	}
	// The account shows when a finding of the list belongs to another
	// account than its provider's default one.
	accounts := slices.ContainsFunc(fs, func(f ledger.Finding) bool { return f.Account != "" })
	if accounts {
		head += "\tACCOUNT"
	}
	fmt.Fprintln(tw, head)
	for _, f := range fs {
		intent := f.IntentKey
		if intent == "" {
			intent = "-"
		} else if f.IntentKindShown() == ledger.IntentRefund {
			intent += " (refund)"
		}
		cp := f.Counterparty
		if cp == "" {
			cp = "-"
		}
		ids := strings.Join(findingJSON(f).ProviderTxnIDs, ", ")
		if ids == "" {
			ids = "-"
		}
		// Keys, ids and counterparties came from outside: escaped, so
		// that a control sequence cannot reach the terminal nor a tab or
		// newline forge a column or a line.
		line := strings.Join([]string{f.ID, string(f.Severity), cell(string(f.Kind)), cell(intent), showAmount(f.Expected),
			showAmount(f.Actual), showAmount(f.AtRisk), cell(cp), cell(ids)}, "\t")
		if listed {
			line += "\t" + LocalTime(f.OccurredAt, zone(f.Provider)) + "\t" + string(f.Status) + "\t" + LocalTime(f.LastSeenAt, zone(f.Provider))
		}
		if accounts {
			line += "\t" + cell(ledger.Scope(f.Provider, f.Account))
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "%s  %s\n", f.ID, cell(f.Detail))
		if s := f.Suggestion; !s.IsZero() {
			fmt.Fprintf(&b, "%s  %s\n", strings.Repeat(" ", len(f.ID)), cell(KindSuggestionText(f.Kind, s)))
		}
		if listed && f.Note != "" {
			fmt.Fprintf(&b, "%s  note: %s\n", strings.Repeat(" ", len(f.ID)), cell(f.Note))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell escapes text from outside for a terminal: control characters,
// newlines, tabs and invalid bytes as Go escapes.
func cell(s string) string { return ledger.SafeLine(s, 0) }
