package bankaccount

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/bank"
)

// ChannelStatement is the source channel of bank statement entries. Each
// sighting's ref is "statement:" and the entry's id, so importing the same
// statement again adds nothing.
const ChannelStatement = "statement"

// Categories an import summary counts entries under.
const (
	CategoryCredit  = "credit"
	CategoryDebit   = "debit"
	CategoryPending = "pending"
)

var _ providers.StatementParser = (*Account)(nil)

// ParseStatement reads a statement of the account in its format, checks
// that each statement is of the account and in its currency, and emits
// each entry as a provider transaction of bank:<Name>: a bank_credit or a
// bank_debit (its amount a magnitude), succeeded when booked and pending
// when announced, with the entry's details (Sighting.Bank) and the raw
// entry as its source.
//
// A statement of another account or currency is rejected as a whole (its
// first line, field "account" or "currency"), and so is one that does not
// add up (providers/bank rejects it with a *bank.BalanceError): the import
// then takes nothing of the file. Information-only entries and entries of
// a zero amount move no money and are not stored; the import says so.
//
// The transaction id is the bank's reference, the statement's id and
// sequence and the entry's position (FT26068ABC01@STMT260309#68-1.1), so
// the same entry read again is the same transaction.
func (a *Account) ParseStatement(r io.Reader, file string, emit func(providers.Sighting) error,
	reject func(*ledger.ParseError, []byte) error) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if a.Layout != nil {
		return a.parseLayout(r, file, emit, reject)
	}
	clock := a.Clock
	if clock == nil {
		clock = time.Now
	}
	p := &parse{a: a, file: file, emit: emit, reject: reject, at: clock().UTC()}
	opt := bank.Options{Zone: a.Location()}
	h := bank.Handler{Entry: p.entry, End: p.end, Reject: p.rejectLine}
	var err error
	switch a.Format {
	case FormatCamt053:
		err = bank.ParseCamt(r, file, opt, h)
	case FormatMT940:
		err = bank.ParseMT940(r, file, opt, h)
	default:
		err = bank.ParseBAI2(r, file, opt, h)
	}
	if err != nil {
		return err
	}
	return p.flush()
}

// parse is the state of one file.
type parse struct {
	a      *Account
	file   string
	emit   func(providers.Sighting) error
	reject func(*ledger.ParseError, []byte) error
	at     time.Time
	// stmt is the line the current statement starts at, checked once;
	// refused says it is not of the account and its entries are skipped.
	stmt     int
	checked  bool
	refused  bool
	held     *providers.Sighting
	warnings []string
}

func (p *parse) rejectLine(perr *ledger.ParseError, raw []byte) error { return p.reject(perr, raw) }

// check refuses a statement of another account or currency, once per
// statement.
func (p *parse) check(st *bank.Statement) error {
	if st.Line != p.stmt || !p.checked {
		p.stmt, p.checked, p.refused = st.Line, true, false
	} else {
		return nil
	}
	switch {
	case !p.a.SameAccount(st.Account.IBAN, st.Account.Number):
		p.refused = true
		return p.reject(&ledger.ParseError{File: p.file, Line: st.Line, Field: "account",
			Err: fmt.Errorf("statement %s is of account %s, not %s's account %s", st.Name(), st.Account.String(),
				p.a.Provider(), p.a.Number)}, nil)
	case st.Currency != "" && st.Currency != p.a.Currency:
		p.refused = true
		return p.reject(&ledger.ParseError{File: p.file, Line: st.Line, Field: "currency",
			Err: fmt.Errorf("statement %s is in %s, %s's account is in %s", st.Name(), st.Currency, p.a.Provider(),
				p.a.Currency)}, nil)
	}
	return nil
}

func (p *parse) end(st *bank.Statement) error { return p.check(st) }

func (p *parse) entry(st *bank.Statement, e *bank.Entry) error {
	if err := p.check(st); err != nil {
		return err
	}
	if p.refused {
		return nil
	}
	switch {
	case e.Status == bank.Info:
		p.warnings = append(p.warnings, fmt.Sprintf("line %d: an information-only entry (%s %s) moves no money and is not stored",
			e.Line, e.Amount.Currency, e.Amount.Text()))
		return nil
	case e.Amount.Value.IsZero():
		p.warnings = append(p.warnings, fmt.Sprintf("line %d: an entry of zero moves no money and is not stored", e.Line))
		return nil
	}
	s, perr := p.a.sighting(st, e, p.file, p.at)
	if perr != nil {
		return p.reject(perr, e.Raw)
	}
	return p.hold(s)
}

// hold emits the sighting held before s and holds s, so that the warnings
// of entries that are not stored go with the sighting before them.
func (p *parse) hold(s providers.Sighting) error {
	if err := p.flush(); err != nil {
		return err
	}
	p.held = &s
	return nil
}

func (p *parse) flush() error {
	if p.held == nil {
		return nil
	}
	s := *p.held
	p.held = nil
	if len(p.warnings) > 0 {
		s.Warnings = append(s.Warnings, p.warnings...)
		p.warnings = nil
	}
	return p.emit(s)
}

// EntryID is the transaction id of an entry: the bank's reference, the
// statement's id and sequence, and the entry's position, with no slash (a
// slash marks the payout references of findings).
func EntryID(st *bank.Statement, e *bank.Entry) string {
	var b strings.Builder
	if e.BankRef != "" {
		b.WriteString(e.BankRef)
		b.WriteByte('@')
	}
	id := st.ID
	if id == "" {
		id = "-"
	}
	b.WriteString(id)
	if st.Sequence != "" {
		b.WriteByte('#')
		b.WriteString(st.Sequence)
	}
	b.WriteByte('.')
	b.WriteString(strconv.Itoa(e.Index))
	return strings.ReplaceAll(b.String(), "/", "-")
}

// entryText is what an entry says, for recognising its source and its
// references: the payer's references, the counterparty and the texts.
func entryText(e *bank.Entry) string {
	parts := []string{e.CustomerRef, e.CreditorRef, e.EntryRef, e.Counterparty.Name, e.Text, e.Info}
	for _, d := range e.Details {
		parts = append(parts, d.EndToEndID, d.CreditorRef)
	}
	var b strings.Builder
	for _, s := range parts {
		if s = strings.TrimSpace(s); s != "" {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

func (a *Account) sighting(st *bank.Statement, e *bank.Entry, file string, at time.Time) (providers.Sighting, *ledger.ParseError) {
	id := EntryID(st, e)
	typ, cat := ledger.TxnBankCredit, CategoryCredit
	if e.Direction == bank.Debit {
		typ, cat = ledger.TxnBankDebit, CategoryDebit
	}
	status := ledger.TxnSucceeded
	if e.Status != bank.Booked {
		status, cat = ledger.TxnPending, CategoryPending
	}
	when := e.BookedAt
	if when.IsZero() {
		when = e.BookingDate.Midnight(a.Location())
	}
	text := entryText(e)
	_, refs := a.Recognise(text)
	ref := e.CustomerRef
	if len(refs) > 0 {
		ref = refs[0]
	} else if ref == "" {
		ref = e.CreditorRef
	}
	party := e.Counterparty.Name
	if acct := e.Counterparty.Account.String(); acct != "-" {
		party = strings.TrimSpace(party + " " + acct)
	}
	party = ledger.MaskPayload([]byte(party))
	t := ledger.ProviderTxn{Provider: a.Provider(), ID: id, Type: typ, Status: status, Amount: e.Amount, OccurredAt: when,
		Reference: clipTo(ref, ledger.MaxIDLen), ProviderRef: clipTo(e.CustomerRef, ledger.MaxIDLen),
		Counterparty: clipTo(party, ledger.MaxIDLen)}
	be := &ledger.BankEntry{Provider: t.Provider, TxnID: id, Statement: clipTo(st.Name(), ledger.MaxIDLen), Index: e.Index,
		BookingDate: day(e.BookingDate), ValueDate: day(e.ValueDate), Reversal: e.Reversal, BankRef: e.BankRef,
		EndToEndID: e.CustomerRef, Counterparty: t.Counterparty, Text: e.Text, Info: e.Info, Code: codeText(e.Code)}
	if perr := fieldCheck(file, e.Line, ledger.ValidateTxn(t)); perr != nil {
		return providers.Sighting{}, perr
	}
	if perr := fieldCheck(file, e.Line, ledger.ValidateBankEntry(*be)); perr != nil {
		return providers.Sighting{}, perr
	}
	return providers.Sighting{Txn: t, Source: ledger.Source{Channel: ChannelStatement, Ref: "statement:" + id, Raw: e.Raw,
		ReceivedAt: at}, Category: cat, Bank: be}, nil
}

func codeText(c bank.TxCode) string {
	if s := c.String(); s != "-" {
		return s
	}
	return ""
}

// day is a bank day as the books keep it: midnight UTC of that day.
func day(d bank.Date) time.Time {
	if d.IsZero() {
		return time.Time{}
	}
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
}

// clipTo cuts s to at most max bytes, on a character boundary: a
// reference read from a longer text is evidence enough cut (the whole
// text is kept in the entry and its raw source).
func clipTo(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut]
}

func fieldCheck(file string, line int, err error) *ledger.ParseError {
	if err == nil {
		return nil
	}
	perr := &ledger.ParseError{File: file, Line: line, Err: err}
	var fe *ledger.FieldError
	if errors.As(err, &fe) {
		perr.Field, perr.Err = fe.Field, fe.Err
	}
	return perr
}

// parseLayout reads a statement of a CSV layout: money in is a credit, any
// other row a debit, in the account's currency. A CSV layout names no
// account and carries no balances: neither is checked.
func (a *Account) parseLayout(r io.Reader, file string, emit func(providers.Sighting) error,
	reject func(*ledger.ParseError, []byte) error) error {
	return a.Layout.ParseStatement(r, file, func(s providers.Sighting) error {
		t := s.Txn
		if t.Amount.Currency != a.Currency {
			return reject(&ledger.ParseError{File: file, Field: "currency",
				Err: fmt.Errorf("transaction %s is in %s, %s's account is in %s", t.ID, t.Amount.Currency, a.Provider(), a.Currency)},
				s.Source.Raw)
		}
		t.Provider = a.Provider()
		cat := CategoryCredit
		t.Type = ledger.TxnBankCredit
		if s.Txn.Type != ledger.TxnCharge {
			t.Type, cat = ledger.TxnBankDebit, CategoryDebit
		}
		if t.Status == ledger.TxnPending {
			cat = CategoryPending
		}
		text := t.Reference
		_, refs := a.Recognise(text)
		if len(refs) > 0 {
			t.Reference = refs[0]
		}
		local := t.OccurredAt.In(a.Location())
		be := &ledger.BankEntry{Provider: t.Provider, TxnID: t.ID, BookingDate: day(bank.DateOf(local)), Counterparty: t.Counterparty,
			Text: text}
		if err := ledger.ValidateBankEntry(*be); err != nil {
			return reject(fieldCheck(file, 0, err), s.Source.Raw)
		}
		s.Txn, s.Bank, s.Category = t, be, cat
		return emit(s)
	}, reject)
}

// Signed returns a bank transaction's amount signed: positive for a credit,
// negative for a debit.
func Signed(t ledger.ProviderTxn) money.Amount {
	if t.Type == ledger.TxnBankDebit {
		return money.Amount{Value: t.Amount.Value.Neg(), Currency: t.Amount.Currency}
	}
	return t.Amount
}
