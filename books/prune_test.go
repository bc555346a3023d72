package books_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/books"
	"github.com/reconcilehq/reconcile/internal/demo"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
	"github.com/reconcilehq/reconcile/reconciler"
)

// payloads maps each row of a table (by its key) to the length of its
// payload columns.
func payloads(t *testing.T, s ledger.Store, table string, cols ...string) map[string]int64 {
	t.Helper()
	b, _ := engine.BooksOf(s)
	ts, err := b.Tables(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var tab engine.Table
	for _, x := range ts {
		if x.Name == table {
			tab = x
		}
	}
	var key, lengths []engine.Column
	for _, k := range tab.Key {
		c, _ := tab.Column(k)
		key = append(key, c)
	}
	for _, n := range cols {
		c, _ := tab.Column(n)
		lengths = append(lengths, c)
	}
	out := map[string]int64{}
	err = b.Read(t.Context(), func(r engine.Reader) error {
		return r.Scan(t.Context(), engine.Scan{Table: table, Cols: key, Lengths: lengths}, func(row []any) error {
			var k []string
			for _, v := range row[:len(key)] {
				k = append(k, render(engine.Column{}, v))
			}
			var n int64
			for _, l := range row[len(key):] {
				n += l.(int64)
			}
			out[strings.Join(k, " ")] = n
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func nonEmpty(m map[string]int64) int {
	n := 0
	for _, v := range m {
		if v > 0 {
			n++
		}
	}
	return n
}

// TestPrune prunes a copy of the demo book on each engine, a few rows per
// transaction: a dry run counts and changes nothing; the prune removes
// what the dry run counted and nothing else: every source of a
// transaction an open or acknowledged finding names keeps its body,
// callbacks not yet interpreted and quarantine still kept keep theirs, and
// open findings keep their detail and notes. The books still reconcile to
// the same findings, a second prune finds nothing, a cut before the books
// prunes nothing, and the pruned book copies to the other engine.
func TestPrune(t *testing.T) {
	t.Parallel()
	for _, e := range []ledger.Engine{ledger.EnginePostgres, ledger.EngineSQLite} {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s, _ := copyOf(t, e, e)
			cut := demo.Day.AddDate(0, 0, 30)
			bodies := payloads(t, s, "provider_txn_sources", "raw")
			callbacks := payloads(t, s, "callbacks", "body")
			quarantine := payloads(t, s, "quarantine", "raw")
			findings := payloads(t, s, "findings", "detail", "suggestion", "note")
			notes := payloads(t, s, "history", "note")
			windows := []reconciler.Params{
				{Provider: "mpesa", From: demo.Day, To: demo.Day.AddDate(0, 0, 1), DryRun: true, NoPull: true},
				{Provider: "mpesa", From: scenarioDay.From, To: scenarioDay.To, DryRun: true, NoPull: true},
			}
			var found [][]string
			for _, w := range windows {
				found = append(found, dryRun(t, s, w))
			}

			if r, err := books.Prune(ctx, s, books.PruneOptions{Before: demo.Day.AddDate(0, -1, 0)}); err != nil || r.Rows() != 0 {
				t.Fatalf("a cut before the books pruned %d rows: %v", r.Rows(), err)
			}
			dry, err := books.Prune(ctx, s, books.PruneOptions{Before: cut, DryRun: true, Batch: 7})
			if err != nil {
				t.Fatal(err)
			}
			if got := payloads(t, s, "provider_txn_sources", "raw"); nonEmpty(got) != nonEmpty(bodies) {
				t.Fatalf("a dry run changed sources")
			}
			done, err := books.Prune(ctx, s, books.PruneOptions{Before: cut, Batch: 7})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(dry.Items, done.Items) {
				t.Errorf("the dry run counted %+v, the prune did %+v", dry.Items, done.Items)
			}
			byWhat := map[string]books.PruneItem{}
			for _, it := range done.Items {
				byWhat[it.What] = it
			}

			// Sources: those of open evidence stay, the rest go.
			live, err := s.ListFindings(ctx, ledger.FindingFilter{Statuses: []ledger.FindingStatus{ledger.FindingOpen, ledger.FindingAcknowledged}})
			if err != nil || len(live) == 0 {
				t.Fatal(live, err)
			}
			kept := map[string]bool{}
			for _, f := range live {
				for _, id := range f.ProviderTxnIDs {
					kept[render(engine.Column{}, f.Provider)+" "+render(engine.Column{}, id)] = true
				}
			}
			after := payloads(t, s, "provider_txn_sources", "raw")
			var wantRows, wantKept int64
			for k, n := range bodies {
				txn := strings.Join(strings.SplitN(k, " ", 3)[:2], " ")
				switch {
				case n == 0:
				case kept[txn]:
					wantKept++
					if after[k] != n {
						t.Errorf("source %s of an open finding's transaction lost its body", k)
					}
				default:
					wantRows++
					if after[k] != 0 {
						t.Errorf("source %s kept its body", k)
					}
				}
			}
			if it := byWhat["provider_txn_sources.raw"]; it.Rows != wantRows || it.Kept == 0 || wantRows == 0 {
				t.Errorf("sources: report %+v, want %d pruned and some kept (%d sources of open findings' transactions)", it, wantRows, wantKept)
			}
			// Callbacks: all the demo's were interpreted.
			if got := payloads(t, s, "callbacks", "body"); nonEmpty(got) != 0 || byWhat["callbacks.body"].Rows != int64(nonEmpty(callbacks)) {
				t.Errorf("callbacks: %d bodies left, report %+v of %d", nonEmpty(got), byWhat["callbacks.body"], nonEmpty(callbacks))
			}
			// Quarantine: the kept item keeps its input.
			items, err := s.ListQuarantine(ctx, "mpesa_callback", 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range items {
				if (q.Status == ledger.QuarantineKept) != (len(q.Raw) > 0) {
					t.Errorf("quarantined item %d, %s: %d bytes of input left", q.ID, q.Status, len(q.Raw))
				}
			}
			if byWhat["quarantine.raw"].Rows < 2 {
				t.Errorf("quarantine: %+v", byWhat["quarantine.raw"])
			}
			// Findings: resolved ones lose detail and notes, the others
			// keep them.
			all, err := s.ListFindings(ctx, ledger.FindingFilter{})
			if err != nil {
				t.Fatal(err)
			}
			var resolved int64
			for _, f := range all {
				h, err := s.FindingHistory(ctx, f.ID)
				if err != nil {
					t.Fatal(err)
				}
				notes := 0
				for _, ev := range h {
					if ev.Note != "" {
						notes++
					}
				}
				if f.Status == ledger.FindingResolved {
					if findings[render(engine.Column{}, f.ID)] > 0 {
						resolved++
					}
					if f.Detail != "" || f.Note != "" || !f.Suggestion.IsZero() || notes > 0 {
						t.Errorf("resolved finding %s keeps %q %q %v and %d notes", f.ID, f.Detail, f.Note, f.Suggestion, notes)
					}
				} else if f.Detail == "" {
					t.Errorf("%s finding %s lost its detail", f.Status, f.ID)
				}
				if f.Status == ledger.FindingAcknowledged && (f.Note == "" || notes == 0) {
					t.Errorf("acknowledged finding %s lost its note", f.ID)
				}
			}
			if resolved == 0 || byWhat["findings.detail,suggestion,note"].Rows != resolved || byWhat["history.note"].Rows == 0 {
				t.Errorf("findings: report %+v %+v, want %d resolved", byWhat["findings.detail,suggestion,note"], byWhat["history.note"], resolved)
			}
			if got := payloads(t, s, "history", "note"); nonEmpty(got) >= nonEmpty(notes) {
				t.Errorf("history notes: %d before, %d after", nonEmpty(notes), nonEmpty(got))
			}
			if n := nonEmpty(payloads(t, s, "quarantine", "raw")); n != nonEmpty(quarantine)-int(byWhat["quarantine.raw"].Rows) {
				t.Errorf("quarantine: %d inputs left of %d, %d pruned", n, nonEmpty(quarantine), byWhat["quarantine.raw"].Rows)
			}
			for i, w := range windows {
				if now := dryRun(t, s, w); !slices.Equal(now, found[i]) {
					t.Errorf("%s %s after pruning finds\n%s\nwant\n%s", w.Provider, w.From.Format(time.DateOnly),
						strings.Join(now, "\n"), strings.Join(found[i], "\n"))
				}
			}
			var out bytes.Buffer
			if err := done.WriteText(&out); err != nil || !strings.Contains(out.String(), "provider_txn_sources.raw") {
				t.Errorf("report: %v\n%s", err, out.String())
			}
			if again, err := books.Prune(ctx, s, books.PruneOptions{Before: cut}); err != nil || again.Rows() != 0 {
				t.Errorf("a second prune: %+v, %v", again, err)
			}
			other := ledger.EngineSQLite
			if e == other {
				other = ledger.EnginePostgres
			}
			if rep, err := books.Copy(ctx, s, open(t, emptyURL(t, other)), books.CopyOptions{}); err != nil || !rep.OK() {
				t.Errorf("copy the pruned book to %s: %v", other, err)
			}
		})
	}
}
