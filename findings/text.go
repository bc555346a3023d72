package findings

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/report"
)

// Write renders a finding's detail in format f: text for a person, with
// times in loc (the provider's zone), JSON (indented, times in UTC), or CSV
// (its history only, one event a row, times in UTC).
func Write(w io.Writer, f report.Format, d DetailView, loc *time.Location) error {
	switch f {
	case report.JSON:
		return writeJSON(w, d)
	case report.CSV:
		return WriteHistoryCSV(w, d.Finding.ID, d.History)
	default:
		return WriteText(w, d, loc)
	}
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// amountText renders an amount as people read it, "KES 1,500.00"; an
// amount that does not parse is shown as it came.
func amountText(a *AmountView) string {
	if a == nil {
		return "-"
	}
	if m, err := money.Parse(a.Amount, a.Currency); err == nil {
		return m.Display()
	}
	return a.Currency + " " + a.Amount
}

// WriteText renders a finding's detail for a person: the finding, its
// intent with attempts, its transactions with every source, and its
// history, times in loc with their offset.
func WriteText(w io.Writer, d DetailView, loc *time.Location) error {
	ts := func(t time.Time) string { return report.LocalTime(t, loc) }
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	writeFindingFields(tw, d.Finding, ts)
	if err := tw.Flush(); err != nil {
		return err
	}
	writeIntentText(w, d.Intent, d.Finding.IntentKey, ts)
	writeTxnsText(w, d.Transactions, ts)
	writeRemediesText(w, d.Remedies, ts)
	if d.Payout != nil {
		writePayoutText(w, d.Payout)
	}
	fmt.Fprintln(w, "\nHistory")
	return WriteHistoryText(w, d.History, loc)
}

// writeFindingFields writes the finding's fields, one per line, and how to
// accept its suggestion, to the tab writer tw.
func writeFindingFields(tw *tabwriter.Writer, f FindingView, ts func(time.Time) string) {
	fmt.Fprintf(tw, "Finding\t%s\n", f.ID)
	fmt.Fprintf(tw, "Kind\t%s (%s)\n", f.Kind, f.Severity)
	fmt.Fprintf(tw, "Status\t%s\n", f.Status)
	fmt.Fprintf(tw, "Provider\t%s\n", f.Provider)
	if f.IntentKey != "" {
		fmt.Fprintf(tw, "Intent\t%s\n", f.IntentKey)
	}
	if len(f.ProviderTxnIDs) > 0 {
		fmt.Fprintf(tw, "Transactions\t%s\n", strings.Join(f.ProviderTxnIDs, ", "))
	}
	fmt.Fprintf(tw, "Expected\t%s\n", amountText(f.Expected))
	fmt.Fprintf(tw, "Actual\t%s\n", amountText(f.Actual))
	fmt.Fprintf(tw, "At risk\t%s\n", amountText(f.AtRisk))
	if f.Counterparty != "" {
		fmt.Fprintf(tw, "Counterparty\t%s\n", f.Counterparty)
	}
	fmt.Fprintf(tw, "Detail\t%s\n", f.Detail)
	fmt.Fprintf(tw, "Evidence at\t%s\n", ts(f.OccurredAt))
	fmt.Fprintf(tw, "First seen\t%s by run %d\n", ts(f.FirstSeenAt), f.FirstRunID)
	fmt.Fprintf(tw, "Last seen\t%s by run %d\n", ts(f.LastSeenAt), f.LastRunID)
	if f.AcknowledgedAt != nil {
		fmt.Fprintf(tw, "Acknowledged\t%s by %s\n", ts(*f.AcknowledgedAt), orDash(f.AcknowledgedBy))
	}
	if f.ResolvedAt != nil {
		fmt.Fprintf(tw, "Resolved\t%s by %s\n", ts(*f.ResolvedAt), orDash(f.ResolvedBy))
	}
	if f.Note != "" {
		fmt.Fprintf(tw, "Note\t%s\n", f.Note)
	}
	if s := f.Suggestion; s != nil {
		fmt.Fprintf(tw, "Suggested\t%s\n", report.KindSuggestionText(ledger.Kind(f.Kind), *s))
		if slices.Contains(ledger.BankKinds, ledger.Kind(f.Kind)) {
			// A payout and a credit are not matched by hand: the run does.
		} else if f.Kind == string(ledger.KindUnknownCharge) {
			fmt.Fprintf(tw, "\taccept: reconcile findings match %s --intent %s\n", f.ID, s.IntentKey)
		} else {
			fmt.Fprintf(tw, "\taccept: reconcile findings match %s --intent %s\n", s.FindingID, s.IntentKey)
		}
	}
}

// writeIntentText writes the intent and its attempts, or that the intent
// key names none in the books.
func writeIntentText(w io.Writer, in *IntentView, key string, ts func(time.Time) string) {
	if in != nil {
		fmt.Fprintf(w, "\nIntent %s\n", in.Key)
		fmt.Fprintf(w, "  %s %s %s, %s, reference %s", in.Provider, in.Currency, in.Amount, in.State, orDash(in.Reference))
		if in.Customer != "" {
			fmt.Fprintf(w, ", customer %s", in.Customer)
		}
		fmt.Fprintf(w, "\n  created %s, updated %s\n", ts(in.CreatedAt), ts(in.UpdatedAt))
		if len(in.Attempts) == 0 {
			fmt.Fprintln(w, "  no attempts")
		}
		for _, at := range in.Attempts {
			fmt.Fprintf(w, "  attempt %d: %s, started %s", at.Number, at.Outcome, ts(at.StartedAt))
			if at.FinishedAt != nil {
				fmt.Fprintf(w, ", finished %s", ts(*at.FinishedAt))
			}
			if at.ProviderRef != "" {
				fmt.Fprintf(w, ", provider ref %s", at.ProviderRef)
			}
			if at.Error != "" {
				fmt.Fprintf(w, ", error: %s", at.Error)
			}
			fmt.Fprintln(w)
		}
	} else if key != "" {
		fmt.Fprintf(w, "\nIntent %s is not in the books.\n", key)
	}
}

// writeTxnsText writes the provider transactions and where each was seen.
func writeTxnsText(w io.Writer, txns []TxnView, ts func(time.Time) string) {
	if len(txns) > 0 {
		fmt.Fprintln(w, "\nProvider transactions")
	}
	for _, t := range txns {
		fmt.Fprintf(w, "  %s %s %s %s at %s", t.ID, t.Type, t.Status, amountText(t.Amount), ts(t.OccurredAt))
		for _, kv := range [][2]string{{"reference", t.Reference}, {"provider ref", t.ProviderRef},
			{"counterparty", t.Counterparty}, {"linked to", t.LinkedID}} {
			if kv[1] != "" {
				fmt.Fprintf(w, ", %s %s", kv[0], kv[1])
			}
		}
		fmt.Fprintln(w)
		for _, s := range t.Sources {
			fmt.Fprintf(w, "    seen via %s %s at %s\n", s.Channel, s.Ref, ts(s.ReceivedAt))
			if s.Raw != "" {
				fmt.Fprintf(w, "      %s\n", OneLine(s.Raw, 400))
			}
		}
	}
}

// writeRemediesText writes the remedies asked for and the refunds they
// created.
func writeRemediesText(w io.Writer, remedies []RemedyView, ts func(time.Time) string) {
	if len(remedies) > 0 {
		fmt.Fprintln(w, "\nRemedies")
	}
	for _, r := range remedies {
		fmt.Fprintf(w, "  request %d: %s", r.ID, r.Kind)
		if r.Amount != nil {
			fmt.Fprintf(w, " of %s", amountText(r.Amount))
		}
		if r.TxnID != "" {
			fmt.Fprintf(w, " for %s", r.TxnID)
		}
		fmt.Fprintf(w, ", %s; asked by %s via %s at %s", r.Status, r.RequestedBy, r.RequestedVia, ts(r.RequestedAt))
		if r.ExpiresAt != nil && r.Status == string(ledger.RemedyAwaitingApproval) {
			fmt.Fprintf(w, ", expires %s", ts(*r.ExpiresAt))
		}
		if r.DecidedBy != "" {
			fmt.Fprintf(w, "; %s by %s via %s at %s", decidedWord(r.Status), r.DecidedBy, r.DecidedVia, ts(*r.DecidedAt))
		}
		fmt.Fprintln(w)
		if r.RefundKey != "" {
			fmt.Fprintf(w, "    refund %s: %s", r.RefundKey, orDash(r.RefundState))
			if r.WaitingFor != "" {
				fmt.Fprintf(w, ", waiting since %s for %s", ts(*r.Waiting), r.WaitingFor)
			}
			fmt.Fprintln(w)
		}
	}
}

// decidedWord is what the second person did to a request now in status.
func decidedWord(status string) string {
	if status == string(ledger.RemedyRejected) {
		return "rejected"
	}
	return "approved"
}

// WriteHistoryText renders a history for a person, one event a line, times
// in loc.
func WriteHistoryText(w io.Writer, evs []EventView, loc *time.Location) error {
	if len(evs) == 0 {
		fmt.Fprintln(w, "  none recorded")
	}
	for _, ev := range evs {
		fmt.Fprintf(w, "  %s  %s by %s via %s", report.LocalTime(ev.At, loc), ev.Action, ev.Actor, ev.Surface)
		if ev.Note != "" {
			fmt.Fprintf(w, ": %s", ev.Note)
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// OneLine squeezes a payload onto one line of at most max bytes.
func OneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		return s[:max] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

// WriteHistoryCSV renders a history, one event a row, each naming subject.
func WriteHistoryCSV(w io.Writer, subject string, evs []EventView) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"subject", "at", "action", "actor", "surface", "run_id", "note"})
	for _, ev := range evs {
		run := ""
		if ev.RunID != 0 {
			run = strconv.FormatInt(ev.RunID, 10)
		}
		_ = cw.Write([]string{subject, ts(ev.At), ev.Action, ev.Actor, ev.Surface, run, ev.Note})
	}
	cw.Flush()
	return cw.Error()
}
