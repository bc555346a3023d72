package bank

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

const (
	ns02 = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"
	ns08 = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"
)

// camtDoc wraps statements in a camt.053 document of namespace ns.
func camtDoc(ns string, stmts ...string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="` + ns + `">
<BkToCstmrStmt>
<GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-03-16T06:00:00Z</CreDtTm></GrpHdr>
` + strings.Join(stmts, "\n") + `
</BkToCstmrStmt>
</Document>
`
}

func bal(tp, amt, cd string) string {
	return fmt.Sprintf(`<Bal><Tp><CdOrPrtry><Cd>%s</Cd></CdOrPrtry></Tp><Amt Ccy="KES">%s</Amt><CdtDbtInd>%s</CdtDbtInd><Dt><Dt>2026-03-09</Dt></Dt></Bal>`, tp, amt, cd)
}

// stmt is a KES statement with the given balances and entries.
func stmt(bals string, entries ...string) string {
	return "<Stmt>\n<Id>S1</Id>\n<Acct><Id><Othr><Id>0100012345678</Id></Othr></Id><Ccy>KES</Ccy></Acct>\n" + bals + "\n" +
		strings.Join(entries, "\n") + "\n</Stmt>"
}

// ntry is a booked KES entry; extra is put inside <Ntry> after the
// dates.
func ntry(amt, cd string, extra ...string) string {
	return `<Ntry>
<Amt Ccy="KES">` + amt + `</Amt>
<CdtDbtInd>` + cd + `</CdtDbtInd>
<Sts>BOOK</Sts>
<BookgDt><Dt>2026-03-09</Dt></BookgDt>
` + strings.Join(extra, "\n") + `
</Ntry>`
}

func TestCamtEdgeCases(t *testing.T) {
	t.Parallel()
	nbo := zone(t, "Africa/Nairobi")
	balanced := func(entries ...string) string {
		return camtDoc(ns02, stmt(bal("OPBD", "1000.00", "CRDT")+bal("CLBD", "1000.00", "CRDT"), entries...))
	}
	cases := []struct {
		name  string
		doc   string
		check func(t *testing.T, p *parsed, err error)
	}{
		{"utf-8 bom accepted", "\ufeff" + balanced(), func(t *testing.T, p *parsed, err error) {
			if err != nil || len(p.stmts) != 1 || len(p.rejects) != 0 {
				t.Fatalf("err %v, %d statements, rejects %v", err, len(p.stmts), p.rejects)
			}
		}},
		{"utf-16 le refused", "\xff\xfe<\x00D\x00", wantFileErr("encoding", "UTF-16")},
		{"utf-16 be refused", "\xfe\xff\x00<\x00D", wantFileErr("encoding", "UTF-16")},
		{"utf-16 declared refused", strings.Replace(balanced(), `encoding="UTF-8"`, `encoding="UTF-16"`, 1), wantFileErr("encoding", "UTF-16")},
		{"latin-1 declared refused", strings.Replace(balanced(), `encoding="UTF-8"`, `encoding="ISO-8859-1"`, 1), wantFileErr("encoding", "only UTF-8")},
		{"another message", strings.Replace(balanced(), "camt.053.001.02", "camt.052.001.02", 1), wantFileErr("Document", "namespace")},
		{"too new a version", strings.Replace(balanced(), "camt.053.001.02", "camt.053.001.14", 1), wantFileErr("Document", "versions 02 to 13")},
		{"not XML", "hello", wantFileErr("Document", "text outside")},
		{"empty", "", wantFileErr("Document", "no XML element")},
		{"malformed", strings.Replace(balanced(ntry("5.00", "CRDT")), "</Amt>", "</Amnt>", 1), wantFileErr("xml", "not well-formed")},
		{"truncated", balanced(ntry("5.00", "CRDT"))[:300], wantFileErr("xml", "")},
		{"balanced with a reversal", camtDoc(ns02, stmt(bal("OPBD", "1000.00", "CRDT")+bal("CLBD", "1075.00", "CRDT"),
			ntry("100.00", "CRDT"), ntry("25.00", "CRDT", "<RvslInd>true</RvslInd>"), ntry("50.00", "DBIT"))),
			func(t *testing.T, p *parsed, err error) {
				noProblems(t, p, err)
				// A credit with RvslInd is the reversal of a debit: money in.
				if e := p.entries[1]; e.Direction != Credit || !e.Reversal || e.Signed().String() != "25" {
					t.Errorf("reversal = %+v", e)
				}
				if tot := p.stmts[0].Totals; tot.Credits.String() != "125" || tot.Debits.String() != "50" {
					t.Errorf("totals %+v", tot)
				}
			}},
		{"debit balances", camtDoc(ns02, stmt(bal("OPBD", "200.00", "DBIT")+bal("CLBD", "150.00", "DBIT"), ntry("50.00", "CRDT"))),
			func(t *testing.T, p *parsed, err error) {
				noProblems(t, p, err)
				if st := p.stmts[0]; st.Opening.Amount.String() != "KES -200.00" || st.Closing.Amount.String() != "KES -150.00" {
					t.Errorf("balances %s %s", st.Opening.Amount, st.Closing.Amount)
				}
			}},
		{"PRCD opens when OPBD is absent", camtDoc(ns02, stmt(bal("PRCD", "10.00", "CRDT")+bal("CLBD", "15.00", "CRDT"), ntry("5.00", "CRDT"))),
			func(t *testing.T, p *parsed, err error) {
				noProblems(t, p, err)
				if p.stmts[0].Opening.Type != "PRCD" {
					t.Errorf("opening %+v", p.stmts[0].Opening)
				}
			}},
		{"no opening balance", camtDoc(ns02, stmt(bal("CLBD", "15.00", "CRDT"), ntry("5.00", "CRDT"))),
			wantReject("Stmt/Bal", "no opening booked balance", 1)},
		{"no closing balance", camtDoc(ns02, stmt(bal("OPBD", "15.00", "CRDT"), ntry("5.00", "CRDT"))),
			wantReject("Stmt/Bal", "no closing booked balance", 1)},
		{"too many decimals", balanced(ntry("5.001", "CRDT"), ntry("1.00", "CRDT")), wantReject("Ntry/Amt", "more decimal places", 1)},
		{"negative amount", balanced(ntry("-5.00", "CRDT"), ntry("1.00", "CRDT")), wantReject("Ntry/Amt", "want digits", 1)},
		{"decimal comma", balanced(ntry("5,00", "CRDT"), ntry("1.00", "CRDT")), wantReject("Ntry/Amt", "want digits", 1)},
		{"empty amount", balanced(ntry("", "CRDT"), ntry("1.00", "CRDT")), wantReject("Ntry/Amt", "is empty", 1)},
		{"no currency", balanced(strings.Replace(ntry("5.00", "CRDT"), ` Ccy="KES"`, "", 1), ntry("1.00", "CRDT")),
			wantReject("Ntry/Amt", "no Ccy", 1)},
		{"another currency", balanced(strings.Replace(ntry("5.00", "CRDT"), `"KES"`, `"USD"`, 1), ntry("1.00", "CRDT")),
			wantReject("Ntry/Amt", "one currency per statement", 1)},
		{"no credit/debit indicator", balanced(ntry("5.00", ""), ntry("1.00", "CRDT")), wantReject("Ntry/CdtDbtInd", "missing", 1)},
		{"bad reversal indicator", balanced(ntry("5.00", "CRDT", "<RvslInd>yes</RvslInd>"), ntry("1.00", "CRDT")),
			wantReject("Ntry/RvslInd", "true or false", 1)},
		{"unknown status", balanced(strings.Replace(ntry("5.00", "CRDT"), "BOOK", "DONE", 1), ntry("1.00", "CRDT")),
			wantReject("Ntry/Sts", "BOOK, PDNG", 1)},
		{"booked without a booking date", balanced(strings.Replace(ntry("5.00", "CRDT"), "<BookgDt><Dt>2026-03-09</Dt></BookgDt>", "", 1), ntry("1.00", "CRDT")),
			wantReject("Ntry/BookgDt", "without a booking date", 1)},
		{"impossible date", balanced(strings.Replace(ntry("5.00", "CRDT"), "2026-03-09", "2026-02-30", 1), ntry("1.00", "CRDT")),
			wantReject("Ntry/BookgDt/Dt", "does not exist", 1)},
		{"text too long", balanced(ntry("5.00", "CRDT", "<AddtlNtryInf>"+strings.Repeat("x", MaxTextLen+1)+"</AddtlNtryInf>"), ntry("1.00", "CRDT")),
			wantReject("info", "more than", 1)},
		{"pending without a booking date takes its value date", balanced(`<Ntry><Amt Ccy="KES">5.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>PDNG</Sts><ValDt><Dt>2026-03-10</Dt></ValDt></Ntry>`),
			func(t *testing.T, p *parsed, err error) {
				noProblems(t, p, err)
				if e := p.entries[0]; e.Status != Pending || e.BookingDate.String() != "2026-03-10" || p.stmts[0].Totals.Unbooked != 1 {
					t.Errorf("pending entry %+v", e)
				}
			}},
		{"date-times in the bank's zone", camtDoc(ns08, `<Stmt><Id>S8</Id><CreDtTm>2026-03-10T01:00:00</CreDtTm>
<Acct><Id><IBAN>GB35RCTB20201512345678</IBAN></Id><Ccy>KES</Ccy><Svcr><FinInstnId><BICFI>RCTBGB2L</BICFI></FinInstnId></Svcr></Acct>`+
			bal("OPBD", "0.00", "CRDT")+bal("CLBD", "10.00", "CRDT")+`
<Ntry><Amt Ccy="KES">4.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><DtTm>2026-03-09T23:30:00</DtTm></BookgDt></Ntry>
<Ntry><Amt Ccy="KES">6.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><DtTm>2026-03-09T22:30:00Z</DtTm></BookgDt></Ntry>
</Stmt>`), func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			st := p.stmts[0]
			if st.Created.Format(time.RFC3339) != "2026-03-09T22:00:00Z" || st.Account.IBAN != "GB35RCTB20201512345678" || st.Account.BIC != "RCTBGB2L" {
				t.Errorf("statement %+v", st)
			}
			// 23:30 in Nairobi is 20:30 UTC, on the 9th.
			if e := p.entries[0]; e.BookedAt.Format(time.RFC3339) != "2026-03-09T20:30:00Z" || e.BookingDate.String() != "2026-03-09" {
				t.Errorf("local date-time: %s on %s", e.BookedAt, e.BookingDate)
			}
			// 22:30 UTC is 01:30 on the 10th in Nairobi: the bank's day.
			if e := p.entries[1]; e.BookedAt.Format(time.RFC3339) != "2026-03-09T22:30:00Z" || e.BookingDate.String() != "2026-03-10" {
				t.Errorf("UTC date-time: %s on %s", e.BookedAt, e.BookingDate)
			}
		}},
		{"001.08 parties and amounts", camtDoc(ns08, stmt(bal("OPBD", "0.00", "CRDT")+bal("CLBD", "70.00", "CRDT"), ntry("70.00", "CRDT", `<NtryDtls>
<TxDtls><Refs><EndToEndId>E1</EndToEndId></Refs><Amt Ccy="KES">30.00</Amt><CdtDbtInd>CRDT</CdtDbtInd>
<RltdPties><Dbtr><Pty><Nm>PAYER ONE</Nm></Pty></Dbtr><DbtrAcct><Id><IBAN>DE77100100100123456789</IBAN></Id></DbtrAcct><Cdtr><Pty><Nm>US</Nm></Pty></Cdtr></RltdPties>
<RltdAgts><DbtrAgt><FinInstnId><BICFI>PBNKDEFF</BICFI></FinInstnId></DbtrAgt></RltdAgts>
<RmtInf><Ustrd>INV 1</Ustrd><Ustrd>AND 2</Ustrd></RmtInf></TxDtls>
<TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs><Amt Ccy="KES">40.00</Amt>
<RltdPties><Dbtr><Pty><Nm>PAYER TWO</Nm></Pty></Dbtr></RltdPties>
<RmtInf><Strd><CdtrRefInf><Ref>RF18539007547034</Ref></CdtrRefInf></Strd></RmtInf></TxDtls>
</NtryDtls>`))), func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			e := p.entries[0]
			if len(e.Details) != 2 || e.CustomerRef != "" || e.Text != "INV 1 AND 2" || !e.Counterparty.IsZero() {
				t.Fatalf("batched entry %+v", e)
			}
			d1, d2 := e.Details[0], e.Details[1]
			if d1.Counterparty.Name != "PAYER ONE" || d1.Counterparty.Account.IBAN != "DE77100100100123456789" ||
				d1.Counterparty.Account.BIC != "PBNKDEFF" || d1.Amount.String() != "KES 30.00" || d1.EndToEndID != "E1" {
				t.Errorf("detail 1 %+v", d1)
			}
			if d2.Counterparty.Name != "PAYER TWO" || d2.EndToEndID != "" || d2.CreditorRef != "RF18539007547034" || d2.Direction != Credit {
				t.Errorf("detail 2 %+v", d2)
			}
		}},
		{"a rejected entry leaves the balance unchecked", camtDoc(ns02, stmt(bal("OPBD", "0.00", "CRDT")+bal("CLBD", "5.00", "CRDT"),
			ntry("5.00", "CRDT"), ntry("x", "CRDT"))), wantReject("Ntry/Amt", "want digits", 1)},
		{"a balance in another currency", camtDoc(ns02, stmt(bal("OPBD", "0.00", "CRDT")+strings.Replace(bal("CLBD", "0.00", "CRDT"), "KES", "USD", 1))),
			func(t *testing.T, p *parsed, err error) {
				if err != nil || len(p.rejects) != 2 || p.rejects[0].Field != "Stmt/Bal/Amt" {
					t.Fatalf("err %v rejects %v", err, p.rejects)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, err := run(t, ParseCamt, []byte(c.doc), "stmt.xml", Options{Zone: nbo})
			c.check(t, p, err)
			checkProperties(t, p)
		})
	}
}

func noProblems(t *testing.T, p *parsed, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("file error %v", err)
	}
	if len(p.rejects) > 0 {
		t.Fatalf("rejects %v", p.rejects)
	}
}

// wantFileErr expects the file to be refused with a ParseError naming field
// and saying text.
func wantFileErr(field, text string) func(t *testing.T, p *parsed, err error) {
	return func(t *testing.T, p *parsed, err error) {
		t.Helper()
		var pe *ledger.ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("err = %v, want a ParseError", err)
		}
		if pe.File == "" || pe.Line <= 0 || pe.Field != field || !strings.Contains(pe.Error(), text) {
			t.Errorf("error %v: want file, line, field %s and %q", pe, field, text)
		}
	}
}

// wantReject expects exactly one rejection, naming field and saying text,
// and `good` entries read around it.
func wantReject(field, text string, good int) func(t *testing.T, p *parsed, err error) {
	return func(t *testing.T, p *parsed, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("file error %v", err)
		}
		if len(p.rejects) != 1 {
			t.Fatalf("rejects = %v, want one", p.rejects)
		}
		pe := p.rejects[0]
		if pe.File == "" || pe.Line <= 0 || pe.Field != field || !strings.Contains(pe.Error(), text) {
			t.Errorf("rejection %v: want field %s and %q", pe, field, text)
		}
		if len(p.entries) != good {
			t.Errorf("%d entries read, want %d", len(p.entries), good)
		}
	}
}

// TestCamtRejectNamesTheLine: a bad entry's rejection points at the line of
// the element at fault and carries the whole <Ntry> element, and the next
// entry is read.
func TestCamtRejectNamesTheLine(t *testing.T) {
	t.Parallel()
	doc := camtDoc(ns02, stmt(bal("OPBD", "0.00", "CRDT")+bal("CLBD", "1.00", "CRDT"), ntry("1.001", "CRDT"), ntry("1.00", "CRDT")))
	p, err := run(t, ParseCamt, []byte(doc), "x.xml", Options{})
	if err != nil || len(p.rejects) != 1 || len(p.entries) != 1 {
		t.Fatalf("err %v rejects %v entries %d", err, p.rejects, len(p.entries))
	}
	lines := strings.Split(doc, "\n")
	if got := lines[p.rejects[0].Line-1]; !strings.Contains(got, "1.001") {
		t.Errorf("line %d is %q, not the amount", p.rejects[0].Line, got)
	}
	raw := string(p.raws[0])
	if !strings.HasPrefix(raw, "<Ntry>") || !strings.HasSuffix(raw, "</Ntry>") || !strings.Contains(raw, "1.001") {
		t.Errorf("raw = %q", raw)
	}
	if e := p.entries[0]; !strings.HasPrefix(string(e.Raw), "<Ntry>") || lines[e.Line-1] != "<Ntry>" {
		t.Errorf("good entry line %d raw %q", e.Line, e.Raw)
	}
}

// TestCamt054: a notification is read with the same code: entries, no
// balances, no check.
func TestCamt054(t *testing.T) {
	t.Parallel()
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">
<BkToCstmrDbtCdtNtfctn>
<GrpHdr><MsgId>N1</MsgId><CreDtTm>2026-03-09T10:00:00Z</CreDtTm></GrpHdr>
<Ntfctn><Id>N1-1</Id><Acct><Id><Othr><Id>4401234567</Id></Othr></Id><Ccy>USD</Ccy></Acct>
<Ntry><Amt Ccy="USD">12480.55</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>2026-03-09</Dt></BookgDt>
<NtryDtls><TxDtls><Refs><EndToEndId>po_1QxA2bCdEfGhIjKlMnOpQrSt</EndToEndId></Refs>
<RmtInf><Ustrd>STRIPE PAYOUT po_1QxA2bCdEfGhIjKlMnOpQrSt STRIPE</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>
</Ntfctn>
</BkToCstmrDbtCdtNtfctn>
</Document>`
	f, err := Sniff([]byte(doc))
	if err != nil || f != FormatCamt054 {
		t.Fatalf("Sniff = %s, %v", f, err)
	}
	p := mustRun(t, Parse, []byte(doc), "n.xml", Options{})
	if len(p.stmts) != 1 || len(p.entries) != 1 {
		t.Fatalf("%d statements, %d entries", len(p.stmts), len(p.entries))
	}
	st, e := p.stmts[0], p.entries[0]
	if st.Format != FormatCamt054 || st.Version != "001.08" || st.ID != "N1-1" || st.Opening != nil {
		t.Errorf("statement %+v", st)
	}
	if e.CustomerRef != "po_1QxA2bCdEfGhIjKlMnOpQrSt" || e.Amount.String() != "USD 12480.55" {
		t.Errorf("entry %+v", e)
	}
	if err := CheckBalance(&st); !errors.Is(err, ErrNoBalances) {
		t.Errorf("CheckBalance = %v", err)
	}
}
