package books

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
)

// PruneOptions say what Prune removes.
type PruneOptions struct {
	// Before is the cut: payloads received (or findings resolved) before
	// it go.
	Before time.Time
	// DryRun counts what would go and changes nothing.
	DryRun bool
	// Batch is how many rows one transaction looks at; default 5,000.
	Batch int
}

// DefaultPruneBatch is how many rows a prune transaction looks at.
const DefaultPruneBatch = 5000

// PruneReport says what Prune removed, or with DryRun would remove.
type PruneReport struct {
	Before time.Time
	DryRun bool
	Items  []PruneItem
}

// PruneItem is what went of one kind of payload.
type PruneItem struct {
	// What names the payload: table.column.
	What string
	// Rows lost their payload, which held Bytes.
	Rows, Bytes int64
	// Kept counts rows old enough that were kept because an open or
	// acknowledged finding names their transaction.
	Kept int64
}

// Rows counts the rows that lost (or would lose) a payload.
func (r *PruneReport) Rows() int64 {
	var n int64
	for _, it := range r.Items {
		n += it.Rows
	}
	return n
}

// WriteText writes the report as a table.
func (r *PruneReport) WriteText(w io.Writer) error {
	verb := "pruned"
	if r.DryRun {
		verb = "would prune (dry run, nothing changed)"
	}
	fmt.Fprintf(w, "payloads before %s: %s\n\n", r.Before.UTC().Format(time.RFC3339), verb)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "PAYLOAD\tROWS\tBYTES\tKEPT FOR OPEN FINDINGS\n")
	for _, it := range r.Items {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", it.What, it.Rows, it.Bytes, it.Kept)
	}
	return tw.Flush()
}

// pruneSpec is one kind of payload Prune removes.
type pruneSpec struct {
	what  string
	table string
	// cols are read besides the key, each as its type.
	cols []colSpec
	// payload are the columns cleared, to clear (nil: NULL).
	payload []string
	clear   []any
	// pick says which rows of a page lose their payload; kept counts the
	// rows kept for an open finding.
	pick func(ctx context.Context, r engine.Reader, rows [][]any, c pickCtx) (picked []bool, kept int64, err error)
	// then runs after a page with the keys of its picked rows.
	then func(ctx context.Context, r engine.Reader, w engine.Writer, keys [][]any) (rows, bytes int64, err error)
}

type colSpec struct {
	name string
	typ  engine.Type
}

// pickCtx gives pick the positions of its columns in a row.
type pickCtx struct {
	before time.Time
	col    map[string]int
}

func (c pickCtx) time(row []any, name string) time.Time { return engine.TimeOf(row[c.col[name]]) }

func (c pickCtx) str(row []any, name string) string {
	s, _ := row[c.col[name]].(string)
	return s
}

// Prune removes payloads older than Before that the books no longer need,
// keeping every amount, id and link, so that the books still reconcile:
// the raw bodies of provider transactions' sources (except those of
// transactions an open or acknowledged finding names), the bodies of
// callbacks already interpreted, the raw input of quarantined items that
// were dismissed or replayed, and the detail, suggestion and notes
// (history included) of findings resolved before Before. It works in
// batches of opt.Batch rows, one transaction each, in key order.
func Prune(ctx context.Context, store ledger.Store, opt PruneOptions) (*PruneReport, error) {
	if opt.Before.IsZero() {
		return nil, errors.New("books: prune: no cut given")
	}
	if opt.Batch <= 0 {
		opt.Batch = DefaultPruneBatch
	}
	b, err := engine.BooksOf(store)
	if err != nil {
		return nil, fmt.Errorf("books: prune: %w", err)
	}
	ts, err := b.Tables(ctx)
	if err != nil {
		return nil, err
	}
	report := &PruneReport{Before: opt.Before.UTC(), DryRun: opt.DryRun}
	for _, s := range pruneSpecs(ts) {
		it, err := prune(ctx, b, ts, s, opt)
		if err != nil {
			return nil, fmt.Errorf("books: prune %s: %w", s.what, err)
		}
		report.Items = append(report.Items, it...)
	}
	return report, nil
}

func pruneSpecs(ts []engine.Table) []pruneSpec {
	open := openEvidence
	return []pruneSpec{{
		what: "provider_txn_sources.raw", table: "provider_txn_sources",
		cols:    []colSpec{{"provider", engine.TypeText}, {"txn_id", engine.TypeText}, {"received_at", engine.TypeTime}},
		payload: []string{"raw"}, clear: []any{nil},
		pick: func(ctx context.Context, r engine.Reader, rows [][]any, c pickCtx) ([]bool, int64, error) {
			keep, err := open(ctx, r, ts)
			if err != nil {
				return nil, 0, err
			}
			picked := make([]bool, len(rows))
			var kept int64
			for i, row := range rows {
				if !c.time(row, "received_at").Before(c.before) {
					continue
				}
				if keep[c.str(row, "provider")+"\x00"+c.str(row, "txn_id")] {
					kept++
					continue
				}
				picked[i] = true
			}
			return picked, kept, nil
		},
	}, {
		what: "callbacks.body", table: "callbacks",
		cols:    []colSpec{{"received_at", engine.TypeTime}, {"processed_at", engine.TypeTime}},
		payload: []string{"body"}, clear: []any{[]byte{}},
		pick: func(_ context.Context, _ engine.Reader, rows [][]any, c pickCtx) ([]bool, int64, error) {
			picked := make([]bool, len(rows))
			for i, row := range rows {
				picked[i] = !c.time(row, "processed_at").IsZero() && c.time(row, "received_at").Before(c.before)
			}
			return picked, 0, nil
		},
	}, {
		what: "quarantine.raw", table: "quarantine",
		cols:    []colSpec{{"received_at", engine.TypeTime}, {"status", engine.TypeText}},
		payload: []string{"raw"}, clear: []any{nil},
		pick: func(_ context.Context, _ engine.Reader, rows [][]any, c pickCtx) ([]bool, int64, error) {
			picked := make([]bool, len(rows))
			for i, row := range rows {
				st := ledger.QuarantineStatus(c.str(row, "status"))
				picked[i] = (st == ledger.QuarantineDismissed || st == ledger.QuarantineReplayed) &&
					c.time(row, "received_at").Before(c.before)
			}
			return picked, 0, nil
		},
	}, {
		what: "findings.detail,suggestion,note", table: "findings",
		cols:    []colSpec{{"status", engine.TypeText}, {"resolved_at", engine.TypeTime}},
		payload: []string{"detail", "suggestion", "note"}, clear: []any{"", "", ""},
		pick: func(_ context.Context, _ engine.Reader, rows [][]any, c pickCtx) ([]bool, int64, error) {
			picked := make([]bool, len(rows))
			for i, row := range rows {
				at := c.time(row, "resolved_at")
				picked[i] = ledger.FindingStatus(c.str(row, "status")) == ledger.FindingResolved && !at.IsZero() && at.Before(c.before)
			}
			return picked, 0, nil
		},
		then: func(ctx context.Context, r engine.Reader, w engine.Writer, keys [][]any) (int64, int64, error) {
			return pruneNotes(ctx, r, w, ts, keys)
		},
	}}
}

// prune removes one kind of payload, a page of rows per transaction.
func prune(ctx context.Context, b engine.Books, ts []engine.Table, s pruneSpec, opt PruneOptions) ([]PruneItem, error) {
	c := pickCtx{before: opt.Before, col: map[string]int{}}
	key, cols, payload, err := s.columns(ts, c.col)
	if err != nil {
		return nil, err
	}
	main := PruneItem{What: s.what}
	notes := PruneItem{What: "history.note"}
	var after []any
	for {
		var full bool
		work := func(r engine.Reader, w engine.Writer) error {
			var page [][]any
			err := r.Scan(ctx, engine.Scan{Table: s.table, Cols: append(slices.Clone(key), cols...), Lengths: payload,
				Key: key, After: after, Limit: opt.Batch}, func(row []any) error {
				page = append(page, slices.Clone(row))
				return nil
			})
			if err != nil || len(page) == 0 {
				return err
			}
			full = len(page) == opt.Batch
			after = page[len(page)-1][:len(key)]
			picked, kept, err := s.pick(ctx, r, page, c)
			if err != nil {
				return err
			}
			updates, keys, rows, bytes := s.cleared(page, picked, len(key), len(key)+len(cols))
			if w != nil && len(updates) > 0 {
				if _, err := w.Update(ctx, engine.Update{Table: s.table, Key: key, Set: payload}, updates); err != nil {
					return err
				}
			}
			if s.then != nil && len(keys) > 0 {
				n, size, err := s.then(ctx, r, w, keys)
				if err != nil {
					return err
				}
				notes.Rows += n
				notes.Bytes += size
			}
			main.Rows += rows
			main.Bytes += bytes
			main.Kept += kept
			return nil
		}
		var err error
		if opt.DryRun {
			err = b.Read(ctx, func(r engine.Reader) error { return work(r, nil) })
		} else {
			err = b.Write(ctx, func(w engine.Writer) error { return work(w, w) })
		}
		if err != nil {
			return nil, err
		}
		if !full {
			break
		}
	}
	if s.then != nil {
		return []PruneItem{main, notes}, nil
	}
	return []PruneItem{main}, nil
}

// columns are the key, the picking columns and the payload columns of the
// spec's table among ts; col gets each picking column's position in a
// scanned row.
func (s pruneSpec) columns(ts []engine.Table, col map[string]int) (key, cols, payload []engine.Column, err error) {
	t, ok := find(ts, s.table)
	if !ok {
		return nil, nil, nil, fmt.Errorf("no table %s", s.table)
	}
	if len(t.Key) == 0 {
		return nil, nil, nil, fmt.Errorf("table %s has no primary key", s.table)
	}
	for _, k := range t.Key {
		c, _ := t.Column(k)
		key = append(key, c.As(c.Type))
	}
	for _, cs := range s.cols {
		c, ok := t.Column(cs.name)
		if !ok {
			return nil, nil, nil, fmt.Errorf("no column %s.%s", s.table, cs.name)
		}
		col[cs.name] = len(key) + len(cols)
		cols = append(cols, c.As(cs.typ))
	}
	for _, p := range s.payload {
		c, ok := t.Column(p)
		if !ok {
			return nil, nil, nil, fmt.Errorf("no column %s.%s", s.table, p)
		}
		payload = append(payload, c)
	}
	return key, cols, payload, nil
}

// cleared are the rows of page that were picked and hold a payload: the
// updates that clear them, their keys (the first nkey values of a row), and
// how many rows and payload bytes (the lengths from position lengths on)
// they are.
func (s pruneSpec) cleared(page [][]any, picked []bool, nkey, lengths int) (updates, keys [][]any, rows, bytes int64) {
	for i, row := range page {
		var size int64
		for _, l := range row[lengths:] {
			n, _ := l.(int64)
			size += n
		}
		if !picked[i] || size == 0 {
			continue
		}
		rows++
		bytes += size
		keys = append(keys, row[:nkey])
		updates = append(updates, append(slices.Clone(row[:nkey]), s.clear...))
	}
	return updates, keys, rows, bytes
}

// pruneNotes clears the notes in the history of the findings keys name.
func pruneNotes(ctx context.Context, r engine.Reader, w engine.Writer, ts []engine.Table, keys [][]any) (int64, int64, error) {
	t, ok := find(ts, "history")
	if !ok {
		return 0, 0, nil
	}
	id, _ := t.Column("id")
	kind, _ := t.Column("subject_kind")
	subject, _ := t.Column("subject_id")
	note, _ := t.Column("note")
	ids := make([]any, len(keys))
	for i, k := range keys {
		ids[i] = k[0]
	}
	var updates [][]any
	var bytes int64
	err := r.Scan(ctx, engine.Scan{Table: "history", Cols: []engine.Column{id.As(engine.TypeInt), kind.As(engine.TypeText)},
		Lengths: []engine.Column{note}, In: &engine.In{Col: subject.As(engine.TypeText), Values: ids}}, func(row []any) error {
		if n, _ := row[2].(int64); row[1] == ledger.SubjectFinding && n > 0 {
			updates = append(updates, []any{row[0], ""})
			bytes += n
		}
		return nil
	})
	if err != nil || w == nil || len(updates) == 0 {
		return int64(len(updates)), bytes, err
	}
	_, err = w.Update(ctx, engine.Update{Table: "history", Key: []engine.Column{id.As(engine.TypeInt)},
		Set: []engine.Column{note.As(engine.TypeText)}}, updates)
	return int64(len(updates)), bytes, err
}

// openEvidence is the set of provider transactions (provider NUL id) that
// open or acknowledged findings name.
func openEvidence(ctx context.Context, r engine.Reader, ts []engine.Table) (map[string]bool, error) {
	t, ok := find(ts, "findings")
	if !ok {
		return nil, errors.New("no table findings")
	}
	provider, _ := t.Column("provider")
	ids, _ := t.Column("provider_txn_ids")
	status, _ := t.Column("status")
	keep := map[string]bool{}
	err := r.Scan(ctx, engine.Scan{Table: "findings", Cols: []engine.Column{provider.As(engine.TypeText), ids.As(engine.TypeJSON)},
		In: &engine.In{Col: status.As(engine.TypeText), Values: []any{string(ledger.FindingOpen), string(ledger.FindingAcknowledged)}}},
		func(row []any) error {
			p, _ := row[0].(string)
			s, _ := row[1].(string)
			var list []string
			if err := json.Unmarshal([]byte(s), &list); err != nil {
				return fmt.Errorf("finding transactions %q: %w", s, err)
			}
			for _, id := range list {
				keep[p+"\x00"+id] = true
			}
			return nil
		})
	return keep, err
}

func find(ts []engine.Table, name string) (engine.Table, bool) {
	for _, t := range ts {
		if t.Name == name {
			return t, true
		}
	}
	return engine.Table{}, false
}
