package bank

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// baiFile wraps the records of one account (its 03, 16 and 88 records) in
// a file of one group, with trailers that declare total as the control
// total of the account, the group and the file, and the records counted.
func baiFile(currency string, total int64, records ...string) string {
	lines := []string{"01,RCTBUS33,ACMEGLOBAL,260314,0530,F1,,,2/", "02,ACMEGLOBAL,RCTBUS33,1,260309,2359," + currency + ",2/"}
	lines = append(lines, records...)
	lines = append(lines, fmt.Sprintf("49,%d,%d/", total, len(records)+1))
	lines = append(lines, fmt.Sprintf("98,%d,1,%d/", total, len(records)+3))
	lines = append(lines, fmt.Sprintf("99,%d,1,%d/", total, len(records)+5))
	return strings.Join(lines, "\n") + "\n"
}

var bai2Cases = []textCase{
	{name: "balanced account", file: baiFile("USD", 10000+10500+1000+500,
		"03,4401234567,,010,10000,,,015,10500,,/",
		"16,165,1000,0,B1,C1,STRIPE PAYOUT po_1 STRIPE",
		"16,475,500,Z,B2,,CHECK PAID/"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			st, e1, e2 := p.stmts[0], p.entries[0], p.entries[1]
			if st.Currency != "USD" || st.Opening.Amount.String() != "USD 100.00" || st.Closing.Amount.String() != "USD 105.00" ||
				st.Sequence != "1/1" || st.ID != "F1" || st.From.String() != "2026-03-09" {
				t.Errorf("statement %+v", st)
			}
			if e1.Direction != Credit || e1.Amount.String() != "USD 10.00" || e1.BankRef != "B1" || e1.CustomerRef != "C1" ||
				e1.Text != "STRIPE PAYOUT po_1 STRIPE" || e1.Code.BAI != "165" || e1.BookingDate.String() != "2026-03-09" {
				t.Errorf("entry 1 %+v", e1)
			}
			if e2.Direction != Debit || e2.Text != "CHECK PAID" || e2.CustomerRef != "" {
				t.Errorf("entry 2 %+v", e2)
			}
		}},
	{name: "funds types", file: baiFile("USD", 0+4000+1000+1000+1000+1000,
		"03,A1,,010,0,,,015,4000,,/",
		"16,165,1000,V,260310,0800,B1,,VALUE DATED",
		"16,165,1000,S,500,300,200,B2,,DISTRIBUTED",
		"16,165,1000,D,2,0,600,1,400,B3,,BY DAYS",
		"16,165,1000,2,B4,,TWO DAYS"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			if len(p.entries) != 4 || p.entries[0].ValueDate.String() != "2026-03-10" || !p.entries[1].ValueDate.IsZero() {
				t.Fatalf("entries %+v", p.entries)
			}
			for i, e := range p.entries {
				if e.BankRef != fmt.Sprintf("B%d", i+1) {
					t.Errorf("entry %d bank ref %q", i+1, e.BankRef)
				}
			}
		}},
	{name: "continuations", file: baiFile("USD", 100+100+200+300+10000000,
		"03,A1,USD,010,100,,/",
		"88,015,100,,/",
		"16,165,200,0,B1,C1,PAYMENT 1/2, PART A",
		"88,AND THE REST/",
		"16,475,300,0,B2,C2,",
		"88,TEXT ONLY ON THE CONTINUATION",
		"16,115,10000000,S,5000000,4000000,1000000/",
		"88,AX13612,B096132,AMALGAMATED CORP. LOCKBOX",
		"88,DEPOSIT-MISC. RECEIVABLES"),
		check: func(t *testing.T, p *parsed, err error) {
			if err != nil || len(p.entries) != 3 {
				t.Fatalf("err %v entries %d rejects %v", err, len(p.entries), p.rejects)
			}
			if e := p.entries[0]; e.Text != "PAYMENT 1/2, PART A AND THE REST" || !strings.Contains(string(e.Raw), "\n88,AND THE REST/") {
				t.Errorf("entry 1 text %q raw %q", e.Text, e.Raw)
			}
			if e := p.entries[1]; e.Text != "TEXT ONLY ON THE CONTINUATION" || e.CustomerRef != "C2" {
				t.Errorf("entry 2 %+v", e)
			}
			if e := p.entries[2]; e.BankRef != "AX13612" || e.CustomerRef != "B096132" ||
				e.Text != "AMALGAMATED CORP. LOCKBOX DEPOSIT-MISC. RECEIVABLES" {
				t.Errorf("entry 3 %+v", e)
			}
			if st := p.stmts[0]; st.Closing == nil || st.Closing.Amount.String() != "USD 1.00" {
				t.Errorf("closing from the continued 03: %+v", st.Closing)
			}
			// The entries do not reach the closing balance.
			var be *BalanceError
			if len(p.rejects) != 1 || !errors.As(p.rejects[0], &be) || p.rejects[0].Field != "03 015" || p.rejects[0].Line != 3 {
				t.Errorf("rejects %v", p.rejects)
			}
		}},
	{name: "non-monetary detail", file: baiFile("USD", 0+0,
		"03,A1,,010,0,,,015,0,,/", "16,890,,,,,DETAIL REPORTS DELAYED, SEE 11:00 AM FILE/"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			if len(p.entries) != 0 {
				t.Errorf("entries %+v", p.entries)
			}
		}},
	{name: "custom code not configured", file: baiFile("USD", 500+500, "03,A1,,010,0,,,015,500,,/", "16,901,500,0,B1,,BANK OWN CODE"),
		check: wantReject("16 type code", "must be configured", 0)},
	{name: "custom code configured", opt: Options{BAI2Directions: map[string]Direction{"901": Credit}},
		file: baiFile("USD", 500+500, "03,A1,,010,0,,,015,500,,/", "16,901,500,0,B1,,BANK OWN CODE"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			if p.entries[0].Direction != Credit {
				t.Errorf("entry %+v", p.entries[0])
			}
		}},
	{name: "loan code", file: baiFile("USD", 500, "03,A1,,,,,/", "16,702,500,0,B1,,LOAN"), check: wantReject("16 type code", "loan", 0)},
	{name: "summary code in a detail", file: baiFile("USD", 500, "03,A1,,,,,/", "16,100,500,0,B1,,X"), check: wantReject("16 type code", "summary", 0)},
	{name: "status code in a detail", file: baiFile("USD", 500, "03,A1,,,,,/", "16,010,500,0,B1,,X"), check: wantReject("16 type code", "not a detail", 0)},
	{name: "bad amount", file: baiFile("USD", 1250+100, "03,A1,,,,,/", "16,165,12.50,0,B1,,X", "16,165,100,0,B2,,Y"),
		check: func(t *testing.T, p *parsed, err error) {
			if err != nil || len(p.entries) != 1 || len(p.rejects) < 1 || p.rejects[0].Field != "16 amount" {
				t.Fatalf("err %v entries %d rejects %v", err, len(p.entries), p.rejects)
			}
		}},
	{name: "account control total", file: baiFile("USD", 999, "03,A1,,,,,/", "16,165,100,0,B1,,X"),
		check: func(t *testing.T, p *parsed, err error) {
			if err != nil || len(p.rejects) != 1 {
				t.Fatalf("err %v rejects %v", err, p.rejects)
			}
			var ce *ControlError
			if pe := p.rejects[0]; !errors.As(pe, &ce) || ce.Record != "49" || ce.Declared != 999 || ce.Counted != 100 ||
				pe.Field != "49 control total" || pe.Line != 5 || string(p.raws[0]) != "49,999,3/" {
				t.Errorf("rejection %v (%+v) raw %q", pe, ce, p.raws[0])
			}
		}},
	{name: "record counts", file: strings.Join([]string{"01,S,R,260314,0530,F1,,,2/", "02,R,S,1,260309,,,2/",
		"03,A1,,,,,/", "16,165,100,0,B1,,X", "88,MORE", "49,100,3/", "98,100,2,6/", "99,100,1,9/"}, "\n"),
		check: func(t *testing.T, p *parsed, err error) {
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range p.rejects {
				var ce *ControlError
				if !errors.As(r, &ce) {
					t.Fatalf("rejection %v", r)
				}
				got = append(got, fmt.Sprintf("%s %s %d/%d", ce.Record, ce.What, ce.Declared, ce.Counted))
			}
			if want := "49 record count 3/4, 98 account count 2/1, 99 record count 9/8"; strings.Join(got, ", ") != want {
				t.Errorf("rejections %s", strings.Join(got, ", "))
			}
		}},
	{name: "group and file totals", file: strings.Join([]string{"01,S,R,260314,0530,F1,,,2/", "02,R,S,1,260309,,,2/",
		"03,A1,,,,,/", "16,165,100,0,B1,,X", "49,100,3/", "98,101,1,5/", "99,102,2,7/"}, "\n"),
		check: func(t *testing.T, p *parsed, err error) {
			if err != nil || len(p.rejects) != 3 {
				t.Fatalf("err %v rejects %v", err, p.rejects)
			}
			for i, want := range []string{"98 control total", "99 control total", "99 group count"} {
				if p.rejects[i].Field != want {
					t.Errorf("rejection %d names %s, want %s", i, p.rejects[i].Field, want)
				}
			}
		}},
	{name: "truncated", file: "01,S,R,260314,0530,F1,,,2/\n02,R,S,1,260309,,,2/\n03,A1,,,,,/\n16,165,100,0,B1,,X\n",
		check: func(t *testing.T, p *parsed, err error) {
			wantFileErr("99", "truncated")(t, p, err)
			if len(p.rejects) != 2 || p.rejects[0].Field != "49" || p.rejects[1].Field != "98" {
				t.Errorf("rejects %v", p.rejects)
			}
		}},
	{name: "missing account trailer", file: strings.Join([]string{"01,S,R,260314,0530,F1,,,2/", "02,R,S,1,260309,,,2/", "03,A1,,,,,/", "16,165,100,0,B1,,X",
		"03,A2,,,,,/", "49,0,2/", "98,0,1,6/", "99,0,1,8/"}, "\n"),
		check: func(t *testing.T, p *parsed, err error) {
			if err != nil || len(p.rejects) < 1 || p.rejects[0].Field != "49" || len(p.stmts) != 2 || len(p.entries) != 1 {
				t.Fatalf("err %v rejects %v statements %d", err, p.rejects, len(p.stmts))
			}
		}},
	{name: "not BAI2", file: "02,R,S,1,260309,,,2/\n", check: wantFileErr("01", "not a BAI2 file")},
	{name: "version 3", file: "01,S,R,260314,0530,F1,,,3/\n", check: wantFileErr("01 version", "only BAI version 2")},
	{name: "test group", file: "01,S,R,260314,0530,F1,,,2/\n02,R,S,4,260309,,,2/\n", check: wantFileErr("02 group status", "test")},
	{name: "deletion group", file: "01,S,R,260314,0530,F1,,,2/\n02,R,S,2,260309,,,2/\n", check: wantFileErr("02 group status", "deletion")},
	{name: "currency exponents", file: strings.Join([]string{"01,S,R,260314,0530,F1,,,2/", "02,R,S,1,260309,,JPY,2/",
		"03,A1,,010,1500,,,015,1600,,/", "16,165,100,0,B1,,YEN", "49,3200,3/",
		"03,A2,KWD,010,-100000,,,015,-99000,,/", "16,165,1000,0,B2,,DINAR", "49,-198000,3/",
		"98,-194800,2,8/", "99,-194800,1,10/"}, "\n"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			if e := p.entries[0]; e.Amount.String() != "JPY 100" {
				t.Errorf("yen %s", e.Amount)
			}
			if e := p.entries[1]; e.Amount.String() != "KWD 1.000" || p.stmts[1].Opening.Amount.String() != "KWD -100.000" {
				t.Errorf("dinar %s opening %s", e.Amount, p.stmts[1].Opening.Amount)
			}
		}},
	{name: "default currency and padding", file: strings.ReplaceAll(strings.Join([]string{
		"01,S,R,260314,0530,F1,80,,2/                                                       ",
		"02,R,S,1,260309,,,2/     ", "03,A1,,010,100,,,015,200,,/   ", "16,165,100,0,B1,,PADDED TEXT      ",
		"49,400,3/ ", "98,400,1,5/", "99,400,1,7/"}, "\n"), "\n", "\r\n"),
		check: func(t *testing.T, p *parsed, err error) {
			noProblems(t, p, err)
			if p.entries[0].Text != "PADDED TEXT" || p.stmts[0].Currency != "USD" {
				t.Errorf("entry %+v", p.entries[0])
			}
		}},
	{name: "fixed blocks without line ends", file: "01,S,R,260314,0530,F1,80,,2/   02,R,S,1,260309,,,2/   \n",
		check: wantFileErr("01 record", "without line ends")},
	{name: "continuation of nothing", file: "01,S,R,260314,0530,F1,,,2/\nGARBAGE\n88,X/\n99,0,0,2/\n",
		check: func(t *testing.T, p *parsed, err error) {
			if err != nil || len(p.rejects) != 2 || !strings.Contains(p.rejects[1].Error(), "continuation") {
				t.Fatalf("err %v rejects %v", err, p.rejects)
			}
		}},
	{name: "after the trailer", file: "01,S,R,260314,0530,F1,,,2/\n99,0,0,2/\n02,R,S,1,260309,,,2/\n",
		check: func(t *testing.T, p *parsed, err error) {
			if err != nil || len(p.rejects) != 1 || !strings.Contains(p.rejects[0].Error(), "after the 99") {
				t.Fatalf("err %v rejects %v", err, p.rejects)
			}
		}},
	{name: "detail outside an account", file: "01,S,R,260314,0530,F1,,,2/\n02,R,S,1,260309,,,2/\n16,165,1,0,,,X\n98,0,0,3/\n99,0,1,5/\n",
		check: wantReject("16 record", "outside any account", 0)},
	{name: "opening and closing do not add up", file: baiFile("USD", 100+300+100, "03,A1,,010,100,,,015,300,,/", "16,165,100,0,B1,,X"),
		check: func(t *testing.T, p *parsed, err error) {
			wantReject("03 015", "difference USD +1.00", 1)(t, p, err)
			if string(p.raws[0]) != "03,A1,,010,100,,,015,300,,/" {
				t.Errorf("raw %q", p.raws[0])
			}
		}},
}

func TestBAI2EdgeCases(t *testing.T) {
	t.Parallel()
	for _, c := range bai2Cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, err := run(t, ParseBAI2, []byte(c.file), "stmt.bai", c.opt)
			c.check(t, p, err)
			checkProperties(t, p)
		})
	}
}
