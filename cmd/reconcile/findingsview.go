package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/report"
)

// The views below are what `findings show`, `runs` and the findings API
// print: one JSON shape for the command line and the API.

type amountView struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
}

func viewAmount(a money.Amount) *amountView {
	if a.IsZero() {
		return nil
	}
	return &amountView{Amount: a.Text(), Currency: a.Currency}
}

type findingView struct {
	ID             string      `json:"id"`
	Kind           string      `json:"kind"`
	Severity       string      `json:"severity"`
	Status         string      `json:"status"`
	Provider       string      `json:"provider"`
	IntentKey      string      `json:"intent_key"`
	IntentKind     string      `json:"intent_kind,omitempty"`
	ProviderTxnIDs []string    `json:"provider_txn_ids"`
	Expected       *amountView `json:"expected,omitempty"`
	Actual         *amountView `json:"actual,omitempty"`
	AtRisk         *amountView `json:"at_risk,omitempty"`
	Counterparty   string      `json:"counterparty,omitempty"`
	Detail         string      `json:"detail"`
	OccurredAt     time.Time   `json:"occurred_at"`
	FirstSeenAt    time.Time   `json:"first_seen_at"`
	LastSeenAt     time.Time   `json:"last_seen_at"`
	FirstRunID     int64       `json:"first_run_id"`
	LastRunID      int64       `json:"last_run_id"`
	AcknowledgedAt *time.Time  `json:"acknowledged_at,omitempty"`
	AcknowledgedBy string      `json:"acknowledged_by,omitempty"`
	ResolvedAt     *time.Time  `json:"resolved_at,omitempty"`
	ResolvedBy     string      `json:"resolved_by,omitempty"`
	Note           string      `json:"note,omitempty"`
	// Suggestion is the likely other half of an unknown_charge or a
	// missing_at_provider; `findings match` accepts it.
	Suggestion *ledger.Suggestion `json:"suggestion,omitempty"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func viewFinding(f ledger.Finding) findingView {
	return findingView{ID: f.ID, Kind: string(f.Kind), Severity: string(f.Severity), Status: string(f.Status),
		Provider: f.Provider, IntentKey: f.IntentKey, IntentKind: string(f.IntentKindShown()),
		ProviderTxnIDs: ledger.SortedIDs(f.ProviderTxnIDs),
		Expected:       viewAmount(f.Expected), Actual: viewAmount(f.Actual), AtRisk: viewAmount(f.AtRisk),
		Counterparty: f.Counterparty, Detail: f.Detail, OccurredAt: f.OccurredAt.UTC(), FirstSeenAt: f.FirstSeenAt.UTC(),
		LastSeenAt: f.LastSeenAt.UTC(), FirstRunID: f.FirstRunID, LastRunID: f.LastRunID,
		AcknowledgedAt: optTime(f.AcknowledgedAt), AcknowledgedBy: f.AcknowledgedBy, ResolvedAt: optTime(f.ResolvedAt),
		ResolvedBy: resolvedByOf(f), Note: f.Note, Suggestion: suggestionOf(f.Suggestion)}
}

func suggestionOf(s ledger.Suggestion) *ledger.Suggestion {
	if s.IsZero() {
		return nil
	}
	return &s
}

// resolvedByOf names who resolved a finding: the person, or the run.
func resolvedByOf(f ledger.Finding) string {
	if f.Status != ledger.FindingResolved {
		return ""
	}
	if f.Resolver != "" {
		return f.Resolver
	}
	return f.ResolvedBy // resolved before people were recorded
}

type eventView struct {
	At      time.Time `json:"at"`
	Action  string    `json:"action"`
	Actor   string    `json:"actor"`
	Surface string    `json:"surface"`
	RunID   int64     `json:"run_id,omitempty"`
	Note    string    `json:"note,omitempty"`
}

func viewHistory(evs []ledger.HistoryEvent) []eventView {
	out := make([]eventView, 0, len(evs))
	for _, ev := range evs {
		out = append(out, eventView{At: ev.At.UTC(), Action: string(ev.Action), Actor: ev.Who(), Surface: string(ev.Surface),
			RunID: ev.RunID, Note: ev.Note})
	}
	return out
}

type sourceView struct {
	Channel    string    `json:"channel"`
	Ref        string    `json:"ref"`
	ReceivedAt time.Time `json:"received_at"`
	// Raw is the payload as received, with phone numbers, e-mail addresses
	// and other long digit runs masked.
	Raw string `json:"raw"`
}

type txnView struct {
	ID           string       `json:"id"`
	Type         string       `json:"type"`
	Status       string       `json:"status"`
	Amount       *amountView  `json:"amount,omitempty"`
	OccurredAt   time.Time    `json:"occurred_at"`
	Reference    string       `json:"reference,omitempty"`
	ProviderRef  string       `json:"provider_ref,omitempty"`
	Counterparty string       `json:"counterparty,omitempty"`
	LinkedID     string       `json:"linked_id,omitempty"`
	Sources      []sourceView `json:"sources"`
}

func viewTxn(t ledger.ProviderTxn) txnView {
	v := txnView{ID: t.ID, Type: string(t.Type), Status: string(t.Status), Amount: viewAmount(t.Amount),
		OccurredAt: t.OccurredAt.UTC(), Reference: t.Reference, ProviderRef: t.ProviderRef,
		Counterparty: ledger.MaskCustomer(t.Counterparty), LinkedID: t.LinkedID, Sources: []sourceView{}}
	for _, s := range t.Sources {
		v.Sources = append(v.Sources, sourceView{Channel: s.Channel, Ref: s.Ref, ReceivedAt: s.ReceivedAt.UTC(), Raw: ledger.MaskPayload(s.Raw)})
	}
	return v
}

// findingDetail is a finding with its evidence and history.
type findingDetail struct {
	Finding      findingView `json:"finding"`
	Intent       *intentJSON `json:"intent,omitempty"`
	Transactions []txnView   `json:"transactions"`
	History      []eventView `json:"history"`
}

// loadFindingDetail reads a finding, its intent with attempts, its provider
// transactions with their sources, and its history.
func loadFindingDetail(ctx context.Context, s findingDetailReader, id string) (findingDetail, error) {
	f, err := s.GetFinding(ctx, id)
	if err != nil {
		return findingDetail{}, err
	}
	d := findingDetail{Finding: viewFinding(f), Transactions: []txnView{}}
	if f.IntentKey != "" {
		in, err := s.GetIntent(ctx, f.IntentKey)
		switch {
		case err == nil:
			attempts, err := s.ListAttempts(ctx, f.IntentKey)
			if err != nil {
				return findingDetail{}, err
			}
			iv := intentView(in, attempts)
			d.Intent = &iv
		case !errors.Is(err, ledger.ErrNotFound):
			return findingDetail{}, err
		}
	}
	txns, err := s.GetProviderTxns(ctx, f.Provider, f.ProviderTxnIDs)
	if err != nil {
		return findingDetail{}, err
	}
	byID := make(map[string]ledger.ProviderTxn, len(txns))
	for _, t := range txns {
		byID[t.ID] = t
	}
	for _, tid := range ledger.SortedIDs(f.ProviderTxnIDs) {
		if t, ok := byID[tid]; ok {
			d.Transactions = append(d.Transactions, viewTxn(t))
		}
	}
	evs, err := s.FindingHistory(ctx, id)
	if err != nil {
		return findingDetail{}, err
	}
	d.History = viewHistory(evs)
	return d, nil
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func amountText(a *amountView) string {
	if a == nil {
		return "-"
	}
	return a.Currency + " " + a.Amount
}

// writeFindingText renders a finding's detail for a person.
func writeFindingText(w io.Writer, d findingDetail) error {
	f := d.Finding
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
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
		fmt.Fprintf(tw, "Suggested\t%s\n", report.SuggestionText(*s))
		if f.Kind == string(ledger.KindUnknownCharge) {
			fmt.Fprintf(tw, "\taccept: reconcile findings match %s --intent %s\n", f.ID, s.IntentKey)
		} else {
			fmt.Fprintf(tw, "\taccept: reconcile findings match %s --intent %s\n", s.FindingID, s.IntentKey)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if in := d.Intent; in != nil {
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
	} else if f.IntentKey != "" {
		fmt.Fprintf(w, "\nIntent %s is not in the books.\n", f.IntentKey)
	}

	if len(d.Transactions) > 0 {
		fmt.Fprintln(w, "\nProvider transactions")
	}
	for _, t := range d.Transactions {
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
				fmt.Fprintf(w, "      %s\n", oneLine(s.Raw, 400))
			}
		}
	}

	fmt.Fprintln(w, "\nHistory")
	if len(d.History) == 0 {
		fmt.Fprintln(w, "  none recorded")
	}
	for _, ev := range d.History {
		fmt.Fprintf(w, "  %s  %s by %s via %s", ts(ev.At), ev.Action, ev.Actor, ev.Surface)
		if ev.Note != "" {
			fmt.Fprintf(w, ": %s", ev.Note)
		}
		fmt.Fprintln(w)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine squeezes a payload onto one line of at most max bytes.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		return s[:max] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

// writeHistoryCSV renders a history, one event a row.
func writeHistoryCSV(w io.Writer, subject string, evs []eventView) error {
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
