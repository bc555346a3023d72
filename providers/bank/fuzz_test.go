package bank

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// The fuzz targets run their seeds in every `go test`; run one for longer
// with e.g. `go test ./providers/bank -fuzz=FuzzMT940 -fuzztime=60s`.
// Crashers are kept under testdata/fuzz/<target>/.

// checkProperties holds a parse to what the package promises, whatever the
// input: every entry has a known currency, an amount not negative at its
// currency's scale, a direction, a status, a booking day, its line and raw
// bytes; every rejection names its file, line and field; each statement's
// totals are the sums of its entries; and a statement whose balances are
// given and that had nothing rejected adds up (one that does not is
// rejected with a BalanceError).
func checkProperties(t *testing.T, p *parsed) {
	t.Helper()
	type sums struct{ credits, debits decimal.Decimal }
	per := map[int]*sums{}
	for i := range p.entries {
		e := &p.entries[i]
		exp, err := money.Exponent(e.Amount.Currency)
		switch {
		case err != nil:
			t.Fatalf("entry %d: currency %q: %v", i, e.Amount.Currency, err)
		case e.Amount.Value.IsNegative() || !e.Amount.Value.Equal(e.Amount.Value.Truncate(exp)):
			t.Fatalf("entry %d: amount %s", i, e.Amount)
		case e.Direction != Credit && e.Direction != Debit:
			t.Fatalf("entry %d: direction %q", i, e.Direction)
		case e.Status == "":
			t.Fatalf("entry %d: no status", i)
		case e.BookingDate.IsZero():
			t.Fatalf("entry %d: no booking date", i)
		case e.Line <= 0 || len(e.Raw) == 0:
			t.Fatalf("entry %d: line %d raw %q", i, e.Line, e.Raw)
		}
		s := per[p.stmtOf[i]]
		if s == nil {
			s = &sums{}
			per[p.stmtOf[i]] = s
		}
		if e.Status == Booked {
			if e.Direction == Credit {
				s.credits = s.credits.Add(e.Amount.Value)
			} else {
				s.debits = s.debits.Add(e.Amount.Value)
			}
		}
	}
	balanceErrs := 0
	for _, r := range p.rejects {
		if r.File == "" || r.Line <= 0 || r.Field == "" {
			t.Fatalf("rejection %v does not name its file, line and field", r)
		}
		var be *BalanceError
		if errors.As(r, &be) {
			balanceErrs++
		}
	}
	unbalanced := 0
	for i := range p.stmts {
		st := &p.stmts[i]
		s := per[i]
		if s == nil {
			s = &sums{}
		}
		if !s.credits.Equal(st.Totals.Credits) || !s.debits.Equal(st.Totals.Debits) {
			t.Fatalf("statement %d: totals %s/%s, entries add up to %s/%s", i, st.Totals.Credits, st.Totals.Debits, s.credits, s.debits)
		}
		err := CheckBalance(st)
		var be *BalanceError
		if errors.As(err, &be) {
			unbalanced++
		}
		if st.Totals.Rejected == 0 && st.Opening != nil && st.Closing != nil && err != nil {
			t.Fatalf("statement %d does not add up and nothing was rejected: %v", i, err)
		}
	}
	if balanceErrs > unbalanced {
		t.Fatalf("%d balance rejections for %d statements that do not add up", balanceErrs, unbalanced)
	}
}

func seedFiles(f *testing.F, pattern string) {
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds for %s: %v", pattern, err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// fuzzParse runs parse on data and checks the properties, and that a file
// error is a ParseError naming the file.
func fuzzParse(t *testing.T, parse parseFunc, data []byte, opt Options) {
	p, err := run(t, parse, data, "f", opt)
	if err != nil {
		var pe *ledger.ParseError
		if !errors.As(err, &pe) || pe.File != "f" || pe.Field == "" {
			t.Fatalf("file error %v is not a ParseError naming the file and field", err)
		}
	}
	checkProperties(t, p)
}

func FuzzCamt053(f *testing.F) {
	seedFiles(f, "testdata/camt053_*.xml")
	bals := bal("OPBD", "1000.00", "CRDT") + bal("CLBD", "1075.00", "CRDT")
	f.Add([]byte(camtDoc(ns02, stmt(bals, ntry("100.00", "CRDT"), ntry("25.00", "CRDT", "<RvslInd>true</RvslInd>"), ntry("50.00", "DBIT")))))
	f.Add([]byte(camtDoc(ns08, stmt(bals, ntry("75.001", "CRDT")))))
	f.Add([]byte(camtDoc(ns08, stmt(bals, `<Ntry><Amt Ccy="KES">75.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>PDNG</Cd></Sts><ValDt><DtTm>2026-03-09T23:30:00</DtTm></ValDt></Ntry>`))))
	opt := Options{Zone: zone(f, "Africa/Nairobi")}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, ParseCamt, data, opt) })
}

func FuzzMT940(f *testing.F) {
	seedFiles(f, "testdata/mt940_*.sta")
	for _, c := range mt940Cases {
		f.Add([]byte(c.file))
	}
	opt := Options{Zone: zone(f, "Africa/Nairobi"), Charset: Latin1}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzParse(t, ParseMT940, data, opt)
		fuzzParse(t, ParseMT940, data, Options{})
	})
}

func FuzzBAI2(f *testing.F) {
	seedFiles(f, "testdata/bai2_*.bai")
	for _, c := range bai2Cases {
		f.Add([]byte(c.file))
	}
	opt := Options{Zone: zone(f, "America/New_York"), BAI2Directions: map[string]Direction{"901": Credit, "702": Debit}}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, ParseBAI2, data, opt) })
}
