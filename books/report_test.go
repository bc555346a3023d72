package books_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/books"
	"github.com/reconcilehq/reconcile/internal/golden"
)

// TestReportText: what the commands print, for a copy that verifies, one
// that does not, a prune, a dry-run prune and an erasure.
func TestReportText(t *testing.T) {
	t.Parallel()
	ok := &books.CopyReport{From: "sqlite", To: "postgres", Version: 15, Tables: []books.TableReport{
		{Table: "intents", Rows: 200000, Checks: []books.Check{{What: "rows", Source: "200000", Target: "200000"},
			{What: "sum(amount)", Source: "2512034100", Target: "2512034100"},
			{What: "sum(tolerance)", Source: "0", Target: "0"},
			{What: "keys", Source: "9f2c61d0a4e4b7e15c0d7e8b2a1f9c33", Target: "9f2c61d0a4e4b7e15c0d7e8b2a1f9c33"}}},
		{Table: "attempts", Rows: 200000, Checks: []books.Check{{What: "rows", Source: "200000", Target: "200000"},
			{What: "keys", Source: "0c1d2e3f405162738495a6b7c8d9eaf0", Target: "0c1d2e3f405162738495a6b7c8d9eaf0"}}},
	}}
	bad := &books.CopyReport{From: "postgres", To: "sqlite", Version: 15, Tables: []books.TableReport{
		{Table: "provider_txns", Rows: 3, Checks: []books.Check{{What: "rows", Source: "3", Target: "3"},
			{What: "sum(amount)", Source: "1500.5", Target: "1500"},
			{What: "sum(settlement_amount)", Source: "0", Target: "0"},
			{What: "keys", Source: "aa", Target: "aa"}}},
	}}
	before := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	items := []books.PruneItem{{What: "provider_txn_sources.raw", Rows: 128, Bytes: 52549, Kept: 20},
		{What: "callbacks.body", Rows: 41, Bytes: 13445}, {What: "quarantine.raw", Rows: 2, Bytes: 138},
		{What: "findings.detail,suggestion,note", Rows: 1, Bytes: 149}, {What: "history.note", Rows: 1, Bytes: 52}}
	er := &books.Erasure{Token: "erased:5f0c2a9d41b7e3c8", Forms: 14, At: before, Renamed: 1, Changed: []books.ColumnCount{
		{Table: "attempts", Column: "provider_ref", Rows: 2}, {Table: "intents", Column: "customer", Rows: 1},
		{Table: "provider_txn_sources", Column: "raw", Rows: 3}, {Table: "river_job", Column: "args", Rows: 1}}}
	var b bytes.Buffer
	write := func(title string, fn func() error) {
		b.WriteString("== " + title + "\n")
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		b.WriteString("\n")
	}
	write("copy that verifies", func() error { return ok.WriteText(&b) })
	write("copy that does not", func() error { return bad.WriteText(&b) })
	write("prune", func() error { return (&books.PruneReport{Before: before, Items: items}).WriteText(&b) })
	write("prune, dry run", func() error { return (&books.PruneReport{Before: before, DryRun: true, Items: items}).WriteText(&b) })
	write("erase", func() error { return er.WriteText(&b) })
	write("erase, dry run, nothing found", func() error {
		return (&books.Erasure{Token: "erased:5f0c2a9d41b7e3c8", Forms: 3, DryRun: true}).WriteText(&b)
	})
	golden.Assert(t, "testdata/reports.golden", b.String())
}
