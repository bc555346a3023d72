package bank

import (
	"fmt"
	"io"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// Format names a bank statement format.
type Format string

// The formats this package reads.
const (
	// FormatCamt053 is ISO 20022 BankToCustomerStatement.
	FormatCamt053 Format = "camt.053"
	// FormatCamt054 is ISO 20022 BankToCustomerDebitCreditNotification:
	// entries without balances.
	FormatCamt054 Format = "camt.054"
	// FormatMT940 is the SWIFT customer statement message.
	FormatMT940 Format = "mt940"
	// FormatBAI2 is the BAI cash management balance reporting format,
	// version 2.
	FormatBAI2 Format = "bai2"
)

// Direction says which way an entry moved money on the account.
type Direction string

// Directions. A credit adds to the account's balance, a debit takes from it.
const (
	Credit Direction = "credit"
	Debit  Direction = "debit"
)

// Status is whether the bank has booked an entry.
type Status string

// Entry statuses. Only booked entries count in a statement's balance.
const (
	// Booked entries are final and move the booked balance.
	Booked Status = "booked"
	// Pending entries are announced but not yet booked (camt PDNG).
	Pending Status = "pending"
	// Info entries are for information only and never booked (camt INFO).
	Info Status = "info"
	// Future entries will be booked on a later date (camt FUTR).
	Future Status = "future"
)

// MaxTextLen bounds an entry's remittance text and additional information,
// in bytes, after its pieces are joined. camt allows any number of
// 140-character lines; a text past this is refused with its field rather
// than cut.
const MaxTextLen = 4096

// Date is a calendar day as a bank statement writes it: no time of day and
// no zone. Booking and value dates are days in the bank's books, so they
// are kept as such; Midnight gives the instant a day starts in a zone.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf returns the calendar day of t in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{Year: y, Month: m, Day: d}
}

// IsZero reports whether d is the zero Date (no date given).
func (d Date) IsZero() bool { return d == Date{} }

// String renders d as YYYY-MM-DD, or "-" for the zero Date.
func (d Date) String() string {
	if d.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day)
}

// Midnight returns the instant d begins in loc, in UTC: the start of the
// booking day in the bank's zone.
func (d Date) Midnight(loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc).UTC()
}

// Account identifies the bank account a statement is for, or a
// counterparty's account.
type Account struct {
	// IBAN is set when the bank gives one (camt Id/IBAN, an MT940 :25:
	// that is a valid IBAN).
	IBAN string
	// Number is any other identification, as the bank writes it (camt
	// Id/Othr/Id, MT940 :25: such as "50010517/0123456789", BAI2 record 03).
	Number string
	// BIC is the account servicer's BIC when given (camt Svcr, the MT940
	// envelope's sender).
	BIC string
	// BankCode is a national bank code when given instead of a BIC (MT940
	// :86: ?30, a German Bankleitzahl).
	BankCode string
	// Name is the account's or owner's name when given.
	Name string
}

// String returns the IBAN, else the number, else "-".
func (a Account) String() string {
	switch {
	case a.IBAN != "":
		return a.IBAN
	case a.Number != "":
		return a.Number
	}
	return "-"
}

// Balance is one balance a statement reports.
type Balance struct {
	// Type is the balance's code in its format: camt OPBD, PRCD, CLBD,
	// CLAV; MT940 60F, 60M, 62F, 62M, 64; BAI2 010, 015, 045.
	Type string
	// Amount is signed: negative when the balance is a debit (the account
	// is overdrawn).
	Amount money.Amount
	Date   Date
	// Line is where the balance stands in the file.
	Line int
}

// TxCode is an entry's bank transaction code in each scheme its format
// uses. Only the fields of the entry's format are set.
type TxCode struct {
	// Domain, Family and SubFamily are the ISO 20022 code (camt
	// BkTxCd/Domn): PMNT / RCDT / ESCT.
	Domain, Family, SubFamily string
	// Proprietary and Issuer are camt BkTxCd/Prtry/Cd and Issr.
	Proprietary, Issuer string
	// SWIFT is the MT940 :61: transaction type: N, F or S and three
	// characters (NTRF, NCHG, S103).
	SWIFT string
	// GVC is the German business transaction code (Geschäftsvorfallcode)
	// that opens a structured MT940 :86:, three digits.
	GVC string
	// BAI is the BAI2 type code, three digits (165, 475).
	BAI string
}

// String renders the code as "scheme:code" pairs separated by spaces, or
// "-" when none is set.
func (c TxCode) String() string {
	var s string
	add := func(k, v string) {
		if v == "" {
			return
		}
		if s != "" {
			s += " "
		}
		s += k + ":" + v
	}
	if c.Domain != "" || c.Family != "" || c.SubFamily != "" {
		add("iso", c.Domain+"/"+c.Family+"/"+c.SubFamily)
	}
	if c.Proprietary != "" {
		p := c.Proprietary
		if c.Issuer != "" {
			p += "@" + c.Issuer
		}
		add("prtry", p)
	}
	add("swift", c.SWIFT)
	add("gvc", c.GVC)
	add("bai", c.BAI)
	if s == "" {
		return "-"
	}
	return s
}

// Party is the other side of an entry: who paid a credit, who was paid by
// a debit.
type Party struct {
	Name    string
	Account Account
}

// IsZero reports whether nothing is known of the party.
func (p Party) IsZero() bool { return p == Party{} }

// Detail is one underlying transaction of an entry (camt NtryDtls/TxDtls).
// A batched entry books several transactions as one line: the entry keeps
// the total, each detail its own references and remittance.
type Detail struct {
	// Amount is the transaction's amount when given (TxDtls/Amt or
	// AmtDtls/TxAmt); the zero Amount otherwise.
	Amount money.Amount
	// Direction is the detail's own credit/debit indicator when given.
	Direction     Direction
	EndToEndID    string
	InstructionID string
	TxID          string
	BankRef       string
	PaymentInfoID string
	// CreditorRef is the structured creditor reference
	// (RmtInf/Strd/CdtrRefInf/Ref).
	CreditorRef  string
	Counterparty Party
	// Text is the unstructured remittance (RmtInf/Ustrd), lines joined by
	// a space.
	Text string
	// Info is the additional transaction information (AddtlTxInf).
	Info string
	Code TxCode
}

// Entry is one line of a statement: an amount booked (or announced) on the
// account on a day.
type Entry struct {
	// Line is the line of the file where the entry starts (the <Ntry>
	// start tag, the :61: field, the 16 record).
	Line int
	// Index is the entry's position in its statement, from 1, counting
	// rejected entries too.
	Index int
	// Amount is never negative; Direction gives its sign.
	Amount    money.Amount
	Direction Direction
	// Reversal marks an entry that undoes an earlier one of the opposite
	// direction. Direction is still the way this entry moves money: a
	// reversed credit is a debit with Reversal set.
	Reversal bool
	Status   Status
	// BookingDate is the day the bank booked the entry. A camt entry
	// without BookgDt (a pending one) has its value date here.
	BookingDate Date
	// ValueDate is the day the money is value-dated, when given.
	ValueDate Date
	// BookedAt is the booking instant in UTC when the bank gives a time
	// (camt BookgDt/DtTm); zero otherwise.
	BookedAt time.Time
	// EntryRef is the entry's own reference in the statement (camt
	// NtryRef).
	EntryRef string
	// BankRef is the bank's reference (camt AcctSvcrRef, the MT940 :61:
	// reference after //, the BAI2 bank reference).
	BankRef string
	// CustomerRef is the account owner's reference (camt EndToEndId of a
	// single transaction, the MT940 :61: reference before // with NONREF
	// read as none, the BAI2 customer reference).
	CustomerRef string
	// CreditorRef is a structured creditor reference (camt
	// RmtInf/Strd/CdtrRefInf/Ref of a single transaction).
	CreditorRef  string
	Counterparty Party
	// Text is the remittance information: camt RmtInf/Ustrd, the MT940
	// :86: text (the ?20..?29 and ?60..?63 subfields when structured),
	// the BAI2 text with its continuations.
	Text string
	// Info is additional information: camt AddtlNtryInf, the MT940 :61:
	// supplementary details and the structured :86: posting text (?00).
	Info string
	Code TxCode
	// Details are the underlying transactions of a camt entry, in order.
	Details []Detail
	// Raw is the entry as it stands in the file (the <Ntry> element; the
	// :61: and :86: lines; the 16 and 88 records), for the quarantine. It
	// is the entry's own copy.
	Raw []byte
}

// Signed returns the amount with the entry's sign: positive for a credit,
// negative for a debit.
func (e *Entry) Signed() decimal.Decimal {
	if e.Direction == Debit {
		return e.Amount.Value.Neg()
	}
	return e.Amount.Value
}

// Totals are what a statement's entries add up to, counted as they are
// read.
type Totals struct {
	// Entries counts the entries handed to Handler.Entry.
	Entries int
	// Rejected counts the entries (and other parts of the statement)
	// handed to Handler.Reject.
	Rejected int
	// Credits and Debits are the sums of the booked entries' amounts, and
	// CreditCount and DebitCount their numbers.
	Credits, Debits         decimal.Decimal
	CreditCount, DebitCount int
	// Unbooked counts pending, info and future entries, which are in no
	// sum.
	Unbooked int
}

// Statement is one statement of an account: its header, its balances and
// the totals of its entries. It holds no entries: they are handed to the
// Handler one by one as they are read.
type Statement struct {
	File   string
	Format Format
	// Version is the message version: "001.02" for camt, "2" for BAI2,
	// empty for MT940.
	Version string
	// Line is where the statement starts in the file.
	Line int
	// MessageID identifies the message or file that carries the statement
	// (camt GrpHdr/MsgId, BAI2 file identification number).
	MessageID string
	// ID is the statement's identification (camt Stmt/Id or Ntfctn/Id,
	// MT940 :20:, BAI2 file identification number).
	ID string
	// Sequence is the statement's number (camt ElctrncSeqNb, then
	// LglSeqNb after "/" when both are given; MT940 :28C:; BAI2 the group
	// and account ordinals, "2/1").
	Sequence string
	// Created is when the bank made the statement, in UTC; zero when not
	// given.
	Created time.Time
	// From and To are the days the statement covers, when known (camt
	// FrToDt; the MT940 opening and closing balance dates; the BAI2 as-of
	// date).
	From, To Date
	Account  Account
	Currency string
	// Opening, Closing and Available are the opening booked, closing
	// booked and closing available balances; nil when not given.
	Opening, Closing, Available *Balance
	// Info is statement-level text (camt AddtlStmtInf, an MT940 :86:
	// outside any entry).
	Info string
	// Zone is the bank's zone the statement was read in.
	Zone   *time.Location
	Totals Totals
}

// Name identifies the statement in messages: its id and sequence.
func (s *Statement) Name() string {
	n := s.ID
	if n == "" {
		n = "-"
	}
	if s.Sequence != "" {
		n += " #" + s.Sequence
	}
	return n
}

// Handler receives what a parser reads. Any func may be nil: a nil Entry or
// End ignores what it would get, a nil Reject stops the parse at the first
// problem by returning it. An error a func returns stops the parse and is
// returned as it is.
type Handler struct {
	// Entry is called for each good entry, in file order, with the
	// statement it belongs to as read so far (an MT940 closing balance
	// comes after the entries). The Entry and Statement may be reused
	// after the call returns; Entry.Raw is the entry's own.
	Entry func(st *Statement, e *Entry) error
	// End is called after a statement's last entry, with its balances and
	// totals. The parser has checked the balance by then: a statement
	// that does not add up has been rejected.
	End func(st *Statement) error
	// Reject is called for each bad entry or other bad part of a file,
	// with the raw bytes it was read from, and the parser goes on to the
	// next entry where the format allows. A statement that does not add
	// up, and a BAI2 control total or record count that does not match,
	// are rejected too, with a *BalanceError or *ControlError inside the
	// ParseError.
	Reject func(perr *ledger.ParseError, raw []byte) error
}

func (h *Handler) entry(st *Statement, e *Entry) error {
	if h.Entry == nil {
		return nil
	}
	return h.Entry(st, e)
}

func (h *Handler) end(st *Statement) error {
	if h.End == nil {
		return nil
	}
	return h.End(st)
}

func (h *Handler) reject(perr *ledger.ParseError, raw []byte) error {
	if h.Reject == nil {
		return perr
	}
	return h.Reject(perr, raw)
}

// Charset is the character set of a text format's file (MT940, BAI2).
type Charset int

// Charsets. camt is XML and says its own encoding; only UTF-8 is read.
const (
	// UTF8 refuses a file that is not valid UTF-8. It is the default.
	UTF8 Charset = iota
	// Latin1 reads every byte as the ISO 8859-1 character of that code,
	// as many banks still write MT940.
	Latin1
)

// Options configure a parser. The zero Options read in UTC, UTF-8, with no
// custom BAI2 type codes.
type Options struct {
	// Zone is the bank's zone: a date-time without an offset is read in
	// it, and the booking day of an entry given as a date-time is its
	// calendar day in it. Nil means UTC.
	Zone *time.Location
	// Charset is the character set of MT940 and BAI2 files.
	Charset Charset
	// BAI2Directions gives the direction of BAI2 type codes the standard
	// leaves open: loan codes 700-799 and the bank's own 900-999, keyed
	// by the three digits ("901"). A detail with such a code that is not
	// listed is rejected.
	BAI2Directions map[string]Direction
}

func (o *Options) zone() *time.Location {
	if o.Zone == nil {
		return time.UTC
	}
	return o.Zone
}

// Parse reads a statement file in the format Sniff finds in its first
// bytes.
func Parse(r io.Reader, file string, opt Options, h Handler) error {
	br := newBufReader(r)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF && len(head) == 0 {
		return fmt.Errorf("bank: read %s: %w", file, err)
	}
	f, serr := Sniff(head)
	if serr != nil {
		return &ledger.ParseError{File: file, Line: 1, Field: "format", Err: serr}
	}
	switch f {
	case FormatCamt053, FormatCamt054:
		return ParseCamt(br, file, opt, h)
	case FormatMT940:
		return ParseMT940(br, file, opt, h)
	default:
		return ParseBAI2(br, file, opt, h)
	}
}
