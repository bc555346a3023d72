package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// WriteClose renders a close report in format f: text for people, JSON (the
// whole report), CSV (one row per provider account and currency).
func WriteClose(w io.Writer, f Format, c Close) error {
	switch f {
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	case CSV:
		return closeCSV(w, c)
	default:
		return closeText(w, c)
	}
}

func closeCSV(w io.Writer, c Close) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"period", "provider", "currency", "days", "days_run", "days_not_run", "intents", "intents_amount",
		"refund_intents", "refund_intents_amount", "evidence_in", "evidence_in_amount", "evidence_back", "evidence_back_amount",
		"evidence_other", "evidence_other_amount", "open_findings", "open_at_risk", "resolved_by_hand", "written_off",
		"written_off_amount", "refunded", "refunded_amount", "matched_by_hand", "closed_by", "closed_at", "account"})
	by, at := "", ""
	if c.Closed != nil {
		by, at = c.Closed.By, utc(c.Closed.At)
	}
	n := strconv.Itoa
	for _, p := range c.Sections {
		for _, cur := range p.Currencies {
			_ = cw.Write([]string{c.Period, p.Provider, cur.Currency, n(p.Days), n(p.Run), strings.Join(p.Missing, " "),
				n(cur.Intents.N), cur.Intents.Amount, n(cur.RefundIntents.N), cur.RefundIntents.Amount, n(cur.In.N), cur.In.Amount,
				n(cur.Back.N), cur.Back.Amount, n(cur.Other.N), cur.Other.Amount, n(cur.OpenAtRisk.N), cur.OpenAtRisk.Amount,
				n(cur.ResolvedByHand), n(cur.WrittenOff.N), cur.WrittenOff.Amount, n(cur.Refunded.N), cur.Refunded.Amount,
				n(len(p.MatchedByHand)), by, at, p.Account})
		}
	}
	cw.Flush()
	return cw.Error()
}

// closeText is the report for people, times in each provider's zone.
func closeText(w io.Writer, c Close) error {
	var b strings.Builder
	writeCloseHeader(&b, c)
	if len(c.Sections) == 0 {
		b.WriteString("\nNothing in the books for this month.\n")
	}
	for _, p := range c.Sections {
		zone := loadZone(p.Zone)
		writeCloseDays(&b, p, zone)
		writeCloseCurrencies(&b, p.Currencies)
		writeCloseByHand(&b, p, zone)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCloseHeader writes the period, its scope, who closed it and the
// previous close.
func writeCloseHeader(b *strings.Builder, c Close) {
	scope := "every provider"
	if c.Provider != "" {
		scope = ledger.SafeLine(c.Provider, 64)
	}
	if c.Account != "" {
		scope += ", account " + ledger.SafeLine(c.Account, 64)
	}
	fmt.Fprintf(b, "Close of %s: %s\n", c.Period, scope)
	if c.Closed != nil {
		fmt.Fprintf(b, "  closed by %s (%s) on %s", ledger.SafeLine(c.Closed.By, 200), c.Closed.Via, utc(c.Closed.At))
		if c.Closed.Note != "" {
			fmt.Fprintf(b, ": %s", ledger.SafeLine(c.Closed.Note, 400))
		}
		b.WriteString("\n")
	} else {
		b.WriteString("  not closed\n")
	}
	if c.Previous != nil {
		fmt.Fprintf(b, "  previous close: %s, by %s on %s\n", c.Previous.Period, ledger.SafeLine(c.Previous.By, 200), utc(c.Previous.At))
	}
}

// writeCloseDays writes a provider's heading, the days run of those over
// and how many of its transactions were matched.
func writeCloseDays(b *strings.Builder, p CloseProvider, zone *time.Location) {
	fmt.Fprintf(b, "\n%s  %s\n", ledger.SafeLine(p.Scope(), 64), LocalWindow(p.From, p.To, zone))
	switch {
	case p.Due == 0:
		fmt.Fprintf(b, "  days run      none of its %d days is over\n", p.Days)
	case len(p.Missing) == 0:
		fmt.Fprintf(b, "  days run      %d of %d (every day over was run)\n", p.Run, p.Due)
	default:
		fmt.Fprintf(b, "  days run      %d of %d; NOT RUN: %s\n", p.Run, p.Due, dayRanges(p.Missing))
	}
	if p.Due < p.Days && p.Due > 0 {
		fmt.Fprintf(b, "                %d day(s) not over yet\n", p.Days-p.Due)
	}
	fmt.Fprintf(b, "  matched       %s of %s transactions (as the month's runs last saw them)\n", count(p.Matched), count(p.Transactions))
}

// writeCloseCurrencies writes a provider's counts and sums per currency,
// aligned in columns.
func writeCloseCurrencies(b *strings.Builder, currencies []CloseCurrency) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, cur := range currencies {
		fmt.Fprintf(tw, "\n  %s\n", orDashText(cur.Currency))
		line := func(what string, cs CountSum) {
			fmt.Fprintf(tw, "    %s\t%s\t%s\n", what, count(cs.N), amountOf(cur.Currency, cs.Amount))
		}
		line("intents (charges, expected)", cur.Intents)
		line("refund intents", cur.RefundIntents)
		line("evidence in (charges)", cur.In)
		line("evidence back (refunds, reversals)", cur.Back)
		line("other evidence (fees, payouts)", cur.Other)
		line("open findings, at risk", cur.OpenAtRisk)
		for _, k := range cur.Open {
			fmt.Fprintf(tw, "      %s\t%s\t%s\n", k.Kind, count(k.N), amountOf(cur.Currency, k.AtRisk))
		}
		fmt.Fprintf(tw, "    resolved by hand\t%s\t\n", count(cur.ResolvedByHand))
		line("written off", cur.WrittenOff)
		line("refunded from findings", cur.Refunded)
	}
	_ = tw.Flush()
}

// writeCloseByHand lists what people did in a provider's month: findings
// resolved by hand, written off and refunded, transactions matched by hand,
// and the findings raised or changed after the month was closed.
func writeCloseByHand(b *strings.Builder, p CloseProvider, zone *time.Location) {
	if len(p.ResolvedByHand) > 0 {
		b.WriteString("\n  Resolved by hand\n")
		for _, h := range p.ResolvedByHand {
			fmt.Fprintf(b, "    %s  %s, %s at risk: by %s (%s) on %s: %s\n", h.Finding, h.Kind, h.AtRisk, ledger.SafeLine(h.By, 200),
				h.Via, LocalTime(h.At, zone), ledger.SafeLine(h.Note, 400))
		}
	}
	remedies := func(title string, ls []RemedyLine) {
		if len(ls) == 0 {
			return
		}
		fmt.Fprintf(b, "\n  %s\n", title)
		for _, r := range ls {
			who := "asked by " + ledger.SafeLine(r.RequestedBy, 200)
			if r.ApprovedBy != "" {
				who += ", approved by " + ledger.SafeLine(r.ApprovedBy, 200)
			}
			what := r.Amount
			if r.TxnID != "" {
				what += " of " + r.TxnID
			}
			fmt.Fprintf(b, "    %s  %s: %s, %s; %s on %s: %s\n", r.Finding, r.Kind, what, r.Status, who, LocalTime(r.At, zone),
				ledger.SafeLine(r.Note, 400))
		}
	}
	remedies("Written off", p.WrittenOff)
	remedies("Refunded", p.Refunded)
	if len(p.MatchedByHand) > 0 {
		b.WriteString("\n  Matched by hand\n")
		for _, m := range p.MatchedByHand {
			fmt.Fprintf(b, "    %s -> %s: by %s on %s: %s\n", m.TxnID, ledger.SafeLine(m.IntentKey, 200), ledger.SafeLine(m.By, 200),
				LocalTime(m.At, zone), ledger.SafeLine(m.Note, 400))
		}
	}
	changes := func(title string, ls []ChangeLine) {
		if len(ls) == 0 {
			return
		}
		fmt.Fprintf(b, "\n  %s\n", title)
		for _, l := range ls {
			fmt.Fprintf(b, "    %s  %s of %s, %s at risk: %s on %s\n", l.Finding, l.Kind, l.Period, l.AtRisk, ledger.SafeLine(l.What, 200),
				LocalTime(l.At, zone))
		}
	}
	changes("Raised after the month was closed", p.Late)
	changes("Changed in closed months since the previous close", p.Changed)
}

func orDashText(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// amountOf renders a sum's text with thousands separators.
func amountOf(cur, text string) string {
	if cur == "" {
		return "-"
	}
	intPart, frac, ok := strings.Cut(text, ".")
	out := cur + " " + groupDigits(intPart)
	if ok {
		out += "." + frac
	}
	return out
}

func groupDigits(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// loadZone is the zone named, UTC when unknown.
func loadZone(name string) *time.Location {
	if z, err := time.LoadLocation(name); err == nil {
		return z
	}
	return time.UTC
}

// dayRanges renders sorted days (YYYY-MM-DD), runs of consecutive days as
// ranges: "2026-03-01 to 2026-03-13, 2026-03-15".
func dayRanges(days []string) string {
	var parts []string
	for i := 0; i < len(days); {
		j := i
		for j+1 < len(days) && nextDay(days[j]) == days[j+1] {
			j++
		}
		if j == i {
			parts = append(parts, days[i])
		} else {
			parts = append(parts, days[i]+" to "+days[j])
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func nextDay(day string) string {
	t, err := time.Parse("2006-01-02", day)
	if err != nil {
		return ""
	}
	return t.AddDate(0, 0, 1).Format("2006-01-02")
}
