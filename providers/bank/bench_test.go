package bank

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// genReader produces a statement file piece by piece as it is read, so
// that a file of any size is never held: piece(i) returns the header for
// i == -1, entry i for 0 <= i < n, and the end of the file for i == n.
type genReader struct {
	n, i  int
	piece func(i int) string
	buf   []byte
}

func newGen(n int, piece func(i int) string) *genReader { return &genReader{n: n, i: -1, piece: piece} }

func (g *genReader) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.i > g.n {
			return 0, io.EOF
		}
		g.buf = append(g.buf[:0], g.piece(g.i)...)
		g.i++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// genCents is entry i's amount in cents, and whether it is a credit.
func genCents(i int) (int64, bool) { return 100 + int64(i*7919%1000000), i%3 != 0 }

func cents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// genCamt is a camt.053.001.08 statement of n entries, one statement,
// each entry with one transaction's details.
func genCamt(n int) io.Reader {
	const opening = int64(100_000_000_00)
	closing := opening
	for i := range n {
		c, credit := genCents(i)
		if !credit {
			c = -c
		}
		closing += c
	}
	balXML := func(tp string, c int64) string {
		cd := "CRDT"
		if c < 0 {
			cd, c = "DBIT", -c
		}
		return `<Bal><Tp><CdOrPrtry><Cd>` + tp + `</Cd></CdOrPrtry></Tp><Amt Ccy="USD">` + cents(c) + `</Amt><CdtDbtInd>` + cd +
			`</CdtDbtInd><Dt><Dt>2026-03-09</Dt></Dt></Bal>` + "\n"
	}
	return newGen(n, func(i int) string {
		switch {
		case i < 0:
			return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
<GrpHdr><MsgId>BENCH</MsgId><CreDtTm>2026-03-10T06:00:00Z</CreDtTm></GrpHdr>
<Stmt><Id>BENCH-1</Id><Acct><Id><Othr><Id>4401234567</Id></Othr></Id><Ccy>USD</Ccy></Acct>
` + balXML("OPBD", opening) + balXML("CLBD", closing)
		case i == n:
			return "</Stmt></BkToCstmrStmt></Document>\n"
		}
		c, credit := genCents(i)
		cd, party := "DBIT", "Cdtr"
		if credit {
			cd, party = "CRDT", "Dbtr"
		}
		return fmt.Sprintf(`<Ntry>
  <Amt Ccy="USD">%s</Amt>
  <CdtDbtInd>%s</CdtDbtInd>
  <Sts><Cd>BOOK</Cd></Sts>
  <BookgDt><Dt>2026-03-09</Dt></BookgDt>
  <ValDt><Dt>2026-03-09</Dt></ValDt>
  <AcctSvcrRef>BR%08d</AcctSvcrRef>
  <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ACDT</SubFmlyCd></Fmly></Domn></BkTxCd>
  <NtryDtls><TxDtls>
    <Refs><EndToEndId>po_%024d</EndToEndId></Refs>
    <RltdPties><%s><Pty><Nm>STRIPE</Nm></Pty></%s></RltdPties>
    <RmtInf><Ustrd>STRIPE PAYOUT po_%024d STRIPE</Ustrd></RmtInf>
  </TxDtls></NtryDtls>
</Ntry>
`, cents(c), cd, i, i, party, party, i)
	})
}

// mtAmountText renders cents as an MT amount.
func mtAmountText(c int64) string { return strings.Replace(cents(c), ".", ",", 1) }

// genMT940 is n entries in statements of perStmt entries each.
func genMT940(n, perStmt int) io.Reader {
	bal := int64(100_000_000_00)
	balField := func(tag string, c int64) string {
		mark := "C"
		if c < 0 {
			mark, c = "D", -c
		}
		return ":" + tag + ":" + mark + "260309USD" + mtAmountText(c) + "\n"
	}
	stmt := 0
	return newGen(n, func(i int) string {
		var b strings.Builder
		if i < 0 {
			return ""
		}
		if i > 0 && (i%perStmt == 0 || i == n) {
			b.WriteString(balField("62F", bal))
			b.WriteString("-}\n")
		}
		if i == n {
			return b.String()
		}
		if i%perStmt == 0 {
			stmt++
			fmt.Fprintf(&b, "{1:F01ACMEUSAAXXX0000000000}{2:O9400600260310RCTBUS33XXXX00000000002603100600N}{4:\n:20:BENCH%d\n:25:4401234567\n:28C:%d/1\n", stmt, stmt)
			b.WriteString(balField("60F", bal))
		}
		c, credit := genCents(i)
		mark := "D"
		if credit {
			mark = "C"
			bal += c
		} else {
			bal -= c
		}
		fmt.Fprintf(&b, ":61:2603090309%s%sNTRFpo_%012d//BR%08d\n:86:STRIPE PAYOUT po_%024d STRIPE\n", mark, mtAmountText(c), i, i, i)
		return b.String()
	})
}

// genBAI2 is n entries in one group, in accounts of perAcct entries each.
func genBAI2(n, perAcct int) io.Reader {
	bal := int64(100_000_000_00)
	var acctSum, groupSum, acctRecords, groupRecords, fileRecords, accounts int64
	acct := 0
	return newGen(n, func(i int) string {
		var b strings.Builder
		rec := func(format string, args ...any) {
			fmt.Fprintf(&b, format+"\n", args...)
			acctRecords++
			groupRecords++
			fileRecords++
		}
		if i < 0 {
			fileRecords, groupRecords = 2, 1
			return "01,RCTBUS33,ACMEGLOBAL,260310,0530,BENCH,,,2/\n02,ACMEGLOBAL,RCTBUS33,1,260309,2359,USD,2/\n"
		}
		if i > 0 && (i%perAcct == 0 || i == n) {
			rec("49,%d,%d/", acctSum, acctRecords+1)
			groupSum += acctSum
			accounts++
		}
		if i == n {
			groupRecords++
			fileRecords += 2
			fmt.Fprintf(&b, "98,%d,%d,%d/\n99,%d,1,%d/\n", groupSum, accounts, groupRecords, groupSum, fileRecords)
			return b.String()
		}
		if i%perAcct == 0 {
			acct++
			closing := bal
			for j := i; j < min(i+perAcct, n); j++ {
				c, credit := genCents(j)
				if credit {
					closing += c
				} else {
					closing -= c
				}
			}
			acctSum, acctRecords = bal+closing, 0
			rec("03,%010d,USD,010,%d,,,015,%d,,/", acct, bal, closing)
		}
		c, credit := genCents(i)
		code := "475"
		if credit {
			code = "165"
			bal += c
		} else {
			bal -= c
		}
		acctSum += c
		rec("16,%s,%d,0,BR%08d,po_%012d,STRIPE PAYOUT po_%024d STRIPE", code, c, i, i, i)
		return b.String()
	})
}

var generators = []struct {
	name  string
	gen   func(n int) io.Reader
	parse parseFunc
}{
	{"camt053", genCamt, ParseCamt},
	{"mt940", func(n int) io.Reader { return genMT940(n, 1000) }, ParseMT940},
	{"bai2", func(n int) io.Reader { return genBAI2(n, 1000) }, ParseBAI2},
}

// TestGeneratedFilesAddUp: the generated files read without a rejection,
// every entry counted, every statement balanced.
func TestGeneratedFilesAddUp(t *testing.T) {
	t.Parallel()
	for _, g := range generators {
		data, err := io.ReadAll(g.gen(2500))
		if err != nil {
			t.Fatal(err)
		}
		p := mustRun(t, g.parse, data, g.name, Options{})
		if len(p.entries) != 2500 {
			t.Errorf("%s: %d entries", g.name, len(p.entries))
		}
		checkProperties(t, p)
	}
}

// TestStreamingMemory: reading a file of many entries (100,000 MT940 or
// BAI2 entries, 30,000 camt ones, which are slower to read), generated as
// it is read, holds no more live memory at its end than near its start: the
// parsers keep one entry (and one statement's header), never the file.
func TestStreamingMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 230,000 generated entries")
	}
	for _, g := range generators {
		n := 100_000
		if g.name == "camt053" {
			n = 30_000
		}
		var (
			samples []uint64
			ms      runtime.MemStats
			count   int
		)
		h := Handler{Entry: func(*Statement, *Entry) error {
			if count++; count%(n/10) == 0 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				samples = append(samples, ms.HeapAlloc)
			}
			return nil
		}}
		if err := g.parse(g.gen(n), g.name, Options{}, h); err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		if len(samples) < 5 {
			t.Fatalf("%s: %d samples", g.name, len(samples))
		}
		lo, hi := samples[0], samples[0]
		for _, s := range samples {
			lo, hi = min(lo, s), max(hi, s)
		}
		t.Logf("%s: live heap between %d and %d KiB over %d entries", g.name, lo>>10, hi>>10, n)
		if hi-lo > 2<<20 {
			t.Errorf("%s: live heap grew by %d KiB while reading: the file is being held", g.name, (hi-lo)>>10)
		}
	}
}

func benchmarkParse(b *testing.B, gen func(n int) io.Reader, parse parseFunc) {
	const n = 100_000
	data, err := io.ReadAll(gen(n))
	if err != nil {
		b.Fatal(err)
	}
	entries := 0
	h := Handler{Entry: func(*Statement, *Entry) error { entries++; return nil }}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		entries = 0
		if err := parse(bytes.NewReader(data), "bench", Options{}, h); err != nil {
			b.Fatal(err)
		}
		if entries != n {
			b.Fatalf("%d entries", entries)
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "entries/s")
}

// BenchmarkParseCamt053 reads a generated camt.053.001.08 statement of
// 100,000 entries (about 50 MB).
func BenchmarkParseCamt053(b *testing.B) { benchmarkParse(b, genCamt, ParseCamt) }

// BenchmarkParseMT940 reads 100,000 generated :61:/:86: entries in
// statements of 1,000.
func BenchmarkParseMT940(b *testing.B) {
	benchmarkParse(b, func(n int) io.Reader { return genMT940(n, 1000) }, ParseMT940)
}

// BenchmarkParseBAI2 reads 100,000 generated 16 records in accounts of
// 1,000.
func BenchmarkParseBAI2(b *testing.B) {
	benchmarkParse(b, func(n int) io.Reader { return genBAI2(n, 1000) }, ParseBAI2)
}
