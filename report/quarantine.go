package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// WriteQuarantine renders quarantined items in format f: a table for a
// person (fields made safe to print), or JSON and CSV with the raw input.
func WriteQuarantine(w io.Writer, f Format, items []ledger.QuarantineItem) error {
	switch f {
	case JSON:
		return quarantineJSON(w, items)
	case CSV:
		return quarantineCSV(w, items)
	}
	if len(items) == 0 {
		fmt.Fprintln(w, "Nothing quarantined.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAT\tSOURCE\tORIGIN\tLINE\tFIELD\tSTATUS\tREASON")
	for _, q := range items {
		line := ""
		if q.Line > 0 {
			line = fmt.Sprint(q.Line)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", q.ID, q.At.Format(time.RFC3339), ledger.SafeLine(q.Source, 64),
			ledger.SafeLine(q.Origin, 256), line, ledger.SafeLine(q.Field, 64), q.Status, ledger.SafeLine(firstLine(q.Reason), 1024))
	}
	return tw.Flush()
}

func quarantineCSV(w io.Writer, items []ledger.QuarantineItem) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"id", "at", "source", "origin", "line", "field", "reason", "raw"}); err != nil {
		return err
	}
	for _, q := range items {
		line := ""
		if q.Line > 0 {
			line = strconv.Itoa(q.Line)
		}
		if err := cw.Write([]string{strconv.FormatInt(q.ID, 10), q.At.UTC().Format(time.RFC3339), q.Source, q.Origin, line,
			q.Field, q.Reason, string(q.Raw)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func quarantineJSON(w io.Writer, items []ledger.QuarantineItem) error {
	type row struct {
		ID     int64     `json:"id"`
		At     time.Time `json:"at"`
		Source string    `json:"source"`
		Origin string    `json:"origin"`
		Line   int       `json:"line,omitempty"`
		Field  string    `json:"field,omitempty"`
		Reason string    `json:"reason"`
		Raw    string    `json:"raw"`
		Status string    `json:"status"`
	}
	out := make([]row, 0, len(items))
	for _, q := range items {
		out = append(out, row{ID: q.ID, At: q.At, Source: q.Source, Origin: q.Origin, Line: q.Line, Field: q.Field,
			Reason: q.Reason, Raw: string(q.Raw), Status: string(q.Status)})
	}
	return encode(w, map[string]any{"quarantine": out})
}
