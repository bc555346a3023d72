package bank

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
)

// fixtures are the example files under testdata, each with the options its
// bank needs: a week (2026-03-09 to 2026-03-15) of an M-Pesa settlement
// account in KES and of a Stripe payout account in USD, in each format.
var fixtures = []struct {
	file string
	opt  func(testing.TB) Options
	// rejects is how many rejections the file must give.
	rejects int
}{
	{file: "camt053_v02_kes_mpesa.xml", opt: nairobi},
	{file: "camt053_v02_kes_unbalanced.xml", opt: nairobi, rejects: 1},
	{file: "camt053_v08_usd_stripe.xml", opt: newYork},
	{file: "mt940_kes_mpesa.sta", opt: nairobi},
	{file: "mt940_de_structured_latin1.sta", opt: func(t testing.TB) Options {
		return Options{Zone: zone(t, "Europe/Berlin"), Charset: Latin1}
	}},
	{file: "bai2_usd_stripe.bai", opt: newYork},
}

func nairobi(t testing.TB) Options { return Options{Zone: zone(t, "Africa/Nairobi")} }
func newYork(t testing.TB) Options { return Options{Zone: zone(t, "America/New_York")} }

// TestFixturesGolden parses every example file through Parse (the format
// found by Sniff) and compares what it read with testdata/<case>.golden.
func TestFixturesGolden(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures {
		t.Run(f.file, func(t *testing.T) {
			t.Parallel()
			data := readFile(t, filepath.Join("testdata", f.file))
			p, err := run(t, Parse, data, f.file, f.opt(t))
			if err != nil {
				t.Fatalf("file error: %v", err)
			}
			if len(p.rejects) != f.rejects {
				t.Errorf("%d rejection(s), want %d: %v", len(p.rejects), f.rejects, p.rejects)
			}
			for i, e := range p.entries {
				if len(e.Raw) == 0 {
					t.Errorf("entry %d has no raw bytes", i)
				}
			}
			golden.Assert(t, filepath.Join("testdata", strings.TrimSuffix(f.file, filepath.Ext(f.file))+".golden"), p.render(nil))
		})
	}
}

// TestUnbalancedFileReported: a statement whose entries do not add up to
// its closing balance is rejected with a BalanceError naming the file, the
// statement and the difference, on the line of the closing balance.
func TestUnbalancedFileReported(t *testing.T) {
	t.Parallel()
	const file = "camt053_v02_kes_unbalanced.xml"
	p, err := run(t, ParseCamt, readFile(t, "testdata/"+file), file, nairobi(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.rejects) != 1 {
		t.Fatalf("rejects = %v", p.rejects)
	}
	pe := p.rejects[0]
	var be *BalanceError
	if !errors.As(pe, &be) {
		t.Fatalf("rejection %v is not a BalanceError", pe)
	}
	if be.File != file || be.Statement != "0100012345678-2026-W11 #11/11" || be.Account != "0100012345678" ||
		be.Difference.String() != "KES 100.00" || be.Expected.String() != "KES 3072495.75" || be.Closing.String() != "KES 3072595.75" {
		t.Errorf("balance error = %+v", be)
	}
	if pe.File != file || pe.Field != "Stmt/Bal/CLBD" || pe.Line != p.stmts[0].Closing.Line {
		t.Errorf("parse error names %s line %d field %s", pe.File, pe.Line, pe.Field)
	}
	if !strings.Contains(string(p.raws[0]), "<Cd>CLBD</Cd>") {
		t.Errorf("raw = %q, want the closing balance element", p.raws[0])
	}
	for _, want := range []string{file, "0100012345678-2026-W11", "difference KES +100.00"} {
		if !strings.Contains(pe.Error(), want) {
			t.Errorf("message %q does not say %q", pe.Error(), want)
		}
	}
	// The importer can check again on its own.
	if err := CheckBalance(&p.stmts[0]); !errors.As(err, &be) {
		t.Errorf("CheckBalance = %v", err)
	}
	var perr *ledger.ParseError
	if !errors.As(error(pe), &perr) {
		t.Fatal("not a ParseError")
	}
}

// TestSameWeekInTwoFormats: the camt.053 and MT940 files of the M-Pesa
// account, and the camt.053 and BAI2 files of the Stripe account, describe
// the same booked entries; read through their own parsers they must agree
// on every amount, direction, booking day and bank reference, and on the
// balances.
func TestSameWeekInTwoFormats(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		opt  func(testing.TB) Options
	}{
		{"camt053_v02_kes_mpesa.xml", "mt940_kes_mpesa.sta", nairobi},
		{"camt053_v08_usd_stripe.xml", "bai2_usd_stripe.bai", newYork},
	} {
		pa := mustRun(t, Parse, readFile(t, "testdata/"+c.a), c.a, c.opt(t))
		pb := mustRun(t, Parse, readFile(t, "testdata/"+c.b), c.b, c.opt(t))
		booked := func(p *parsed) []string {
			var out []string
			for _, e := range p.entries {
				if e.Status == Booked {
					out = append(out, strings.Join([]string{string(e.Direction), e.Amount.String(), e.BookingDate.String(), e.BankRef}, " "))
				}
			}
			return out
		}
		ea, eb := booked(pa), booked(pb)
		if strings.Join(ea, "\n") != strings.Join(eb, "\n") {
			t.Errorf("%s and %s disagree:\n%s\n--\n%s", c.a, c.b, strings.Join(ea, "\n"), strings.Join(eb, "\n"))
		}
		first, last := func(p *parsed) string { return p.stmts[0].Opening.Amount.String() },
			func(p *parsed) string { return p.stmts[len(p.stmts)-1].Closing.Amount.String() }
		if first(pa) != first(pb) || last(pa) != last(pb) {
			t.Errorf("%s and %s: balances %s..%s and %s..%s", c.a, c.b, first(pa), last(pa), first(pb), last(pb))
		}
	}
}

// TestEntryTooLong: an entry larger than maxEntryBytes is refused rather
// than held: a camt file stops there (the XML cannot be followed past it),
// an MT940 entry or BAI2 record is rejected and reading goes on.
func TestEntryTooLong(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 60000)
	var lines []string
	for range maxEntryBytes/len(long) + 1 {
		lines = append(lines, long)
	}
	camt := camtDoc(ns02, stmt(bal("OPBD", "0.00", "CRDT")+bal("CLBD", "0.00", "CRDT"),
		ntry("1.00", "CRDT", "<AddtlNtryInf>"+strings.Join(lines, "")+"</AddtlNtryInf>")))
	p, err := run(t, ParseCamt, []byte(camt), "big.xml", Options{})
	wantFileErr("xml", "longer than")(t, p, err)

	mt940 := mt(append(append([]string{":20:S1", ":25:A", ":60F:C260309KES0,00", ":61:2603090309C1,00NTRFX", ":86:BIG"}, lines...),
		":61:2603090309C1,00NTRFY", ":62F:C260309KES2,00")...)
	p, err = run(t, ParseMT940, []byte(mt940), "big.sta", Options{})
	wantReject("86", "longer than", 1)(t, p, err)

	var recs []string
	for _, l := range lines {
		recs = append(recs, "88,"+l)
	}
	bai := baiFile("USD", 200, append(append([]string{"03,A1,,,,,/", "16,165,100,0,B1,,X"}, recs...), "16,165,100,0,B2,,Y")...)
	p, err = run(t, ParseBAI2, []byte(bai), "big.bai", Options{})
	if err != nil || len(p.entries) != 1 || len(p.rejects) < 1 || p.rejects[0].Field != "16 record" ||
		!strings.Contains(p.rejects[0].Error(), "longer than") {
		t.Errorf("BAI2: err %v entries %d rejects %v", err, len(p.entries), p.rejects)
	}
}
