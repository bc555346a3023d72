package csvfile

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
)

// ChannelStatement is the source channel of statement rows. Each sighting's
// ref is the row's transaction id, so importing the same rows again, from
// the same file or another export, adds nothing.
const ChannelStatement = "statement"

// Parser reads statements in one mapped layout. It implements
// providers.StatementParser.
type Parser struct {
	c     *compiled
	clock func() time.Time
}

var _ providers.StatementParser = (*Parser)(nil)

// NewParser checks m and returns a parser for it. clock stamps sightings
// with their receipt time; nil means time.Now.
func NewParser(m Mapping, clock func() time.Time) (*Parser, error) {
	c, err := m.compile()
	if err != nil {
		return nil, err
	}
	if clock == nil {
		clock = time.Now
	}
	return &Parser{c: c, clock: clock}, nil
}

// Provider returns the provider name the mapping stores.
func (p *Parser) Provider() string { return p.c.m.Provider }

// columns holds the header index of each mapped column, -1 when unmapped.
type columns struct {
	id, time, amount, debit, credit, currency, status, typ, reference, counterparty int
}

// ParseStatement reads r, emitting one sighting per good row and rejecting
// each bad row with a *ledger.ParseError naming the file, line and column.
// A header that lacks a mapped column is an error for the whole file
// (field "mapping.<name>"), and nothing is emitted.
func (p *Parser) ParseStatement(r io.Reader, file string, emit func(providers.Sighting) error,
	reject func(*ledger.ParseError, []byte) error) error {
	cr, err := NewReader(r, file, p.c.comma)
	if err != nil {
		return err
	}
	cols, err := p.columns(cr, file)
	if err != nil {
		return err
	}
	now := p.clock().UTC()
	seen := map[string]seenRow{}
	for {
		rec, err := cr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var perr *ledger.ParseError
		if err == nil {
			var txn ledger.ProviderTxn
			txn, perr = p.row(cols, rec, file)
			if perr == nil {
				perr = checkDuplicate(seen, txn, rec.Line, file, p.c.m.ID)
			}
			if perr == nil {
				s := providers.Sighting{Txn: txn, Source: ledger.Source{Channel: ChannelStatement, Ref: txn.ID,
					Raw: rec.Raw, ReceivedAt: now}}
				if err := emit(s); err != nil {
					return err
				}
				continue
			}
		} else if !errors.As(err, &perr) {
			return err
		}
		if err := reject(perr, rec.Raw); err != nil {
			return err
		}
	}
}

func (p *Parser) columns(cr *Reader, file string) (columns, error) {
	m := p.c.m
	var missing []error
	find := func(field, name string) int {
		if name == "" {
			return -1
		}
		i, err := cr.Column(name)
		if errors.Is(err, ErrNoColumn) {
			err = fmt.Errorf("%w (columns: %s)", err, quoteList(cr.Header()))
		}
		if err != nil {
			missing = append(missing, &ledger.ParseError{File: file, Line: cr.HeaderLine(), Field: "mapping." + field, Err: err})
			return -1
		}
		return i
	}
	cols := columns{
		id: find("id", m.ID), time: find("time", m.Time), amount: find("amount", m.Amount),
		debit: find("debit", m.Debit), credit: find("credit", m.Credit), currency: find("currency", m.Currency),
		status: find("status", m.Status), typ: find("type", m.Type), reference: find("reference", m.Reference),
		counterparty: find("counterparty", m.Counterparty),
	}
	if len(missing) > 0 {
		return cols, errors.Join(missing...)
	}
	return cols, nil
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// row normalises one record; any problem rejects the whole row.
func (p *Parser) row(cols columns, rec Record, file string) (ledger.ProviderTxn, *ledger.ParseError) {
	m, c := p.c.m, p.c
	bad := func(column string, format string, args ...any) *ledger.ParseError {
		return &ledger.ParseError{File: file, Line: rec.Line, Field: column, Err: fmt.Errorf(format, args...)}
	}
	id := rec.Get(cols.id)
	if id == "" {
		return ledger.ProviderTxn{}, bad(m.ID, "transaction id is empty")
	}
	ts := rec.Get(cols.time)
	if ts == "" {
		return ledger.ProviderTxn{}, bad(m.Time, "time is empty")
	}
	at, err := time.ParseInLocation(m.TimeFormat, ts, c.loc)
	if err != nil {
		return ledger.ProviderTxn{}, bad(m.Time, "%q does not match the layout %q", ts, m.TimeFormat)
	}
	if y := at.UTC().Year(); y < 1900 || y > 9999 {
		return ledger.ProviderTxn{}, bad(m.Time, "%q is not a plausible date", ts)
	}
	cur := c.currency
	if cols.currency >= 0 {
		code := rec.Get(cols.currency)
		if code == "" {
			return ledger.ProviderTxn{}, bad(m.Currency, "currency is empty")
		}
		if cur, err = money.NormalizeCurrency(code); err != nil {
			return ledger.ProviderTxn{}, bad(m.Currency, "%w", err)
		}
	}
	var amt money.Amount
	in := true
	if cols.amount >= 0 {
		if amt, err = p.amount(rec.Get(cols.amount), cur); err != nil {
			return ledger.ProviderTxn{}, bad(m.Amount, "%w", err)
		}
		in = !amt.Value.IsNegative()
		amt.Value = amt.Value.Abs()
	} else {
		var perr *ledger.ParseError
		if amt, in, perr = p.debitCredit(rec.Get(cols.debit), rec.Get(cols.credit), cur, bad); perr != nil {
			return ledger.ProviderTxn{}, perr
		}
	}
	typ := ledger.TxnCharge
	if !in {
		typ = c.outType
	}
	if cols.typ >= 0 {
		v := rec.Get(cols.typ)
		t, ok := c.typeMap[strings.ToLower(v)]
		if !ok {
			return ledger.ProviderTxn{}, bad(m.Type, "type %q is not in type_map (%s)", v, mapKeys(c.typeMap))
		}
		typ = t
	}
	st := ledger.TxnSucceeded
	if cols.status >= 0 {
		v := rec.Get(cols.status)
		s, ok := c.statusMap[strings.ToLower(v)]
		if !ok {
			return ledger.ProviderTxn{}, bad(m.Status, "status %q is not in status_map (%s)", v, mapKeys(c.statusMap))
		}
		st = s
	}
	txn := ledger.ProviderTxn{Provider: m.Provider, ID: id, Type: typ, Status: st, Amount: amt,
		OccurredAt: at.UTC(), Reference: rec.Get(cols.reference),
		Counterparty: ledger.MaskCustomer(rec.Get(cols.counterparty))}
	if err := ledger.ValidateTxn(txn); err != nil {
		return ledger.ProviderTxn{}, bad("", "%w", err)
	}
	return txn, nil
}

// debitCredit reads the amount of a row from its debit and credit columns:
// the one that holds a non-zero amount (else the one that holds any), and
// in says it is the credit. bad makes the error of a column.
func (p *Parser) debitCredit(debit, credit, cur string,
	bad func(column string, format string, args ...any) *ledger.ParseError) (amt money.Amount, in bool, perr *ledger.ParseError) {
	m := p.c.m
	var d, cr money.Amount
	var err error
	if debit != "" {
		if d, err = p.amount(debit, cur); err != nil {
			return money.Amount{}, false, bad(m.Debit, "%w", err)
		}
		if d.Value.IsNegative() {
			return money.Amount{}, false, bad(m.Debit, "%s is negative; the debit column already says money out", debit)
		}
	}
	if credit != "" {
		if cr, err = p.amount(credit, cur); err != nil {
			return money.Amount{}, false, bad(m.Credit, "%w", err)
		}
		if cr.Value.IsNegative() {
			return money.Amount{}, false, bad(m.Credit, "%s is negative; the credit column already says money in", credit)
		}
	}
	hasD, hasC := debit != "" && !d.Value.IsZero(), credit != "" && !cr.Value.IsZero()
	switch {
	case hasD && hasC:
		return money.Amount{}, false, bad(m.Debit, "both debit (%s) and credit (%s) hold an amount", debit, credit)
	case hasD:
		return d, false, nil
	case hasC:
		return cr, true, nil
	case debit != "":
		return d, false, nil
	case credit != "":
		return cr, true, nil
	}
	return money.Amount{}, false, bad(m.Credit, "neither debit nor credit holds an amount")
}

// amount reads a decimal in the mapping's notation. More decimals than the
// currency allows is an error, never rounded.
func (p *Parser) amount(s, cur string) (money.Amount, error) {
	m := p.c.m
	if m.ThousandsSeparator != "" {
		s = strings.ReplaceAll(s, m.ThousandsSeparator, "")
	}
	if m.DecimalSeparator == "," {
		s = strings.Replace(s, ",", ".", 1)
	}
	return money.Parse(s, cur)
}

func mapKeys[V any](m map[string]V) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, fmt.Sprintf("%q", k))
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

type seenRow struct {
	line int
	txn  ledger.ProviderTxn
}

// checkDuplicate lets a row that repeats an earlier one exactly through (it
// is the same sighting) and rejects one that reuses its id for something
// else, which would otherwise be silently merged into the first.
func checkDuplicate(seen map[string]seenRow, txn ledger.ProviderTxn, line int, file, column string) *ledger.ParseError {
	prev, ok := seen[txn.ID]
	if !ok {
		seen[txn.ID] = seenRow{line: line, txn: txn}
		return nil
	}
	if sameTxn(prev.txn, txn) {
		return nil
	}
	return &ledger.ParseError{File: file, Line: line, Field: column,
		Err: fmt.Errorf("id %q was already used on line %d for a different transaction", txn.ID, prev.line)}
}

func sameTxn(a, b ledger.ProviderTxn) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Amount.Equal(b.Amount) && a.OccurredAt.Equal(b.OccurredAt) &&
		a.Reference == b.Reference && a.Counterparty == b.Counterparty
}
