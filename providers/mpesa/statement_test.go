package mpesa

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

var stmtClock = func() time.Time { return received }

type parsed struct {
	sightings []providers.Sighting
	rejected  []*ledger.ParseError
	raws      [][]byte
}

func parseStatement(t testing.TB, data []byte, file string) (parsed, error) {
	t.Helper()
	var p parsed
	err := StatementParser{Clock: stmtClock}.ParseStatement(bytes.NewReader(data), file,
		func(s providers.Sighting) error { p.sightings = append(p.sightings, s); return nil },
		func(pe *ledger.ParseError, raw []byte) error {
			p.rejected = append(p.rejected, pe)
			p.raws = append(p.raws, raw)
			return nil
		})
	return p, err
}

func TestStatementFixturesGolden(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/statements/*.csv")
	slices.Sort(files)
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	var b strings.Builder
	for _, f := range files {
		p, err := parseStatement(t, readFixture(t, f), filepath.Base(f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(p.rejected) > 0 {
			t.Errorf("%s: rejected %v", f, p.rejected)
		}
		b.WriteString("== " + filepath.Base(f) + "\n")
		for _, s := range p.sightings {
			renderSighting(&b, s)
		}
	}
	golden.Assert(t, "testdata/golden/statements.golden", b.String())
}

func TestStatementQuirks(t *testing.T) {
	t.Parallel()
	p, err := parseStatement(t, readFixture(t, "testdata/statements/portal_preamble_bom_crlf.csv"), "export.csv")
	if err != nil || len(p.rejected) > 0 {
		t.Fatalf("err %v rejected %v", err, p.rejected)
	}
	byID := map[string]providers.Sighting{}
	for _, s := range p.sightings {
		byID[s.Txn.ID] = s
		if s.Source.Channel != ChannelStatement || s.Source.Ref != "statement:"+s.Txn.ID {
			t.Errorf("source = %+v", s.Source)
		}
		if bytes.ContainsAny(s.Source.Raw, "\r\n") || len(s.Source.Raw) == 0 {
			t.Errorf("raw line %q", s.Source.Raw)
		}
	}
	checks := []struct {
		id, typ, status, amount, at, ref, linked string
	}{
		// lower-case receipt, thousands separators, ISO date
		{"SC71AB12CD", "charge", "succeeded", "1131340.00", "2024-03-07T06:15:00Z", "HSE-12", ""},
		// positive Withdrawn, Excel date without seconds
		{"SC71AB12CE", "payout", "succeeded", "4000.00", "2024-03-07T06:20:00Z", "", ""},
		// negative Withdrawn charge linked to its payment, slashed date
		{"SC71AB12CF", "fee", "succeeded", "22.40", "2024-03-07T06:20:05Z", "", "SC71AB12CE"},
		{"SC71AB12CG", "charge", "failed", "500.00", "2024-03-07T07:00:00Z", "HSE-14", ""},
		{"SC71AB12CH", "reversal", "succeeded", "1131340.00", "2024-03-07T08:30:00Z", "", "SC71AB12CD"},
		{"SC71AB12CJ", "payout", "succeeded", "12000.00", "2024-03-07T14:00:00Z", "", ""},
	}
	if len(byID) != len(checks) {
		t.Errorf("got %d rows, want %d", len(byID), len(checks))
	}
	for _, c := range checks {
		s, ok := byID[c.id]
		if !ok {
			t.Errorf("%s missing", c.id)
			continue
		}
		tx := s.Txn
		got := fmt.Sprint(tx.ID, tx.Type, tx.Status, tx.Amount.Text(), tx.OccurredAt.Format(time.RFC3339), tx.Reference, tx.LinkedID)
		want := fmt.Sprint(c.id, c.typ, c.status, c.amount, c.at, c.ref, c.linked)
		if got != want {
			t.Errorf("%s = %s, want %s", c.id, got, want)
		}
	}
	if cp := byID["SC71AB12CD"].Txn.Counterparty; cp != "2547****0111 - MARY" {
		t.Errorf("counterparty = %q", cp)
	}
	// The source line numbers follow the file, BOM and preamble included.
	lines := strings.Split(string(readFixture(t, "testdata/statements/portal_preamble_bom_crlf.csv")), "\r\n")
	if !strings.HasPrefix(lines[4], "sc71ab12cd,") || string(byID["SC71AB12CD"].Source.Raw) != lines[4] {
		t.Errorf("raw = %q, want line 5 %q", byID["SC71AB12CD"].Source.Raw, lines[4])
	}
}

func TestStatementRejects(t *testing.T) {
	t.Parallel()
	hdr := "Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n"
	good := "SB62A1SVRK,06-02-2024 17:52:04,,Pay Bill,Completed,1000.00,,,true,Pay Bill Online,,,INV-1\n"
	cases := []struct {
		name, row, field string
	}{
		{"missing receipt", ",06-02-2024 17:52:04,,x,Completed,10.00,,,,,,,\n", "Receipt No."},
		{"bad receipt", "SB62-A1SV,06-02-2024 17:52:04,,x,Completed,10.00,,,,,,,\n", "Receipt No."},
		{"bad date", "SB62A1SVRL,2024/13/45 10:00,,x,Completed,10.00,,,,,,,\n", "Completion Time"},
		{"no date", "SB62A1SVRL,,,x,Completed,10.00,,,,,,,\n", "Completion Time"},
		{"unknown status", "SB62A1SVRL,06-02-2024 17:52:04,,x,Maybe,10.00,,,,,,,\n", "Transaction Status"},
		{"over-precise", "SB62A1SVRL,06-02-2024 17:52:04,,x,Completed,10.001,,,,,,,\n", "Paid In"},
		{"negative paid in", "SB62A1SVRL,06-02-2024 17:52:04,,x,Completed,-10.00,,,,,,,\n", "Paid In"},
		{"misplaced separators", "SB62A1SVRL,06-02-2024 17:52:04,,x,Completed,\"1,00.00\",,,,,,,\n", "Paid In"},
		{"text amount", "SB62A1SVRL,06-02-2024 17:52:04,,x,Completed,,ten,,,,,,\n", "Withdrawn"},
		{"both amounts", "SB62A1SVRL,06-02-2024 17:52:04,,x,Completed,10.00,-5.00,,,,,,\n", "Paid In"},
		{"no amount", "SB62A1SVRL,06-02-2024 17:52:04,,x,Completed,,,,,,,,\n", "Paid In"},
		{"bad linked id", "SB62A1SVRL,06-02-2024 17:52:04,,x,Completed,,-1.00,,,Charge,,not a receipt,\n", "Linked Transaction ID"},
		{"conflicting repeat", "SB62A1SVRK,06-02-2024 17:52:04,,Pay Bill,Completed,999.00,,,true,Pay Bill Online,,,INV-1\n", "Receipt No."},
		{"short row", "SB62A1SVRL,06-02-2024 17:52:04\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := parseStatement(t, []byte(hdr+good+tc.row+good), "st.csv")
			if err != nil {
				t.Fatal(err)
			}
			if len(p.rejected) != 1 {
				t.Fatalf("rejected = %v, want one", p.rejected)
			}
			pe := p.rejected[0]
			if pe.File != "st.csv" || pe.Line != 3 || pe.Field != tc.field {
				t.Errorf("problem = file %q line %d field %q (%v); want line 3 field %q", pe.File, pe.Line, pe.Field, pe, tc.field)
			}
			if string(p.raws[0]) != strings.TrimSuffix(tc.row, "\n") {
				t.Errorf("raw = %q", p.raws[0])
			}
			// Reading goes on after a bad line.
			if len(p.sightings) != 2 {
				t.Errorf("sightings = %d, want 2", len(p.sightings))
			}
		})
	}
}

func TestStatementRepeatedHeader(t *testing.T) {
	t.Parallel()
	one := string(readFixture(t, "testdata/statements/portal_basic.csv"))
	p, err := parseStatement(t, []byte(one+one), "twice.csv")
	if err != nil || len(p.rejected) != 0 || len(p.sightings) != 4 {
		t.Fatalf("err %v, rejected %v, %d sightings", err, p.rejected, len(p.sightings))
	}
}

func TestStatementFileErrors(t *testing.T) {
	t.Parallel()
	for name, data := range map[string]string{
		"empty":     "",
		"no header": "SB62A1SVRK,06-02-2024 17:52:04,,Pay Bill,Completed,1000.00,,,true,Pay Bill Online,,,INV-1\n",
		"json":      `{"not":"csv"}`,
	} {
		_, err := parseStatement(t, []byte(data), "f.csv")
		var pe *ledger.ParseError
		if !errors.As(err, &pe) || pe.Field != "header" || pe.File != "f.csv" {
			t.Errorf("%s: err = %v, want a header ParseError", name, err)
		}
	}
}

// TestStatementOfAnotherShortCode: a statement whose preamble names its
// paybill is read into that paybill's books and refused, by line and
// field, in another's.
func TestStatementOfAnotherShortCode(t *testing.T) {
	t.Parallel()
	data := readFixture(t, "testdata/statements/portal_preamble_bom_crlf.csv") // "Paybill,556677" on line 2
	parse := func(code string) (int, error) {
		n := 0
		err := StatementParser{Clock: stmtClock, ShortCode: code}.ParseStatement(bytes.NewReader(data), "export.csv",
			func(providers.Sighting) error { n++; return nil },
			func(*ledger.ParseError, []byte) error { return nil })
		return n, err
	}
	if n, err := parse("556677"); err != nil || n == 0 {
		t.Fatalf("its own paybill: %d sightings, %v", n, err)
	}
	n, err := parse("600638")
	var pe *ledger.ParseError
	if !errors.As(err, &pe) || pe.File != "export.csv" || pe.Line != 2 || pe.Field != "Paybill" ||
		!strings.Contains(err.Error(), "short code 556677, not 600638") || n != 0 {
		t.Fatalf("another paybill: %d sightings, %v", n, err)
	}
}
