package books_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/books"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/demo"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
	"github.com/reconcilehq/reconcile/reconciler"
)

// emptyURL returns the URL of a new, empty, unmigrated database of engine e.
func emptyURL(t *testing.T, e ledger.Engine) string {
	t.Helper()
	if e == ledger.EnginePostgres {
		return dbtest.NewSchemaURL(t)
	}
	return "sqlite:" + filepath.Join(t.TempDir(), "target.db")
}

// copyOf copies the demo book of engine from into a new database of engine
// to and returns the target, open.
func copyOf(t *testing.T, from, to ledger.Engine) (ledger.Store, *books.CopyReport) {
	t.Helper()
	src := open(t, source(t, from))
	dst := open(t, emptyURL(t, to))
	var progress bytes.Buffer
	rep, err := books.Copy(t.Context(), src, dst, books.CopyOptions{Progress: &progress})
	if err != nil {
		var out bytes.Buffer
		if rep != nil {
			_ = rep.WriteText(&out)
		}
		t.Fatalf("copy %s to %s: %v\n%s\n%s", from, to, err, progress.String(), out.String())
	}
	return dst, rep
}

// TestCopy copies the demo book each way the books grow or are exported
// and proves the copy whole and usable: every table's checks agree, every
// row of every table is the same in both (values compared in their
// engine-neutral form), identities continue, and a dry-run reconcile of
// each window finds on the copy what it finds on the source.
func TestCopy(t *testing.T) {
	t.Parallel()
	for _, dir := range [][2]ledger.Engine{
		{ledger.EngineSQLite, ledger.EnginePostgres},
		{ledger.EnginePostgres, ledger.EnginePostgres},
		{ledger.EnginePostgres, ledger.EngineSQLite},
	} {
		t.Run(fmt.Sprintf("%s to %s", dir[0], dir[1]), func(t *testing.T) {
			t.Parallel()
			dst, rep := copyOf(t, dir[0], dir[1])
			src := open(t, source(t, dir[0]))
			if !rep.OK() {
				t.Fatal("the report does not verify")
			}
			var out bytes.Buffer
			if err := rep.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "verified:") || strings.Contains(out.String(), "DIFFERS") {
				t.Errorf("report:\n%s", out.String())
			}
			tables := map[string]int64{}
			for _, tr := range rep.Tables {
				tables[tr.Table] = tr.Rows
			}
			for _, want := range []string{"intents", "attempts", "provider_txns", "provider_txn_sources", "runs", "findings",
				"history", "quarantine", "callbacks", "alerts", "events", "api_requests", "manual_links", "river_job"} {
				if tables[want] == 0 {
					t.Errorf("table %s: %d rows copied, want some: the demo book should fill it", want, tables[want])
				}
			}
			for _, skipped := range []string{"goose_db_version", "river_migration", "river_leader"} {
				if _, ok := tables[skipped]; ok {
					t.Errorf("table %s was copied", skipped)
				}
			}
			sameRows(t, src, dst)
			sameFindings(t, src, dst)
			identitiesContinue(t, src, dst)
		})
	}
}

// sameRows compares every row of every copied table, value by value, in
// the engine-neutral form, with River's times to the millisecond SQLite
// keeps and JSON by its meaning.
func sameRows(t *testing.T, src, dst ledger.Store) {
	t.Helper()
	ctx := t.Context()
	sb, _ := engine.BooksOf(src)
	db, _ := engine.BooksOf(dst)
	st, err := sb.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dt, err := db.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// filled are the columns of which some value other than NULL, zero,
	// false or empty was compared.
	filled := map[string]bool{}
	defer func() {
		for _, c := range []string{"intents.metadata", "intents.amount", "provider_txns.amount", "provider_txn_sources.raw",
			"callbacks.body", "callbacks.processed_at", "quarantine.raw", "events.payload", "runs.counts", "findings.provider_txn_ids",
			"findings.expected_amount", "history.note", "alerts.may_have_posted", "api_requests.response", "manual_links.note",
			"river_job.args", "river_job.errors", "river_job.attempted_by", "river_job.unique_key", "river_job.unique_states",
			"river_job.metadata", "river_job.finalized_at", "river_queue.name"} {
			if !filled[c] {
				t.Errorf("no value of %s was compared: the demo book should hold some", c)
			}
		}
	}()
	for _, s := range st {
		if slices.Contains([]string{"goose_db_version", "river_migration", "river_leader", "river_notification"}, s.Name) {
			continue
		}
		i := slices.IndexFunc(dt, func(x engine.Table) bool { return x.Name == s.Name })
		if i < 0 {
			t.Errorf("table %s missing from the copy", s.Name)
			continue
		}
		d := dt[i]
		var scols, dcols []engine.Column
		for _, sc := range s.Columns {
			dc, ok := d.Column(sc.Name)
			if !ok {
				continue // derived on one engine only (amount_minor)
			}
			typ := sc.Type
			if !sc.Exact {
				typ = dc.Type
			}
			if !sc.Exact && !dc.Exact {
				typ = max(sc.Type, dc.Type)
			}
			scols, dcols = append(scols, sc.As(typ)), append(dcols, dc.As(typ))
		}
		a, b := dump(t, sb, s.Name, scols), dump(t, db, s.Name, dcols)
		for _, row := range b {
			for _, f := range strings.Fields(row) {
				if name, v, _ := strings.Cut(f, "="); v != "NULL" && v != `""` && v != "false" && v != "0" {
					filled[s.Name+"."+name] = true
				}
			}
		}
		if len(a) != len(b) {
			t.Errorf("table %s: %d rows in the source, %d in the copy", s.Name, len(a), len(b))
			continue
		}
		for j := range a {
			if a[j] != b[j] {
				t.Errorf("table %s: row differs:\nsource %s\ncopy   %s", s.Name, a[j], b[j])
				break
			}
		}
	}
}

// dump renders the rows of a table, sorted.
func dump(t *testing.T, b engine.Books, table string, cols []engine.Column) []string {
	t.Helper()
	var out []string
	err := b.Read(t.Context(), func(r engine.Reader) error {
		return r.Scan(t.Context(), engine.Scan{Table: table, Cols: cols}, func(row []any) error {
			var parts []string
			for i, v := range row {
				parts = append(parts, cols[i].Name+"="+render(cols[i], v))
			}
			out = append(out, strings.Join(parts, " "))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func render(c engine.Column, v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return x.UTC().Round(time.Millisecond).Format(time.RFC3339Nano)
	case []byte:
		return fmt.Sprintf("%q", x)
	case string:
		if c.Type == engine.TypeJSON || c.Type == engine.TypeTextList || c.Type == engine.TypeJSONList {
			return canonicalJSON(x)
		}
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(v)
}

// sameFindings: a dry run of every window the books hold finds the same on
// the copy as on the source.
func sameFindings(t *testing.T, src, dst ledger.Store) {
	t.Helper()
	windows := []reconciler.Params{
		{Provider: "mpesa", From: demo.Day, To: demo.Day.AddDate(0, 0, 1)},
		{Provider: "stripe", From: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)},
		{Provider: "mpesa", From: scenarioDay.From, To: scenarioDay.To},
	}
	for _, w := range windows {
		w.DryRun, w.NoPull = true, true
		a, b := dryRun(t, src, w), dryRun(t, dst, w)
		if len(a) == 0 {
			t.Errorf("%s %s: the source has no findings to compare", w.Provider, w.From.Format(time.DateOnly))
		}
		if !slices.Equal(a, b) {
			t.Errorf("%s %s: the copy finds\n%s\nthe source\n%s", w.Provider, w.From.Format(time.DateOnly),
				strings.Join(b, "\n"), strings.Join(a, "\n"))
		}
	}
}

func dryRun(t *testing.T, s ledger.Store, p reconciler.Params) []string {
	t.Helper()
	now := p.To.AddDate(0, 0, 1)
	rec := reconciler.New(s, reconciler.Config{Clock: func() time.Time { return now }, Owner: "books-test"})
	out, err := rec.Run(t.Context(), p)
	if err != nil {
		t.Fatalf("dry run on %s: %v", s.Engine(), err)
	}
	var list []string
	for _, f := range out.Findings {
		list = append(list, fmt.Sprintf("%s %s %s %q %v %s %s %s", f.ID, f.Kind, f.Severity, f.IntentKey, f.ProviderTxnIDs,
			f.Expected, f.Actual, f.AtRisk))
	}
	slices.Sort(list)
	return list
}

// identitiesContinue: a row added to a table with an identity on the copy
// gets an id above every id of the source.
func identitiesContinue(t *testing.T, src, dst ledger.Store) {
	t.Helper()
	ctx := t.Context()
	before, err := src.ListQuarantine(ctx, "", 1)
	if err != nil || len(before) == 0 {
		t.Fatal(before, err)
	}
	id, err := dst.AddQuarantine(ctx, ledger.QuarantineItem{Source: "test", Reason: "after the copy", At: demo.Day})
	if err != nil {
		t.Fatal(err)
	}
	if id <= before[0].ID {
		t.Errorf("a quarantined item added to the copy got id %d, the source's last is %d", id, before[0].ID)
	}
}

// TestCopyRefuses: a target with rows of the books, a source with
// migrations pending or from a newer binary, are refused before anything
// is written.
func TestCopyRefuses(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, e := range []ledger.Engine{ledger.EnginePostgres, ledger.EngineSQLite} {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			src := open(t, source(t, e))
			// A target that holds one intent.
			u := emptyURL(t, e)
			dst := open(t, u)
			if _, err := database.Migrate(ctx, dst); err != nil {
				t.Fatal(err)
			}
			if _, _, err := dst.CreateIntent(ctx, ledger.NewIntent{CreatedAt: demo.Day, IntentParams: ledger.IntentParams{
				Key: "k1", Provider: "mpesa", Amount: kes(t, "10")}}); err != nil {
				t.Fatal(err)
			}
			_, err := books.Copy(ctx, src, dst, books.CopyOptions{})
			if !errors.Is(err, books.ErrTargetNotEmpty) || !strings.Contains(err.Error(), "intents (1 rows)") {
				t.Fatalf("copy into a target with an intent: %v", err)
			}
			// A source behind this binary.
			old := open(t, emptyURL(t, e))
			if err := migrateTo(ctx, old, 11); err != nil {
				t.Fatal(err)
			}
			_, err = books.Copy(ctx, old, open(t, emptyURL(t, e)), books.CopyOptions{})
			if !errors.Is(err, books.ErrSourceNotMigrated) {
				t.Fatalf("copy from a source at migration 11: %v", err)
			}
			// A source that was never migrated, which stays as it was.
			bare := open(t, emptyURL(t, e))
			_, err = books.Copy(ctx, bare, open(t, emptyURL(t, e)), books.CopyOptions{})
			if !errors.Is(err, books.ErrSourceNotMigrated) {
				t.Fatalf("copy from an empty database: %v", err)
			}
			if b, _ := engine.BooksOf(bare); b != nil {
				if ts, err := b.Tables(ctx); err != nil || len(ts) != 0 {
					t.Errorf("copying from an empty database created %d tables in it: %v", len(ts), err)
				}
			}
			// A source ahead of it.
			ahead := open(t, emptyURL(t, e))
			if _, err := database.Migrate(ctx, ahead); err != nil {
				t.Fatal(err)
			}
			if err := markApplied(ctx, ahead, 9999); err != nil {
				t.Fatal(err)
			}
			target := emptyURL(t, e)
			_, err = books.Copy(ctx, ahead, open(t, target), books.CopyOptions{})
			if !errors.Is(err, database.ErrSchemaTooNew) {
				t.Fatalf("copy from a source at migration 9999: %v", err)
			}
		})
	}
}

// TestVerifyFindsDifferences: a copy verifies; after an amount and a key
// are changed on the target, each is found, in the check of its table, and
// nothing else.
func TestVerifyFindsDifferences(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, dir := range [][2]ledger.Engine{
		{ledger.EngineSQLite, ledger.EnginePostgres},
		{ledger.EnginePostgres, ledger.EnginePostgres},
		{ledger.EnginePostgres, ledger.EngineSQLite},
	} {
		t.Run(fmt.Sprintf("%s to %s", dir[0], dir[1]), func(t *testing.T) {
			t.Parallel()
			src := open(t, source(t, dir[0]))
			dst, _ := copyOf(t, dir[0], dir[1])
			if rep, err := books.Verify(ctx, src, dst); err != nil || !rep.OK() {
				t.Fatalf("a fresh copy: %v", err)
			}
			b, _ := engine.BooksOf(dst)
			ts, err := b.Tables(ctx)
			if err != nil {
				t.Fatal(err)
			}
			col := func(table, name string, typ engine.Type) engine.Column {
				for _, x := range ts {
					if c, ok := x.Column(name); ok && x.Name == table {
						return c.As(typ)
					}
				}
				t.Fatalf("no %s.%s", table, name)
				return engine.Column{}
			}
			key := col("intents", "key", engine.TypeText)
			err = b.Write(ctx, func(w engine.Writer) error {
				if _, err := w.Update(ctx, engine.Update{Table: "intents", Key: []engine.Column{key},
					Set: []engine.Column{col("intents", "amount", engine.TypeDecimal)}}, [][]any{{"mpesa:order-2001", "150.01"}}); err != nil {
					return err
				}
				_, err := w.Update(ctx, engine.Update{Table: "events", Key: []engine.Column{col("events", "id", engine.TypeText)},
					Set: []engine.Column{col("events", "id", engine.TypeText)}},
					[][]any{{ledger.EventID(ledger.EventChargeSucceeded, "books:event-1"), "evt_changed"}})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := books.Verify(ctx, src, dst)
			if !errors.Is(err, books.ErrMismatch) {
				t.Fatalf("verify a changed copy: %v", err)
			}
			var bad []string
			for _, tr := range rep.Tables {
				for _, c := range tr.Checks {
					if !c.OK() {
						bad = append(bad, tr.Table+" "+c.What)
					}
				}
			}
			slices.Sort(bad)
			if want := []string{"events keys", "intents sum(amount)"}; !slices.Equal(bad, want) {
				t.Errorf("differences found: %v, want %v", bad, want)
			}
			var out bytes.Buffer
			if err := rep.WriteText(&out); err != nil || !strings.Contains(out.String(), "NOT VERIFIED: 2 check(s)") {
				t.Errorf("report: %v\n%s", err, out.String())
			}
		})
	}
}
