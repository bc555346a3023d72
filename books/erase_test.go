package books_test

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/books"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/demo"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
	"github.com/reconcilehq/reconcile/reconciler"
)

var eraseKey = []byte("a secret of thirty-two bytes ok!")

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// phoneForms are the ways the books can write a Kenyan number, written out
// here rather than taken from the code under test.
func phoneForms(msisdn string) []string {
	n := strings.TrimPrefix(msisdn, "254")
	return []string{msisdn, "+" + msisdn, "0" + n, "254 " + n[:3] + " " + n[3:6] + " " + n[6:],
		"0" + n[:3] + " " + n[3:6] + " " + n[6:], hashHex(msisdn), hashHex("0" + n), hashHex("+" + msisdn)}
}

// findAnywhere searches every column of every table of the database at u
// (integers, amounts and times too, as text; bytes as they are; SQLite's
// binary JSON as stored and as its text) for each form, without regard to
// case, with SQL of its own. It returns "table.column form" for each hit.
func findAnywhere(t *testing.T, u string, forms []string) []string {
	t.Helper()
	ctx := t.Context()
	var hits []string
	e, err := database.Engine(u)
	if err != nil {
		t.Fatal(err)
	}
	if e == ledger.EnginePostgres {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, `SELECT table_name, column_name, data_type FROM information_schema.columns
			WHERE table_schema = current_schema() ORDER BY 1, 2`)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([3]string, error) {
			var c [3]string
			return c, r.Scan(&c[0], &c[1], &c[2])
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			expr := pgx.Identifier{c[1]}.Sanitize() + "::text"
			if c[2] == "bytea" {
				expr = "encode(" + pgx.Identifier{c[1]}.Sanitize() + ", 'escape')"
			}
			var counts []string
			args := make([]any, len(forms))
			for i, f := range forms {
				counts = append(counts, fmt.Sprintf("count(*) FILTER (WHERE strpos(lower(%s), $%d) > 0)", expr, i+1))
				args[i] = strings.ToLower(f)
			}
			n := make([]int64, len(forms))
			ptrs := make([]any, len(forms))
			for i := range n {
				ptrs[i] = &n[i]
			}
			if err := conn.QueryRow(ctx, "SELECT "+strings.Join(counts, ", ")+" FROM "+pgx.Identifier{c[0]}.Sanitize(), args...).Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, f := range forms {
				if n[i] > 0 {
					hits = append(hits, fmt.Sprintf("%s.%s %s (%d rows)", c[0], c[1], f, n[i]))
				}
			}
		}
		return hits
	}
	db, err := sql.Open("sqlite", "file:"+database.SQLitePath(u)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables []string
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	for _, table := range tables {
		crows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_xinfo(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for crows.Next() {
			var n string
			if err := crows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, n)
		}
		crows.Close()
		for _, c := range cols {
			q := `"` + c + `"`
			var sums []string
			args := make([]any, len(forms))
			for i, f := range forms {
				sums = append(sums, fmt.Sprintf(`coalesce(sum(instr(lower(CAST(%[1]s AS TEXT)), ?%[2]d) > 0
					OR CASE WHEN typeof(%[1]s) = 'blob' AND json_valid(%[1]s, 8) THEN instr(lower(json(%[1]s)), ?%[2]d) > 0 ELSE 0 END), 0)`, q, i+1))
				args[i] = strings.ToLower(f)
			}
			n := make([]int64, len(forms))
			ptrs := make([]any, len(forms))
			for i := range n {
				ptrs[i] = &n[i]
			}
			if err := db.QueryRowContext(ctx, `SELECT `+strings.Join(sums, ", ")+` FROM "`+table+`"`, args...).Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, f := range forms {
				if n[i] > 0 {
					hits = append(hits, fmt.Sprintf("%s.%s %s (%d rows)", table, c, f, n[i]))
				}
			}
		}
	}
	return hits
}

// tablesOf are the distinct tables of hits.
func tablesOf(hits []string) []string {
	var out []string
	for _, h := range hits {
		table, _, _ := strings.Cut(h, ".")
		if !slices.Contains(out, table) {
			out = append(out, table)
		}
	}
	slices.Sort(out)
	return out
}

// paybillPhone is a customer of the scenario day who paid through the
// PayBill: the C2B confirmation names them only by the SHA-256 of their
// number.
func paybillPhone(t *testing.T) string {
	t.Helper()
	for _, in := range scenarioDay.Intents {
		if strings.HasPrefix(in.Key, "charge:invoice") {
			return in.Customer
		}
	}
	t.Fatal("the scenario day has no PayBill customer")
	return ""
}

// TestErase erases two phone numbers and an e-mail address from a copy of
// the demo book on each engine. Before, each is found in many tables;
// after, no form of any is found anywhere, in any column of any table,
// read with SQL of the test's own; reconciling finds what it found before
// (the same findings, one renamed where its intent's key held the e-mail
// address, with its history); and the erasures are recorded.
func TestErase(t *testing.T) {
	t.Parallel()
	for _, e := range []ledger.Engine{ledger.EnginePostgres, ledger.EngineSQLite} {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			u := emptyURL(t, e)
			dst := open(t, u)
			if _, err := books.Copy(ctx, open(t, source(t, e)), dst, books.CopyOptions{}); err != nil {
				t.Fatal(err)
			}
			hashed := paybillPhone(t)
			people := map[string][]string{phone: phoneForms(phone), hashed: phoneForms(hashed), email: {email, hashHex(email)}}
			before := map[string][]string{}
			for who, forms := range people {
				before[who] = findAnywhere(t, u, forms)
			}
			for _, want := range []string{"intents", "attempts", "provider_txns", "provider_txn_sources", "callbacks", "events",
				"river_job", "quarantine", "history", "alerts", "api_requests"} {
				if !slices.Contains(tablesOf(before[phone]), want) {
					t.Errorf("the book names %s nowhere in %s: the test would prove nothing there; found in %v",
						phone, want, tablesOf(before[phone]))
				}
			}
			if !slices.ContainsFunc(before[hashed], func(h string) bool { return strings.Contains(h, hashHex(hashed)) }) {
				t.Errorf("the book holds no SHA-256 of %s: %v", hashed, before[hashed])
			}
			for _, want := range []string{"intents", "findings", "history", "manual_links"} {
				if !slices.Contains(tablesOf(before[email]), want) {
					t.Errorf("the book names %s nowhere in %s; found in %v", email, want, tablesOf(before[email]))
				}
			}
			windows := []reconciler.Params{
				{Provider: "mpesa", From: demo.Day, To: demo.Day.AddDate(0, 0, 1), DryRun: true, NoPull: true},
				{Provider: "mpesa", From: scenarioDay.From, To: scenarioDay.To, DryRun: true, NoPull: true},
			}
			var found [][]string
			for _, w := range windows {
				found = append(found, dryRun(t, dst, w))
			}
			keyed := "subscription:" + email + ":2026-11"
			old := ledger.FindingID(ledger.KindMissingAtProvider, keyed, nil)
			oldHistory, err := dst.FindingHistory(ctx, old)
			if err != nil || len(oldHistory) == 0 {
				t.Fatalf("the finding of %s: %v %v", keyed, oldHistory, err)
			}

			// A dry run changes nothing.
			dry, err := books.Erase(ctx, dst, books.EraseParams{Customer: "0712 340 000", Actor: "dpo@shop.example", Key: eraseKey, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if dry.Values() == 0 || !slices.Equal(findAnywhere(t, u, people[phone]), before[phone]) {
				t.Errorf("dry run: %d values; the forms are now found in %v", dry.Values(), findAnywhere(t, u, people[phone]))
			}

			at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			var tokens []string
			for _, who := range []string{"+" + phone, "0" + strings.TrimPrefix(hashed, "254"), strings.ToUpper(email)} {
				er, err := books.Erase(ctx, dst, books.EraseParams{Customer: who, Actor: "dpo@shop.example",
					Reason: "request of " + who, Key: eraseKey, Now: at})
				if err != nil {
					t.Fatalf("erase %s: %v", who, err)
				}
				if er.Values() == 0 || !strings.HasPrefix(er.Token, books.TokenPrefix) || len(er.Token) != len(books.TokenPrefix)+16 {
					t.Errorf("erase %s: %d values, token %q", who, er.Values(), er.Token)
				}
				tokens = append(tokens, er.Token)
				if who == strings.ToUpper(email) && er.Renamed != 1 {
					t.Errorf("erase %s renamed %d findings, want 1", who, er.Renamed)
				}
			}
			for who, forms := range people {
				if hits := findAnywhere(t, u, forms); len(hits) > 0 {
					t.Errorf("after erasing, %s is still found:\n%s", who, strings.Join(hits, "\n"))
				}
			}
			// The same finding as before: only the renamed one differs, by
			// the id derived from the erased key.
			newID := ledger.FindingID(ledger.KindMissingAtProvider, "subscription:"+tokens[2]+":2026-11", nil)
			for i, w := range windows {
				now := dryRun(t, dst, w)
				want := slices.Clone(found[i])
				for j := range want {
					want[j] = strings.ReplaceAll(strings.ReplaceAll(want[j], old, newID), keyed, "subscription:"+tokens[2]+":2026-11")
				}
				slices.Sort(want)
				if !slices.Equal(now, want) {
					t.Errorf("%s %s after erasing finds\n%s\nwant\n%s", w.Provider, w.From.Format(time.DateOnly),
						strings.Join(now, "\n"), strings.Join(want, "\n"))
				}
			}
			if h, err := dst.FindingHistory(ctx, newID); err != nil || len(h) != len(oldHistory) {
				t.Errorf("the renamed finding's history: %d events, want %d (%v)", len(h), len(oldHistory), err)
			}
			if _, err := dst.GetFinding(ctx, old); !errors.Is(err, ledger.ErrNotFound) {
				t.Errorf("the finding's old id is still there: %v", err)
			}
			checkRecorded(t, dst, tokens, at)
			// The same person, written another way, gets the same token.
			again, err := books.Erase(ctx, dst, books.EraseParams{Customer: "254 712 340 000", Actor: "dpo@shop.example", Key: eraseKey})
			if err != nil || again.Token != tokens[0] || again.Values() != 0 {
				t.Errorf("erasing again: %+v, %v; want token %s and nothing left to change", again, err, tokens[0])
			}
		})
	}
}

// checkRecorded: each erasure is a row of erasures with its token, actor,
// time and counts, and no form of the person.
func checkRecorded(t *testing.T, s ledger.Store, tokens []string, at time.Time) {
	t.Helper()
	b, _ := engine.BooksOf(s)
	ts, err := b.Tables(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var rec engine.Table
	for _, x := range ts {
		if x.Name == "erasures" {
			rec = x
		}
	}
	var cols []engine.Column
	for _, c := range []struct {
		n string
		t engine.Type
	}{{"subject_token", engine.TypeText}, {"actor", engine.TypeText}, {"reason", engine.TypeText}, {"at", engine.TypeTime}, {"counts", engine.TypeJSON}} {
		col, ok := rec.Column(c.n)
		if !ok {
			t.Fatalf("erasures has no %s", c.n)
		}
		cols = append(cols, col.As(c.t))
	}
	var got []string
	err = b.Read(t.Context(), func(r engine.Reader) error {
		return r.Scan(t.Context(), engine.Scan{Table: "erasures", Cols: cols}, func(row []any) error {
			var counts map[string]int64
			if err := json.Unmarshal([]byte(row[4].(string)), &counts); err != nil || len(counts) == 0 {
				t.Errorf("erasure counts %v: %v", row[4], err)
			}
			if !engine.TimeOf(row[3]).Equal(at) || row[1] != "dpo@shop.example" || !strings.HasPrefix(row[2].(string), "request of erased:") {
				t.Errorf("erasure row %v", row)
			}
			got = append(got, row[0].(string))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, tokens) {
		t.Errorf("erasures recorded %v, want %v", got, tokens)
	}
}

// TestEraseRefuses: no key, a short key, no actor and a subject that is
// neither a phone number nor an e-mail address are refused.
func TestEraseRefuses(t *testing.T) {
	t.Parallel()
	s := dbtest.SQLite(t)
	for name, p := range map[string]books.EraseParams{
		"no key":     {Customer: phone, Actor: "a"},
		"short key":  {Customer: phone, Actor: "a", Key: []byte("short")},
		"no actor":   {Customer: phone, Key: eraseKey},
		"no subject": {Customer: "order 17", Actor: "a", Key: eraseKey},
	} {
		if _, err := books.Erase(t.Context(), s, p); err == nil {
			t.Errorf("%s: erased", name)
		}
	}
	if _, err := books.Erase(t.Context(), s, books.EraseParams{Customer: phone, Actor: "a"}); !errors.Is(err, books.ErrEraseKey) {
		t.Errorf("no key: %v", err)
	}
}
