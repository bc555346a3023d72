package findings

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
)

// WriteQuarantineItem renders a quarantined item with its history (its
// dismissal or replay, with who and when) in format f: text for a person,
// JSON (indented), or CSV (its history only, as a finding's). Its raw input
// is shown masked; times are in UTC.
func WriteQuarantineItem(w io.Writer, f report.Format, q ledger.QuarantineItem, evs []ledger.HistoryEvent) error {
	hist := ViewHistory(evs)
	switch f {
	case report.JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"item": map[string]any{"id": q.ID, "source": q.Source, "origin": q.Origin,
			"line": q.Line, "field": q.Field, "reason": q.Reason, "at": q.At.UTC(), "status": q.Status,
			"input": ledger.MaskPayload(q.Raw)}, "history": hist})
	case report.CSV:
		return WriteHistoryCSV(w, strconv.FormatInt(q.ID, 10), hist)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Quarantined item %d (%s), %s\n", q.ID, q.Source, q.Status)
	fmt.Fprintf(&b, "Received %s from %s", report.LocalTime(q.At, time.UTC), q.Origin)
	if q.Line > 0 {
		fmt.Fprintf(&b, " line %d", q.Line)
	}
	if q.Field != "" {
		fmt.Fprintf(&b, ", field %s", q.Field)
	}
	fmt.Fprintf(&b, "\nReason: %s\nInput (masked): %s\n\nHistory\n", q.Reason, OneLine(ledger.MaskPayload(q.Raw), 2000))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return WriteHistoryText(w, hist, time.UTC)
}

// QuarantineReader reads a quarantined item and its history.
type QuarantineReader interface {
	GetQuarantine(ctx context.Context, id int64) (ledger.QuarantineItem, error)
	QuarantineHistory(ctx context.Context, id int64) ([]ledger.HistoryEvent, error)
}

// ShowQuarantineItem reads the quarantined item id with its history from r
// and writes them in format f (WriteQuarantineItem). An item r does not
// hold is ledger.ErrNotFound.
func ShowQuarantineItem(ctx context.Context, w io.Writer, f report.Format, r QuarantineReader, id int64) error {
	q, err := r.GetQuarantine(ctx, id)
	if err != nil {
		return err
	}
	evs, err := r.QuarantineHistory(ctx, id)
	if err != nil {
		return err
	}
	return WriteQuarantineItem(w, f, q, evs)
}
