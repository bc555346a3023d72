package bank

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones do not depend on the machine

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/ledger"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type parseFunc func(io.Reader, string, Options, Handler) error

func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// parsed is everything a parse handed to its Handler, in order.
type parsed struct {
	stmts   []Statement
	entries []Entry
	// stmtOf is the index in stmts of each entry's statement.
	stmtOf  []int
	rejects []*ledger.ParseError
	raws    [][]byte
	// events is the order of the calls: 'e'ntry, 'r'eject, 's'tatement end.
	events []byte
}

func (p *parsed) handler() Handler {
	return Handler{
		Entry: func(st *Statement, e *Entry) error {
			p.entries = append(p.entries, *e)
			p.stmtOf = append(p.stmtOf, len(p.stmts))
			p.events = append(p.events, 'e')
			return nil
		},
		End: func(st *Statement) error {
			p.stmts = append(p.stmts, *st)
			p.events = append(p.events, 's')
			return nil
		},
		Reject: func(perr *ledger.ParseError, raw []byte) error {
			p.rejects = append(p.rejects, perr)
			p.raws = append(p.raws, bytes.Clone(raw))
			p.events = append(p.events, 'r')
			return nil
		},
	}
}

func run(t testing.TB, parse parseFunc, data []byte, file string, opt Options) (*parsed, error) {
	t.Helper()
	p := &parsed{}
	err := parse(bytes.NewReader(data), file, opt, p.handler())
	return p, err
}

// mustRun parses data and fails the test on a file error or a rejection.
func mustRun(t testing.TB, parse parseFunc, data []byte, file string, opt Options) *parsed {
	t.Helper()
	p, err := run(t, parse, data, file, opt)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, r := range p.rejects {
		t.Errorf("%s: rejected: %v", file, r)
	}
	return p
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// render writes what a parse produced in a stable, readable form: each
// statement's header, its entries and rejections in file order, then its
// balances and totals.
func (p *parsed) render(fileErr error) string {
	var b, pending strings.Builder
	ei, ri, si := 0, 0, 0
	for _, ev := range p.events {
		switch ev {
		case 'e':
			renderEntry(&pending, &p.entries[ei])
			ei++
		case 'r':
			fmt.Fprintf(&pending, "  reject %s\n", p.rejects[ri])
			if len(p.raws[ri]) > 0 {
				fmt.Fprintf(&pending, "    raw %q\n", clipRaw(p.raws[ri]))
			}
			ri++
		case 's':
			st := &p.stmts[si]
			si++
			renderHeader(&b, st)
			b.WriteString(pending.String())
			pending.Reset()
			renderEnd(&b, st)
		}
	}
	if pending.Len() > 0 {
		b.WriteString("outside any statement\n")
		b.WriteString(pending.String())
	}
	if fileErr != nil {
		fmt.Fprintf(&b, "error %v\n", fileErr)
	}
	return b.String()
}

func clipRaw(raw []byte) string {
	const max = 160
	if len(raw) <= max {
		return string(raw)
	}
	return string(raw[:max]) + "…"
}

func renderHeader(b *strings.Builder, st *Statement) {
	format := string(st.Format)
	if st.Version != "" {
		format += " " + st.Version
	}
	fmt.Fprintf(b, "statement %s (%s, line %d)\n", st.Name(), format, st.Line)
	if st.MessageID != "" {
		fmt.Fprintf(b, "  message  %s\n", st.MessageID)
	}
	if !st.Created.IsZero() {
		fmt.Fprintf(b, "  created  %s\n", st.Created.Format(time.RFC3339))
	}
	fmt.Fprintf(b, "  period   %s .. %s (zone %s)\n", st.From, st.To, st.Zone)
	fmt.Fprintf(b, "  account  %s\n", renderAccount(st.Account))
	fmt.Fprintf(b, "  currency %s\n", st.Currency)
	renderBalance(b, "opening", st.Opening)
	if st.Info != "" {
		fmt.Fprintf(b, "  info     %q\n", st.Info)
	}
}

func renderBalance(b *strings.Builder, name string, bal *Balance) {
	if bal == nil {
		fmt.Fprintf(b, "  %-8s -\n", name)
		return
	}
	fmt.Fprintf(b, "  %-8s %s %s %s (line %d)\n", name, bal.Type, bal.Date, bal.Amount, bal.Line)
}

func renderEnd(b *strings.Builder, st *Statement) {
	renderBalance(b, "closing", st.Closing)
	renderBalance(b, "avail", st.Available)
	t := st.Totals
	fmt.Fprintf(b, "  totals   %d entries, %d credits %s, %d debits %s, %d unbooked, %d rejected\n",
		t.Entries, t.CreditCount, t.Credits.StringFixed(2), t.DebitCount, t.Debits.StringFixed(2), t.Unbooked, t.Rejected)
	check := "adds up"
	if err := CheckBalance(st); err != nil {
		check = err.Error()
	}
	fmt.Fprintf(b, "  balance  %s\n", check)
}

func renderAccount(a Account) string {
	var parts []string
	for _, f := range []struct{ k, v string }{{"iban", a.IBAN}, {"number", a.Number}, {"bic", a.BIC},
		{"bank", a.BankCode}, {"name", a.Name}} {
		if f.v != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", f.k, f.v))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func renderEntry(b *strings.Builder, e *Entry) {
	rev := ""
	if e.Reversal {
		rev = " reversal"
	}
	fmt.Fprintf(b, "  entry %d line %d: %s%s %s %s booked %s value %s", e.Index, e.Line, e.Direction, rev, e.Status,
		e.Amount, e.BookingDate, e.ValueDate)
	if !e.BookedAt.IsZero() {
		fmt.Fprintf(b, " at %s", e.BookedAt.Format(time.RFC3339))
	}
	b.WriteByte('\n')
	var refs []string
	for _, f := range []struct{ k, v string }{{"entry", e.EntryRef}, {"bank", e.BankRef}, {"customer", e.CustomerRef},
		{"creditor", e.CreditorRef}} {
		if f.v != "" {
			refs = append(refs, f.k+"="+f.v)
		}
	}
	if len(refs) > 0 {
		fmt.Fprintf(b, "    refs   %s\n", strings.Join(refs, " "))
	}
	fmt.Fprintf(b, "    code   %s\n", e.Code)
	if !e.Counterparty.IsZero() {
		fmt.Fprintf(b, "    party  %q %s\n", e.Counterparty.Name, renderAccount(e.Counterparty.Account))
	}
	if e.Text != "" {
		fmt.Fprintf(b, "    text   %q\n", e.Text)
	}
	if e.Info != "" {
		fmt.Fprintf(b, "    info   %q\n", e.Info)
	}
	for i, d := range e.Details {
		fmt.Fprintf(b, "    detail %d: %s %s e2e=%s", i+1, d.Direction, d.Amount, d.EndToEndID)
		if d.PaymentInfoID != "" {
			fmt.Fprintf(b, " pmtinf=%s", d.PaymentInfoID)
		}
		if d.BankRef != "" {
			fmt.Fprintf(b, " bank=%s", d.BankRef)
		}
		fmt.Fprintf(b, " party=%q %s", d.Counterparty.Name, renderAccount(d.Counterparty.Account))
		if d.Text != "" {
			fmt.Fprintf(b, " text=%q", d.Text)
		}
		b.WriteByte('\n')
	}
}
