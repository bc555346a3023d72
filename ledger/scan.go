package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/reconcilehq/reconcile/money"
)

// ScanStore streams what a reconcile reads, in bulk and in compact form:
// amounts in integer minor units, no per-row decimal, strings as bytes
// borrowed from the engine's buffers. Rows come in no particular order.
//
// A row and every byte slice in it are valid only until fn returns; fn copies
// what it keeps. fn must not use the store or transaction it was called from
// (the connection is busy streaming). An error returned by fn stops the scan
// and is returned as is.
type ScanStore interface {
	// ScanIntents streams the intents of a provider created in the filter's
	// window, without their provider references.
	ScanIntents(ctx context.Context, f IntentFilter, fn func(*IntentRow) error) error
	// ScanProviderRefs streams, for the intents ScanIntents streams, every
	// provider reference their attempts recorded, as (intent key, provider
	// reference) pairs; a pair may repeat when several attempts recorded the
	// same reference.
	ScanProviderRefs(ctx context.Context, f IntentFilter, fn func(key, ref []byte) error) error
	// ScanProviderTxns streams the transactions of a provider that occurred
	// in the filter's window.
	ScanProviderTxns(ctx context.Context, f TxnFilter, fn func(*TxnRow) error) error
}

// IntentRow is an intent as a reconcile reads it: what matching needs and
// nothing else.
type IntentRow struct {
	Key, Reference, Customer []byte
	// Currency is the ISO 4217 code of the amount, and Minor the amount in
	// integer minor units of that currency (money.Exponent).
	Currency string
	Minor    int64
	// Bad, when set, says why the amount could not be read (it does not
	// fit in int64 minor units, or has more decimals than its currency):
	// Minor is then 0. Scans hand such a row on rather than fail, so that
	// one bad record cannot stop a reconcile.
	Bad   error
	State State
	// Times are in UTC; LeaseExpiresAt is zero when there is no lease.
	CreatedAt, UpdatedAt, LeaseExpiresAt time.Time
	// RefundOf is, for a refund intent, the key of its charge intent;
	// empty for a charge.
	RefundOf []byte
	// Expected marks an expected payment (kind expected), with its due date
	// (zero: none) and its tolerance in minor units of Currency (0: none).
	Expected  bool
	DueAt     time.Time
	Tolerance int64
}

// TxnRow is a provider transaction as a reconcile reads it, without its
// provider, bookkeeping times and sources.
type TxnRow struct {
	ID, Reference, ProviderRef, Counterparty, LinkedID []byte
	Type                                               TxnType
	Status                                             TxnStatus
	// Currency is the ISO 4217 code of the amount, and Minor the signed
	// amount in integer minor units of that currency.
	Currency string
	Minor    int64
	// Bad is as in IntentRow.
	Bad error
	// OccurredAt is in UTC.
	OccurredAt time.Time
	// Settlement is the settlement amount as decimal text with its
	// currency and ExchangeRate the rate, all empty when the transaction
	// settled in its own currency (ProviderTxn.Settlement). Evidence only.
	Settlement, SettlementCurrency, ExchangeRate []byte
}

// Intent returns the row as an Intent (with copies of its bytes), for
// callers that want the full type; Provider is left for the caller to set.
func (r *IntentRow) Intent() (Intent, error) {
	if r.Bad != nil {
		return Intent{}, fmt.Errorf("intent %s: %w", Clip(string(r.Key)), r.Bad)
	}
	amt, err := money.FromMinor(r.Minor, r.Currency)
	if err != nil {
		return Intent{}, err
	}
	kind := IntentCharge
	switch {
	case len(r.RefundOf) > 0:
		kind = IntentRefund
	case r.Expected:
		kind = IntentExpected
	}
	in := Intent{IntentParams: IntentParams{Key: string(r.Key), Kind: kind, RefundOf: string(r.RefundOf), Amount: amt,
		Customer: string(r.Customer), Reference: string(r.Reference), DueAt: r.DueAt}, State: r.State, LeaseExpiresAt: r.LeaseExpiresAt,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.Tolerance != 0 {
		if in.Tolerance, err = money.FromMinor(r.Tolerance, r.Currency); err != nil {
			return Intent{}, err
		}
	}
	return in, nil
}

// Txn returns the row as a ProviderTxn (with copies of its bytes); Provider
// is left for the caller to set.
func (r *TxnRow) Txn() (ProviderTxn, error) {
	if r.Bad != nil {
		return ProviderTxn{}, fmt.Errorf("provider txn %s: %w", Clip(string(r.ID)), r.Bad)
	}
	amt, err := money.FromMinor(r.Minor, r.Currency)
	if err != nil {
		return ProviderTxn{}, err
	}
	t := ProviderTxn{ID: string(r.ID), Type: r.Type, Status: r.Status, Amount: amt, OccurredAt: r.OccurredAt,
		Reference: string(r.Reference), ProviderRef: string(r.ProviderRef), Counterparty: string(r.Counterparty),
		LinkedID: string(r.LinkedID), ExchangeRate: string(r.ExchangeRate)}
	if len(r.SettlementCurrency) > 0 {
		if t.Settlement, err = money.Parse(string(r.Settlement), string(r.SettlementCurrency)); err != nil {
			return ProviderTxn{}, err
		}
	}
	return t, nil
}

// StateOf returns the State spelled b, without allocating.
func StateOf(b []byte) (State, error) {
	switch string(b) {
	case "succeeded":
		return StateSucceeded, nil
	case "pending":
		return StatePending, nil
	case "processing":
		return StateProcessing, nil
	case "failed":
		return StateFailed, nil
	case "unknown":
		return StateUnknown, nil
	}
	return "", fmt.Errorf("unknown state %q", b)
}

// TxnTypeOf returns the TxnType spelled b, without allocating.
func TxnTypeOf(b []byte) (TxnType, error) {
	switch string(b) {
	case "charge":
		return TxnCharge, nil
	case "refund":
		return TxnRefund, nil
	case "reversal":
		return TxnReversal, nil
	case "fee":
		return TxnFee, nil
	case "payout":
		return TxnPayout, nil
	case "dispute":
		return TxnDispute, nil
	case "dispute_reversal":
		return TxnDisputeReversal, nil
	case "refund_failure":
		return TxnRefundFailure, nil
	case "adjustment":
		return TxnAdjustment, nil
	case "other":
		return TxnOther, nil
	case "bank_credit":
		return TxnBankCredit, nil
	case "bank_debit":
		return TxnBankDebit, nil
	}
	return "", fmt.Errorf("unknown type %q", b)
}

// TxnStatusOf returns the TxnStatus spelled b, without allocating.
func TxnStatusOf(b []byte) (TxnStatus, error) {
	switch string(b) {
	case "succeeded":
		return TxnSucceeded, nil
	case "failed":
		return TxnFailed, nil
	case "pending":
		return TxnPending, nil
	}
	return "", fmt.Errorf("unknown status %q", b)
}

// Currencies interns currency codes read as bytes and knows their
// exponents, so that a scan allocates nothing per row for them. The zero
// value is ready to use; it is not safe for concurrent use.
type Currencies struct {
	codes []string
	exps  []int32
	last  int
}

// Lookup returns the interned code spelled b and its exponent.
func (c *Currencies) Lookup(b []byte) (string, int32, error) {
	if c.last < len(c.codes) && c.codes[c.last] == string(b) {
		return c.codes[c.last], c.exps[c.last], nil
	}
	for i, code := range c.codes {
		if code == string(b) {
			c.last = i
			return code, c.exps[i], nil
		}
	}
	code := string(b)
	exp, err := money.Exponent(code)
	if err != nil {
		return "", 0, err
	}
	c.codes, c.exps = append(c.codes, code), append(c.exps, exp)
	c.last = len(c.codes) - 1
	return code, exp, nil
}

var errMinorRange = errors.New("does not fit in int64 minor units")

// MinorUnits converts the decimal coef × 10^-scale to integer minor units
// at exponent exp (scale may be negative). A value with more decimals than
// exp allows fails with money.ErrTooPrecise; it is never rounded.
func MinorUnits(coef int64, scale, exp int32) (int64, error) {
	shift := exp - scale
	for ; shift > 0; shift-- {
		if coef > math.MaxInt64/10 || coef < math.MinInt64/10 {
			return 0, errMinorRange
		}
		coef *= 10
	}
	for ; shift < 0; shift++ {
		if coef%10 != 0 {
			return 0, money.ErrTooPrecise
		}
		coef /= 10
	}
	return coef, nil
}

// ParseMinor reads a plain decimal text ("1500", "12.50", "-4.5") as
// integer minor units at exponent exp, without allocating. Exponents,
// separators and empty input are errors; excess decimals fail with
// money.ErrTooPrecise unless they are zeros.
func ParseMinor(b []byte, exp int32) (int64, error) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, i = b[0] == '-', 1
	}
	var (
		coef          uint64
		scale         int32
		digits        int
		dot, overflow bool
	)
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			if coef > (math.MaxInt64-uint64(c-'0'))/10 {
				// Drop trailing zero decimals rather than overflow on them.
				if dot && c == '0' {
					continue
				}
				overflow = true
				continue
			}
			coef = coef*10 + uint64(c-'0')
			if dot {
				scale++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, fmt.Errorf("%q: %w", b, money.ErrSyntax)
		}
	}
	if digits == 0 {
		return 0, fmt.Errorf("%q: %w", b, money.ErrSyntax)
	}
	if overflow {
		return 0, fmt.Errorf("%s: %w", b, errMinorRange)
	}
	v := int64(coef)
	if neg {
		v = -v
	}
	m, err := MinorUnits(v, scale, exp)
	if err != nil {
		return 0, fmt.Errorf("%s at exponent %d: %w", b, exp, err)
	}
	return m, nil
}
