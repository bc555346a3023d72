package mpesa

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
)

// A portal statement carries the account's running balance on every row:
// each completed row moves it by its amount, so two rows that follow each
// other whose balances do not is a row missing between them. The parser
// checks every pair of completed rows that both carry a balance, in the
// order the file lists them (oldest first or newest first: the completion
// times, else the balances themselves, tell), and rejects the row after a
// gap: the file is then imported whole or not at all, as for a bank
// statement that does not add up. A row without a balance (an older export,
// a blank cell) is not checked and starts the chain again; a statement
// without a Balance column is imported with a warning that it could not be
// checked.
//
// The rows that settle the paybill's balance to a bank account
// ("Organization Settle to Bank", "Funds Transfer to Bank", "Withdraw Funds
// to Bank") are payouts: each gets a ledger.Payout (when it left, the bank
// it went to, the balance before its first row and after it) and carries
// the completed rows since the settlement before it, in time order, as its
// items, so that matching can check that a settlement is what its rows add
// up to.

// order is the order a statement lists its rows in.
type order int8

const (
	orderUnknown order = iota
	orderOldestFirst
	orderNewestFirst
)

// maxPendingItems bounds the rows remembered for the next settlement: past
// it (a statement of months without a sweep), the settlement is recorded
// without its items.
const maxPendingItems = 200_000

// balanceRow is what the check remembers of the previous row.
type balanceRow struct {
	line    int
	receipt string
	at      time.Time
	// signed is the row's amount, negative when withdrawn; balance the
	// balance after it.
	signed, balance decimal.Decimal
}

// sweep is the state of the running balance and of settlements in one
// file.
type sweep struct {
	order order
	// lastAt is the completion time of the last completed row.
	lastAt  time.Time
	prev    *balanceRow
	checked int // pairs of rows checked

	// items are the receipts since the last settlement (oldest first
	// files) or since the held settlement (newest first); overflow says
	// some were dropped. first is the balance before the oldest of them,
	// when known.
	items    []string
	overflow bool
	first    *decimal.Decimal
	// held is a settlement of a newest-first file, waiting for its items
	// (the rows after it). A settlement met before the order is known is
	// held too, with heldOldest its reading as of an oldest-first file
	// (the rows before it), emitted instead if the file turns out to be.
	held       *providers.Sighting
	heldOldest *providers.Sighting
}

// isSettlement says whether a payout row sends the balance to a bank.
func isSettlement(reason, details string) bool {
	r := strings.ToLower(reason + " " + details)
	return strings.Contains(r, "bank") || strings.Contains(r, "settle")
}

// noBalanceWarning is the warning of a statement without a Balance column.
const noBalanceWarning = "the statement has no Balance column: its running balance could not be checked for missing rows"

// observe learns the file's order from the completion times of its
// completed rows: the first two that differ tell.
func (st *statementState) observe(t ledger.ProviderTxn) {
	sw := &st.sweep
	if t.Status != ledger.TxnSucceeded || sw.order != orderUnknown {
		return
	}
	switch {
	case sw.lastAt.IsZero():
	case t.OccurredAt.After(sw.lastAt):
		sw.order = orderOldestFirst
	case t.OccurredAt.Before(sw.lastAt):
		sw.order = orderNewestFirst
	}
	sw.lastAt = t.OccurredAt
}

// balance checks a completed row's balance against the previous row's, and
// returns the rejection of a gap. A row without a balance starts the chain
// again.
func (st *statementState) balance(line int, s *providers.Sighting, text string) *ledger.ParseError {
	sw := &st.sweep
	t := s.Txn
	st.text.hasBal = false
	if t.Status != ledger.TxnSucceeded {
		return nil
	}
	if text == "" {
		sw.prev = nil
		return nil
	}
	bal, err := statementAmount(text)
	if err != nil {
		return st.fail(line, colBalance, err)
	}
	signed := t.Amount.Value
	if paysOut(t.Type) {
		signed = signed.Neg()
	}
	st.text.bal, st.text.hasBal = bal.Value, true
	cur := &balanceRow{line: line, receipt: t.ID, at: t.OccurredAt, signed: signed, balance: bal.Value}
	prev := sw.prev
	sw.prev = cur
	if prev == nil {
		return nil
	}
	sw.checked++
	oldestFirst := prev.balance.Add(cur.signed).Equal(cur.balance)
	newestFirst := cur.balance.Add(prev.signed).Equal(prev.balance)
	switch sw.order {
	case orderOldestFirst:
		if oldestFirst {
			return nil
		}
		missing := cur.balance.Sub(prev.balance.Add(cur.signed))
		return st.gap(line, prev, cur, missing)
	case orderNewestFirst:
		if newestFirst {
			return nil
		}
		missing := prev.balance.Sub(cur.balance.Add(prev.signed))
		return st.gap(line, prev, cur, missing)
	}
	switch {
	case oldestFirst && !newestFirst:
		sw.order = orderOldestFirst
	case newestFirst && !oldestFirst:
		sw.order = orderNewestFirst
	case !oldestFirst && !newestFirst:
		return st.gap(line, prev, cur, cur.balance.Sub(prev.balance.Add(cur.signed)))
	}
	return nil
}

func (st *statementState) gap(line int, prev, cur *balanceRow, missing decimal.Decimal) *ledger.ParseError {
	m := money.Amount{Value: missing, Currency: Currency}
	sign := ""
	if missing.IsPositive() {
		sign = "+"
	}
	return st.fail(line, colBalance, fmt.Errorf("balance %s does not follow from line %d (%s, balance %s) and this row (%s): "+
		"%s %s%s unaccounted for, a row is missing between them; export the period again",
		cur.balance.StringFixed(2), prev.line, prev.receipt, prev.balance.StringFixed(2), cur.receipt, Currency, sign, m.Format()))
}

// paysOut says whether a transaction of the statement takes money out of
// the account.
func paysOut(t ledger.TxnType) bool {
	switch t {
	case ledger.TxnCharge, ledger.TxnDisputeReversal, ledger.TxnRefundFailure:
		return false
	}
	return true
}

// settle takes a good row, whose balance (if any) balance has read: it
// notes the row as an item of the next (or held) settlement, and makes a
// settlement row a payout with its items. It appends to out the sightings
// to emit now, in order.
func (st *statementState) settle(out []providers.Sighting, s providers.Sighting, reason, details, other string) []providers.Sighting {
	sw := &st.sweep
	t := s.Txn
	if t.Status != ledger.TxnSucceeded {
		return append(out, s)
	}
	if sw.heldOldest != nil && sw.order == orderOldestFirst {
		// The settlement held while the order was unknown had its rows
		// before it.
		out = append(out, *sw.heldOldest)
		sw.held, sw.heldOldest = nil, nil
	} else if sw.order == orderNewestFirst {
		sw.heldOldest = nil
	}
	var bal *decimal.Decimal
	if st.text.hasBal {
		b := st.text.bal
		bal = &b
	}
	if t.Type != ledger.TxnPayout || !isSettlement(reason, details) {
		out = append(out, s)
		if sw.order == orderNewestFirst && sw.held == nil {
			// Rows newer than any settlement of the file belong to a
			// settlement it does not show.
			return out
		}
		if len(sw.items) >= maxPendingItems {
			sw.items, sw.overflow = nil, true
		}
		if !sw.overflow {
			sw.items = append(sw.items, t.ID)
		}
		if bal != nil {
			before := bal.Sub(signedOf(t))
			if sw.order == orderNewestFirst || len(sw.items) == 1 {
				// The oldest row so far: the balance before it.
				sw.first = &before
			}
		} else if sw.order == orderNewestFirst || len(sw.items) == 1 {
			sw.first = nil
		}
		return out
	}
	p := &ledger.Payout{Provider: Provider, ID: t.ID, InitiatedAt: t.OccurredAt, Descriptor: clip(details, ledger.MaxIDLen),
		Destination: clip(ledger.MaskPayload([]byte(other)), ledger.MaxIDLen)}
	if bal != nil {
		p.Left = money.Amount{Value: *bal, Currency: Currency}
	}
	s.Payout = p
	switch sw.order {
	case orderNewestFirst:
		// The rows after this one (older) are its items: hold it.
		out = append(out, st.release()...)
		sw.held = &s
		return out
	case orderUnknown:
		// Hold it as both readings until the order is known.
		out = append(out, st.release()...)
		oldest := s
		oldest.Payout = new(ledger.Payout)
		*oldest.Payout = *p
		st.attach(&oldest, bal)
		sw.held, sw.heldOldest = &s, &oldest
		return out
	}
	st.attach(&s, bal)
	return append(out, s)
}

// attach gives the settlement s the items gathered for it and the balance
// it swept from, and starts gathering again.
func (st *statementState) attach(s *providers.Sighting, after *decimal.Decimal) {
	sw := &st.sweep
	p := s.Payout
	if !sw.overflow {
		for _, id := range sw.items {
			s.PayoutItems = append(s.PayoutItems, ledger.PayoutItem{Provider: Provider, PayoutID: p.ID, TxnID: id})
		}
		switch {
		case sw.first != nil:
			p.Carried = money.Amount{Value: *sw.first, Currency: Currency}
		case len(sw.items) == 0 && after != nil:
			// Nothing since the last settlement: it sweeps what was left.
			p.Carried = money.Amount{Value: after.Add(s.Txn.Amount.Value), Currency: Currency}
		}
	}
	if p.Carried.IsZero() {
		p.Left = money.Amount{}
	}
	sw.items, sw.overflow, sw.first = sw.items[:0], false, nil
}

// release returns the held settlement of a newest-first file with its
// items, if there is one.
func (st *statementState) release() []providers.Sighting {
	sw := &st.sweep
	if sw.heldOldest != nil {
		// The order never became known: read as oldest first.
		s := *sw.heldOldest
		sw.held, sw.heldOldest = nil, nil
		sw.items, sw.overflow, sw.first = sw.items[:0], false, nil
		return []providers.Sighting{s}
	}
	if sw.held == nil {
		sw.items, sw.overflow, sw.first = sw.items[:0], false, nil
		return nil
	}
	s := *sw.held
	sw.held = nil
	var after *decimal.Decimal
	if !s.Payout.Left.IsZero() {
		v := s.Payout.Left.Value
		after = &v
	}
	st.attach(&s, after)
	return []providers.Sighting{s}
}

// finish returns what the file's end releases: a held settlement.
func (st *statementState) finish() []providers.Sighting { return st.release() }

func signedOf(t ledger.ProviderTxn) decimal.Decimal {
	if paysOut(t.Type) {
		return t.Amount.Value.Neg()
	}
	return t.Amount.Value
}

func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut]
}
