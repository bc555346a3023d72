package bank

import (
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/money"
)

// ErrNoBalances reports a statement without an opening or a closing booked
// balance: there is nothing to check its entries against. camt.053 and
// MT940 statements must have both (a parser rejects one that lacks them);
// BAI2 reports and camt.054 notifications may not.
var ErrNoBalances = errors.New("no opening or closing booked balance to check the entries against")

// BalanceError reports a statement whose entries do not add up: the opening
// balance plus the booked credits minus the booked debits is not the
// closing balance.
type BalanceError struct {
	File      string
	Statement string
	Account   string
	Opening   money.Amount
	Credits   money.Amount
	Debits    money.Amount
	// Expected is Opening + Credits - Debits.
	Expected money.Amount
	Closing  money.Amount
	// Difference is Closing - Expected: what the entries miss.
	Difference money.Amount
}

// Error says which statement does not add up and by how much. It leaves
// the file out: a ParseError that carries it names the file already.
func (e *BalanceError) Error() string {
	return fmt.Sprintf("statement %s of account %s does not add up: opening %s + credits %s - debits %s = %s, but the closing balance is %s (difference %s)",
		e.Statement, e.Account, show(e.Opening, false), show(e.Credits, false), show(e.Debits, false), show(e.Expected, false),
		show(e.Closing, false), show(e.Difference, true))
}

// show renders an amount with its currency and thousands separators, with
// a plus sign when asked for one.
func show(a money.Amount, sign bool) string {
	if sign && a.Value.IsPositive() {
		return a.Currency + " +" + a.Format()
	}
	return a.Currency + " " + a.Format()
}

// CheckBalance checks that st adds up: its opening booked balance plus the
// booked credits minus the booked debits read so far equals its closing
// booked balance. It returns nil when it does, a *BalanceError naming the
// file, statement, account and difference when it does not, and
// ErrNoBalances when st lacks either balance. Pending, info and future
// entries are not counted: they are not in the booked balance.
//
// The parsers call it at the end of every statement and reject a statement
// that does not add up; an importer may call it again on the Statement
// Handler.End receives.
func CheckBalance(st *Statement) error {
	if st.Opening == nil || st.Closing == nil {
		return ErrNoBalances
	}
	cur := st.Closing.Amount.Currency
	if st.Opening.Amount.Currency != cur {
		return fmt.Errorf("%s: statement %s: opening balance in %s, closing balance in %s", st.File, st.Name(),
			st.Opening.Amount.Currency, cur)
	}
	expected := st.Opening.Amount.Value.Add(st.Totals.Credits).Sub(st.Totals.Debits)
	if expected.Equal(st.Closing.Amount.Value) {
		return nil
	}
	amt := func(d decimal.Decimal) money.Amount { return money.Amount{Value: d, Currency: cur} }
	return &BalanceError{
		File:       st.File,
		Statement:  st.Name(),
		Account:    st.Account.String(),
		Opening:    st.Opening.Amount,
		Credits:    amt(st.Totals.Credits),
		Debits:     amt(st.Totals.Debits),
		Expected:   amt(expected),
		Closing:    st.Closing.Amount,
		Difference: amt(st.Closing.Amount.Value.Sub(expected)),
	}
}

// ControlError reports a BAI2 trailer whose control total or record count
// does not match the records it closes.
type ControlError struct {
	// Record is the trailer's record code: 49 (account), 98 (group) or 99
	// (file).
	Record string
	// What is "control total", "record count", "account count" or "group
	// count".
	What string
	// Declared is what the trailer says, Counted what the records add up
	// to (amounts in minor units, as the file writes them).
	Declared, Counted int64
}

// Error names the trailer, what it declares and what was counted.
func (e *ControlError) Error() string {
	return fmt.Sprintf("%s record: %s %d, but the records it closes add up to %d (difference %d)",
		e.Record, e.What, e.Declared, e.Counted, e.Counted-e.Declared)
}

// count adds a good entry to its statement's totals.
func (st *Statement) count(e *Entry) {
	st.Totals.Entries++
	if e.Status != Booked {
		st.Totals.Unbooked++
		return
	}
	if e.Direction == Credit {
		st.Totals.Credits = st.Totals.Credits.Add(e.Amount.Value)
		st.Totals.CreditCount++
	} else {
		st.Totals.Debits = st.Totals.Debits.Add(e.Amount.Value)
		st.Totals.DebitCount++
	}
}
