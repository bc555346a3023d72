package bankaccount_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/bank"
	"github.com/reconcilehq/reconcile/providers/bankaccount"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var now = time.Date(2026, 3, 16, 6, 0, 0, 0, time.UTC)

func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	z, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// mpesaAccount is the KES account M-Pesa settles paybill 600638 into.
func mpesaAccount(t testing.TB, format string) *bankaccount.Account {
	return &bankaccount.Account{Name: "equity-kes", Number: "0100012345678", Currency: "KES", Zone: zone(t, "Africa/Nairobi"),
		Format: format, Clock: func() time.Time { return now },
		Sources: []bankaccount.Source{{Provider: "mpesa", ShortCode: "600638", Narrative: regexp.MustCompile(`(?i)MPESA|M-PESA`)}}}
}

// stripeAccount is the USD account Stripe pays out to.
func stripeAccount(t testing.TB, format string) *bankaccount.Account {
	return &bankaccount.Account{Name: "chase-usd", Number: "4401234567", Currency: "USD", Zone: zone(t, "America/New_York"),
		Format: format, Clock: func() time.Time { return now },
		Sources: []bankaccount.Source{{Provider: "stripe", Descriptor: regexp.MustCompile(`(?i)STRIPE`), PayoutDays: 2}}}
}

type parsed struct {
	sightings []providers.Sighting
	rejects   []*ledger.ParseError
}

func parse(t testing.TB, a *bankaccount.Account, data []byte, file string) (parsed, error) {
	t.Helper()
	var p parsed
	err := a.ParseStatement(bytes.NewReader(data), file, func(s providers.Sighting) error {
		p.sightings = append(p.sightings, s)
		return nil
	}, func(perr *ledger.ParseError, _ []byte) error {
		p.rejects = append(p.rejects, perr)
		return nil
	})
	return p, err
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "bank", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// render is what a person reads of the sightings: one transaction and its
// entry per block.
func (p parsed) render() string {
	var b strings.Builder
	for _, s := range p.sightings {
		t, e := s.Txn, s.Bank
		fmt.Fprintf(&b, "%s %s %s %s %s at %s\n", t.Provider, t.ID, t.Type, t.Status, t.Amount, t.OccurredAt.Format(time.RFC3339))
		fmt.Fprintf(&b, "  reference %q provider_ref %q counterparty %q category %s source %s/%s\n", t.Reference, t.ProviderRef,
			t.Counterparty, s.Category, s.Source.Channel, s.Source.Ref)
		fmt.Fprintf(&b, "  entry %q #%d booked %s value %s reversal %v bank_ref %q e2e %q code %q\n", e.Statement, e.Index,
			e.BookingDate.Format("2006-01-02"), dayText(e.ValueDate), e.Reversal, e.BankRef, e.EndToEndID, e.Code)
		if e.Text != "" || e.Info != "" {
			fmt.Fprintf(&b, "  text %q info %q\n", e.Text, e.Info)
		}
		for _, w := range s.Warnings {
			fmt.Fprintf(&b, "  warning: %s\n", w)
		}
	}
	for _, r := range p.rejects {
		fmt.Fprintf(&b, "rejected: %v\n", r)
	}
	return b.String()
}

func dayText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format("2006-01-02")
}

// TestStatementsGolden reads the example week of each account in each of
// its formats into provider transactions of the account, and compares them
// with testdata/<case>.golden.
func TestStatementsGolden(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file    string
		account func(testing.TB, string) *bankaccount.Account
		format  string
	}{
		{"camt053_v02_kes_mpesa.xml", mpesaAccount, bankaccount.FormatCamt053},
		{"mt940_kes_mpesa.sta", mpesaAccount, bankaccount.FormatMT940},
		{"camt053_v08_usd_stripe.xml", stripeAccount, bankaccount.FormatCamt053},
		{"bai2_usd_stripe.bai", stripeAccount, bankaccount.FormatBAI2},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			p, err := parse(t, c.account(t, c.format), fixture(t, c.file), c.file)
			if err != nil || len(p.rejects) > 0 {
				t.Fatalf("%v %v", err, p.rejects)
			}
			for _, s := range p.sightings {
				if err := ledger.ValidateTxn(s.Txn); err != nil {
					t.Errorf("%s: %v", s.Txn.ID, err)
				}
				if strings.Contains(s.Txn.ID, "/") || len(s.Source.Raw) == 0 || s.Bank == nil || s.Bank.TxnID != s.Txn.ID {
					t.Errorf("%s: id, raw or entry: %+v", s.Txn.ID, s)
				}
			}
			golden.Assert(t, filepath.Join("testdata", strings.TrimSuffix(c.file, filepath.Ext(c.file))+".golden"), p.render())
		})
	}
}

// TestSameEntriesInTwoFormats: the same week of one account read from two
// formats gives the same amounts, directions, days and bank references.
func TestSameEntriesInTwoFormats(t *testing.T) {
	t.Parallel()
	key := func(s providers.Sighting) string {
		return fmt.Sprintf("%s %s %s %s", s.Txn.Type, s.Txn.Amount, s.Bank.BookingDate.Format("2006-01-02"), s.Bank.BankRef)
	}
	for _, c := range [][2]string{{"camt053_v02_kes_mpesa.xml", "mt940_kes_mpesa.sta"}, {"camt053_v08_usd_stripe.xml", "bai2_usd_stripe.bai"}} {
		acc := mpesaAccount
		formats := []string{bankaccount.FormatCamt053, bankaccount.FormatMT940}
		if strings.Contains(c[0], "usd") {
			acc, formats = stripeAccount, []string{bankaccount.FormatCamt053, bankaccount.FormatBAI2}
		}
		var keys [2][]string
		for i := range 2 {
			p, err := parse(t, acc(t, formats[i]), fixture(t, c[i]), c[i])
			if err != nil || len(p.rejects) > 0 {
				t.Fatal(err, p.rejects)
			}
			for _, s := range p.sightings {
				if s.Txn.Status == ledger.TxnSucceeded { // MT940 and BAI2 carry booked entries only
					keys[i] = append(keys[i], key(s))
				}
			}
		}
		if strings.Join(keys[0], "\n") != strings.Join(keys[1], "\n") {
			t.Errorf("%s and %s differ:\n%s", c[0], c[1], golden.Diff(strings.Join(keys[0], "\n"), strings.Join(keys[1], "\n")))
		}
	}
}

// TestRefusals: a statement of another account or currency is refused on
// its first line, its entries left out; a statement that does not add up
// is refused with the balance error naming the file, the statement and the
// difference; a file of another format than the account's is refused.
func TestRefusals(t *testing.T) {
	t.Parallel()
	t.Run("another account", func(t *testing.T) {
		a := mpesaAccount(t, bankaccount.FormatMT940)
		a.Number = "0100099999999"
		p, err := parse(t, a, fixture(t, "mt940_kes_mpesa.sta"), "x.sta")
		if err != nil || len(p.sightings) != 0 || len(p.rejects) != 6 {
			t.Fatalf("%v: %d sightings, rejects %v", err, len(p.sightings), p.rejects)
		}
		r := p.rejects[0]
		if r.Field != "account" || r.Line != 2 || !strings.Contains(r.Error(), "statement STMT260309 #68/1 is of account 0100012345678, not bank:equity-kes's account 0100099999999") {
			t.Errorf("reject = %v (line %d)", r, r.Line)
		}
	})
	t.Run("another currency", func(t *testing.T) {
		a := stripeAccount(t, bankaccount.FormatBAI2)
		a.Currency = "EUR"
		p, err := parse(t, a, fixture(t, "bai2_usd_stripe.bai"), "x.bai")
		if err != nil || len(p.sightings) != 0 || len(p.rejects) == 0 || p.rejects[0].Field != "currency" {
			t.Fatalf("%v: %d sightings, rejects %v", err, len(p.sightings), p.rejects)
		}
	})
	t.Run("does not add up", func(t *testing.T) {
		const file = "camt053_v02_kes_unbalanced.xml"
		p, err := parse(t, mpesaAccount(t, bankaccount.FormatCamt053), fixture(t, file), file)
		if err != nil || len(p.rejects) != 1 {
			t.Fatalf("%v %v", err, p.rejects)
		}
		var be *bank.BalanceError
		if !errors.As(p.rejects[0], &be) || be.Difference.String() != "KES 100.00" {
			t.Fatalf("reject %v", p.rejects[0])
		}
		for _, want := range []string{file, "0100012345678-2026-W11", "difference KES +100.00"} {
			if !strings.Contains(p.rejects[0].Error(), want) {
				t.Errorf("%q does not say %q", p.rejects[0].Error(), want)
			}
		}
	})
	t.Run("another format", func(t *testing.T) {
		_, err := parse(t, mpesaAccount(t, bankaccount.FormatMT940), fixture(t, "camt053_v02_kes_mpesa.xml"), "x.xml")
		var perr *ledger.ParseError
		if !errors.As(err, &perr) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestRecognise: a credit is its source's when every pattern of the source
// matches; the payout references it carries are found by the source's
// pattern (Stripe payout ids, M-Pesa receipts with a digit).
func TestRecognise(t *testing.T) {
	t.Parallel()
	a := mpesaAccount(t, bankaccount.FormatMT940)
	a.Sources = append(a.Sources, stripeAccount(t, bankaccount.FormatBAI2).Sources...)
	for _, c := range []struct {
		text, provider string
		refs           []string
	}{
		{"MPESA SETTLEMENT 600638 08/03/2026 SCF1AB2CD3", "mpesa", []string{"SCF1AB2CD3"}},
		{"Funds Transfer from M-PESA 600638 SETTLEMENT 09/03/2026", "mpesa", nil},
		{"MPESA SETTLEMENT 999999 SCF1AB2CD3", "", []string{"SCF1AB2CD3"}},
		{"po_1QxA2bCdEf STRIPE PAYOUT po_1QxA2bCdEf STRIPE", "stripe", []string{"po_1QxA2bCdEf"}},
		{"STRIPE TRANSFER", "stripe", nil},
		{"CASH DEPOSIT BRANCH 045", "", nil},
	} {
		p, refs := a.Recognise(c.text)
		if p != c.provider || strings.Join(refs, ",") != strings.Join(c.refs, ",") {
			t.Errorf("%q: %q %q, want %q %q", c.text, p, refs, c.provider, c.refs)
		}
	}
	if !a.SameAccount("", "10010010/0100012345678") || !a.SameAccount(" 0100 0123 45678 ") || a.SameAccount("01000123456789") {
		t.Error("SameAccount")
	}
}

// FuzzStatement: whatever the file, no panic; every sighting is a valid
// bank transaction of the account in its currency, with a valid entry, its
// raw bytes and an id without a slash; every rejection names its file.
func FuzzStatement(f *testing.F) {
	for _, name := range []string{"camt053_v02_kes_mpesa.xml", "mt940_kes_mpesa.sta", "camt053_v08_usd_stripe.xml",
		"bai2_usd_stripe.bai", "camt053_v02_kes_unbalanced.xml"} {
		f.Add(fixture(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, a := range []*bankaccount.Account{mpesaAccount(t, bankaccount.FormatCamt053), mpesaAccount(t, bankaccount.FormatMT940),
			stripeAccount(t, bankaccount.FormatBAI2)} {
			p, err := parse(t, a, data, "f")
			var perr *ledger.ParseError
			if err != nil && (!errors.As(err, &perr) || perr.File != "f") {
				t.Fatalf("file error %v does not name the file", err)
			}
			for _, s := range p.sightings {
				x := s.Txn
				exp, cerr := money.Exponent(x.Amount.Currency)
				switch {
				case ledger.ValidateTxn(x) != nil, cerr != nil, x.Amount.Currency != a.Currency, x.Provider != a.Provider():
					t.Fatalf("bad sighting %+v", x)
				case !x.Amount.Value.Equal(x.Amount.Value.Truncate(exp)), x.Amount.Value.IsNegative():
					t.Fatalf("amount %s", x.Amount)
				case s.Bank == nil || ledger.ValidateBankEntry(*s.Bank) != nil || len(s.Source.Raw) == 0 || strings.Contains(x.ID, "/"):
					t.Fatalf("entry %+v", s.Bank)
				}
			}
			for _, r := range p.rejects {
				if r.File != "f" {
					t.Fatalf("rejection %v does not name the file", r)
				}
			}
		}
	})
}
