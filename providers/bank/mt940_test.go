package bank

import (
	"errors"
	"strings"
	"testing"
)

func mt(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

type textCase struct {
	name  string
	file  string
	opt   Options
	check func(t *testing.T, p *parsed, err error)
}

var mt940Cases = []textCase{
	{name: "no envelope", file: mt(":20:S1", ":25:0100012345678", ":28C:1/1", ":60F:C260309KES100,00",
		":61:2603090309CS50,00NTRFREF1//BANK1", "SUPPLEMENTARY", ":86:PAYMENT", "{ONE}",
		":61:2603090309D20,NCHGNONREF", ":62F:C260309KES130,00"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			e1, e2 := p.entries[0], p.entries[1]
			if e1.CustomerRef != "REF1" || e1.BankRef != "BANK1" || e1.Info != "SUPPLEMENTARY" || e1.Text != "PAYMENT {ONE}" ||
				e1.Code.SWIFT != "NTRF" || e1.Amount.String() != "KES 50.00" {
				t.Errorf("entry 1 %+v", e1)
			}
			// NONREF is no reference; "20," is twenty.
			if e2.CustomerRef != "" || e2.BankRef != "" || e2.Amount.String() != "KES 20.00" || e2.Direction != Debit {
				t.Errorf("entry 2 %+v", e2)
			}
			if st := p.stmts[0]; st.Sequence != "1/1" || st.From.String() != "2026-03-09" || st.Account.Number != "0100012345678" {
				t.Errorf("statement %+v", st)
			}
		}},
	{name: "envelope, CRLF and trailer", file: strings.ReplaceAll(mt(
		"{1:F01ACMEKENAAXXX0000000000}{2:O9400600260309RCTBKENAXXXX00000000002603090600N}{3:{108:X}}{4:",
		":20:S1", ":25:0100012345678", ":28C:1/1", ":60F:C260309KES100,00", ":61:2603090309CS50,00NTRFREF1",
		":62F:C260309KES150,00", "-}{5:{CHK:123456789ABC}}"), "\n", "\r\n"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			if st := p.stmts[0]; st.Account.BIC != "RCTBKENA" || st.Closing.Amount.String() != "KES 150.00" {
				t.Errorf("statement %+v", st)
			}
			if e := p.entries[0]; strings.Contains(string(e.Raw), "\r") || e.CustomerRef != "REF1" {
				t.Errorf("entry %+v", e)
			}
		}},
	{name: "text block on the envelope's line", file: mt("{1:F01ACMEKENAAXXX0000000000}{2:I940RCTBKENAXXXXN}{4::20:S1",
		":25:0100012345678", ":60F:C260309KES0,00", ":62F:C260309KES0,00", "-}"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			if st := p.stmts[0]; st.ID != "S1" || st.Account.BIC != "ACMEKENA" {
				t.Errorf("statement %+v", st)
			}
		}},
	{name: "several statements and pages", file: mt(":20:S1", ":25:A", ":28C:5/1", ":60F:C260309KES10,00",
		":61:2603090309C5,00NTRFX", ":62M:C260309KES15,00", "-", ":20:S1", ":25:A", ":28C:5/2", ":60M:C260309KES15,00",
		":61:2603090309D1,00NTRFY", ":62F:C260309KES14,00", ":64:C260309KES14,00", ":65:C260310KES14,00", ":65:C260311KES14,00"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			if len(p.stmts) != 2 || p.stmts[0].Closing.Type != "62M" || p.stmts[1].Opening.Type != "60M" ||
				p.stmts[1].Sequence != "5/2" || p.stmts[1].Available == nil {
				t.Errorf("statements %+v", p.stmts)
			}
		}},
	{name: "entry date in the year before", file: mt(":20:S1", ":25:A", ":60F:C251231KES0,00",
		":61:2601021231C1,00NTRFX", ":61:2512300102C2,00NTRFY", ":62F:C260102KES3,00"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			if e := p.entries[0]; e.ValueDate.String() != "2026-01-02" || e.BookingDate.String() != "2025-12-31" {
				t.Errorf("entry 1 value %s booked %s", e.ValueDate, e.BookingDate)
			}
			if e := p.entries[1]; e.ValueDate.String() != "2025-12-30" || e.BookingDate.String() != "2026-01-02" {
				t.Errorf("entry 2 value %s booked %s", e.ValueDate, e.BookingDate)
			}
		}},
	{name: "reversals and funds codes", file: mt(":20:S1", ":25:A", ":60F:D260309KES100,00",
		":61:2603090309RCS30,00NTRFX", ":61:2603090309RDS50,00NTRFY", ":61:2603090309CS5,00NTRFZ", ":62F:D260309KES75,00"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			// RC reverses a credit: money out. RD reverses a debit: money in.
			rc, rd := p.entries[0], p.entries[1]
			if rc.Direction != Debit || !rc.Reversal || rd.Direction != Credit || !rd.Reversal || p.entries[2].Reversal {
				t.Errorf("RC %s %v, RD %s %v", rc.Direction, rc.Reversal, rd.Direction, rd.Reversal)
			}
			if st := p.stmts[0]; st.Opening.Amount.String() != "KES -100.00" || st.Closing.Amount.String() != "KES -75.00" {
				t.Errorf("balances %s %s", st.Opening.Amount, st.Closing.Amount)
			}
		}},
	{name: "amount without a decimal comma", file: mt(":20:S1", ":25:A", ":60F:C260309KES0,00", ":61:2603090309C5.00NTRFX",
		":61:2603090309C5,00NTRFY", ":62F:C260309KES5,00"), check: wantReject("61", "decimal comma", 1)},
	{name: "too many decimals", file: mt(":20:S1", ":25:A", ":60F:C260309KES0,00", ":61:2603090309C5,001NTRFX",
		":86:TEXT", ":61:2603090309C5,00NTRFY", ":62F:C260309KES5,00"),
		check: func(t *testing.T, p *parsed, err error) {
			wantReject("61", "more decimal places", 1)(t, p, err)
			// The rejected entry keeps its :86:.
			if raw := string(p.raws[0]); raw != ":61:2603090309C5,001NTRFX\n:86:TEXT" {
				t.Errorf("raw %q", raw)
			}
		}},
	{name: "bad mark", file: mt(":20:S1", ":25:A", ":60F:C260309KES0,00", ":61:2603090309X5,00NTRFX", ":62F:C260309KES0,00"),
		check: wantReject("61", "want C, D, RC or RD", 0)},
	{name: "bad transaction type", file: mt(":20:S1", ":25:A", ":60F:C260309KES0,00", ":61:2603090309C5,00XTRFX", ":62F:C260309KES0,00"),
		check: wantReject("61", "N, F or S", 0)},
	{name: "entry before the opening balance", file: mt(":20:S1", ":25:A", ":61:2603090309C5,00NTRFX", ":60F:C260309KES0,00", ":62F:C260309KES0,00"),
		check: wantReject("61", "no opening balance", 0)},
	{name: "no closing balance", file: mt(":20:S1", ":25:A", ":60F:C260309KES0,00", ":61:2603090309C5,00NTRFX"),
		check: wantReject("62F", "no closing balance", 1)},
	{name: "does not add up", file: mt(":20:S1", ":25:A", ":60F:C260309KES10,00", ":61:2603090309C5,00NTRFX", ":62F:C260309KES16,00"),
		check: func(t *testing.T, p *parsed, err error) {
			wantReject("62F", "difference KES +1.00", 1)(t, p, err)
			var be *BalanceError
			if !errors.As(p.rejects[0], &be) || be.Difference.String() != "KES 1.00" || p.rejects[0].Line != 5 ||
				string(p.raws[0]) != ":62F:C260309KES16,00" {
				t.Errorf("rejection %v raw %q", p.rejects[0], p.raws[0])
			}
		}},
	{name: "closing in another currency", file: mt(":20:S1", ":25:A", ":60F:C260309KES0,00", ":62F:C260309USD0,00"),
		check: func(t *testing.T, p *parsed, err error) {
			if err != nil || len(p.rejects) != 2 || p.rejects[0].Field != "62F" || !strings.Contains(p.rejects[0].Error(), "USD") {
				t.Fatalf("err %v rejects %v", err, p.rejects)
			}
		}},
	{name: "unknown field", file: mt(":20:S1", ":25:A", ":60F:C260309KES0,00", ":99:X", ":62F:C260309KES0,00"),
		check: wantReject("99", "not an MT940 field", 0)},
	{name: "field before :20:", file: mt(":25:A", ":20:S1", ":60F:C260309KES0,00", ":62F:C260309KES0,00"),
		check: wantReject("25", "before any :20:", 0)},
	{name: "second opening balance", file: mt(":20:S1", ":25:A", ":60F:C260309KES0,00", ":60F:C260309KES0,00", ":62F:C260309KES0,00"),
		check: wantReject("60F", "second opening", 0)},
	{name: "text outside any field", file: mt("garbage", ":20:S1", ":25:A", ":60F:C260309KES0,00", ":62F:C260309KES0,00"),
		check: wantReject("line", "outside any field", 0)},
	{name: "no statement", file: mt("{1:F01ACMEKENAAXXX0000000000}{4:", "-}"),
		check: wantFileErr("20", "not an MT940")},
	{name: "utf-16", file: "\xff\xfe:\x002\x000\x00", check: wantFileErr("encoding", "UTF-16")},
	{name: "not utf-8", file: mt(":20:S1", ":25:A", ":60F:C260309EUR0,00", ":61:2603090309C5,00NTRFX", ":86:M\xfcller", ":62F:C260309EUR5,00"),
		check: wantFileErr("line", "Latin-1")},
	{name: "latin-1", opt: Options{Charset: Latin1}, file: mt(":20:S1", ":25:A", ":60F:C260309EUR0,00", ":61:2603090309C5,00NTRFX", ":86:M\xfcller",
		":62F:C260309EUR5,00"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			if p.entries[0].Text != "Müller" {
				t.Errorf("text %q", p.entries[0].Text)
			}
		}},
	{name: "a line too long", file: mt(":20:S1", ":86:"+strings.Repeat("x", maxLine+1)), check: wantFileErr("line", "longer than")},
	{name: "utf-8 bom", file: "\ufeff" + mt(":20:S1", ":25:A", ":60F:C260309KES0,00", ":62F:C260309KES0,00"),
		check: func(t *testing.T, p *parsed, err error) { noProblems(t, p, err) }},
	{name: "free text over several lines", file: mt(":20:S1", ":25:A", ":60F:C260309KES0,00", ":61:2603090309C5,00NTRFX",
		":86:STRIPE PAYOUT po_1QxA2bCdEfGhIjKlMnOpQrSt STRIPE ACME GLOBAL CORP",
		"ORATION USD PAYOUT 2026-03-09   ", "FROM BALANCE", ":62F:C260309KES5,00", ":86:END OF STATEMENT"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			// A full line (65 characters) was cut mid-word; shorter ones end
			// theirs.
			if want := "STRIPE PAYOUT po_1QxA2bCdEfGhIjKlMnOpQrSt STRIPE ACME GLOBAL CORPORATION USD PAYOUT 2026-03-09 FROM BALANCE"; p.entries[0].Text != want {
				t.Errorf("text %q\nwant %q", p.entries[0].Text, want)
			}
			if p.stmts[0].Info != "END OF STATEMENT" {
				t.Errorf("info %q", p.stmts[0].Info)
			}
		}},
	{name: "structured information", file: mt(":20:S1", ":25:A", ":60F:C260309EUR0,00", ":61:2603090309C5,00NMSCNONREF",
		":86:166?00SEPA-GUTSCHRIFT?100599?20EREF+E2E-1?21SVWZ+INVOICE 42?30PBNKDEFF?3",
		"1DE77100100100123456789?32ACME?33 GMBH", ":61:2603090309C1,00NMSCNONREF",
		":86:051?00UEBERWEISUNG?20X?3010010010?310123456789?32KARL", ":62F:C260309EUR6,00"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			e := p.entries[0]
			if e.Code.GVC != "166" || e.Info != "SEPA-GUTSCHRIFT" || e.Text != "EREF+E2E-1 SVWZ+INVOICE 42" ||
				e.Counterparty.Name != "ACME GMBH" || e.Counterparty.Account.IBAN != "DE77100100100123456789" ||
				e.Counterparty.Account.BIC != "PBNKDEFF" {
				t.Errorf("entry 1 %+v", e)
			}
			if a := p.entries[1].Counterparty.Account; a.BankCode != "10010010" || a.Number != "0123456789" {
				t.Errorf("entry 2 account %+v", a)
			}
		}},
	{name: "account forms", file: mt(":20:S1", ":25P:DE77100100100123456789", "PBNKDEFF", ":60F:C260309EUR0,00", ":62F:C260309EUR0,00",
		"-", ":20:S2", ":25:INGBNL2A/DE77100100100123456789", ":60F:C260309EUR0,00", ":62F:C260309EUR0,00",
		"-", ":20:S3", ":25:DE77100100100123456789EUR", ":60F:C260309EUR0,00", ":62F:C260309EUR0,00"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			for i, want := range []Account{{IBAN: "DE77100100100123456789", BIC: "PBNKDEFF"},
				{IBAN: "DE77100100100123456789", BIC: "INGBNL2A"}, {IBAN: "DE77100100100123456789"}} {
				if p.stmts[i].Account != want {
					t.Errorf("statement %d account %+v, want %+v", i, p.stmts[i].Account, want)
				}
			}
		}},
}

func TestMT940EdgeCases(t *testing.T) {
	t.Parallel()
	for _, c := range mt940Cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, err := run(t, ParseMT940, []byte(c.file), "stmt.sta", c.opt)
			c.check(t, p, err)
			checkProperties(t, p)
		})
	}
}

func TestEntryDate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ value, mmdd, want string }{
		{"2026-03-09", "0309", "2026-03-09"},
		{"2026-03-09", "0311", "2026-03-11"},
		{"2025-12-31", "0102", "2026-01-02"},
		{"2026-01-02", "1231", "2025-12-31"},
		{"2024-02-28", "0229", "2024-02-29"},
		{"2026-03-09", "0230", ""},
		{"2026-03-09", "1301", ""},
	} {
		v, err := parseISODate(c.value)
		if err != nil {
			t.Fatal(err)
		}
		got, err := entryDate(v, c.mmdd)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("entryDate(%s, %s) = %s, want an error", c.value, c.mmdd, got)
		case c.want != "" && (err != nil || got.String() != c.want):
			t.Errorf("entryDate(%s, %s) = %s, %v; want %s", c.value, c.mmdd, got, err, c.want)
		}
	}
}
