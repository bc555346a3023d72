package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
)

func newQuarantineCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quarantine",
		Short: "Inspect rejected input kept for audit",
		Long: `Input reconcile refused (a bad row of an imported file, a callback body it could not read, a
body from an address outside the allowlist) is kept in the quarantine with the file, line, field
and reason. Nothing is dropped silently. An item stays kept until someone dismisses it (with a
note) or replays it; both are recorded with who and when.`,
	}
	var (
		source, format string
		limit          int
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List quarantined input, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := report.ParseFormat(format)
			if err != nil {
				return usagef("--format: %v", err)
			}
			d, err := a.resolve(cmd.Context(), storeExisting)
			if err != nil {
				return err
			}
			items, err := d.store.ListQuarantine(cmd.Context(), source, limit)
			if err != nil {
				return err
			}
			switch f {
			case report.JSON:
				return writeQuarantineJSON(a, items)
			case report.CSV:
				return writeQuarantineCSV(a, items)
			}
			if len(items) == 0 {
				fmt.Fprintln(a.stdout, "Nothing quarantined.")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
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
		},
	}
	list.Flags().StringVar(&source, "source", "", "only this input path (intents_csv, mpesa_statement, mpesa_callback, ...)")
	list.Flags().IntVar(&limit, "limit", 100, "at most this many")
	list.Flags().StringVar(&format, "format", "text", "text, json or csv (json and csv include the raw input)")
	cmd.AddCommand(list)
	cmd.AddCommand(quarantineActCmds(a)...)
	return cmd
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func writeQuarantineCSV(a *app, items []ledger.QuarantineItem) error {
	cw := csv.NewWriter(a.stdout)
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

func writeQuarantineJSON(a *app, items []ledger.QuarantineItem) error {
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
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"quarantine": out})
}
