package stripe

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// The reporting categories Stripe documents for balance transactions, by
// what reconcile makes of them. Reports and the API's balance transactions
// carry the same categories, and both are read through one table, so that
// a day imported from a report and the same day pulled from the API give
// the same provider transactions.
var reportingCategories = map[string]ledger.TxnType{
	// Payments of customers and what undoes them.
	"charge":                   ledger.TxnCharge,
	"refund":                   ledger.TxnRefund,
	"refund_failure":           ledger.TxnRefundFailure,
	"dispute":                  ledger.TxnDispute,
	"dispute_reversal":         ledger.TxnDisputeReversal,
	"charge_failure":           ledger.TxnReversal,
	"partial_capture_reversal": ledger.TxnReversal,
	// Stripe's fees and taxes on them.
	"fee":          ledger.TxnFee,
	"network_cost": ledger.TxnFee,
	"tax":          ledger.TxnFee,
	// Payouts to the bank account.
	"payout": ledger.TxnPayout,
	// Money that moves for other documented reasons: kept as evidence,
	// never matched to an intent.
	"payout_reversal":                ledger.TxnAdjustment,
	"payout_minimum_balance_hold":    ledger.TxnAdjustment,
	"payout_minimum_balance_release": ledger.TxnAdjustment,
	"advance":                        ledger.TxnAdjustment,
	"advance_funding":                ledger.TxnAdjustment,
	"anticipation_repayment":         ledger.TxnAdjustment,
	"climate_order_purchase":         ledger.TxnAdjustment,
	"climate_order_refund":           ledger.TxnAdjustment,
	"connect_collection_transfer":    ledger.TxnAdjustment,
	"connect_reserved_funds":         ledger.TxnAdjustment,
	"contribution":                   ledger.TxnAdjustment,
	"issuing_authorization_hold":     ledger.TxnAdjustment,
	"issuing_authorization_release":  ledger.TxnAdjustment,
	"issuing_transaction":            ledger.TxnAdjustment,
	"other_adjustment":               ledger.TxnAdjustment,
	"platform_earning":               ledger.TxnAdjustment,
	"platform_earning_refund":        ledger.TxnAdjustment,
	"risk_reserved_funds":            ledger.TxnAdjustment,
	"topup":                          ledger.TxnAdjustment,
	"topup_reversal":                 ledger.TxnAdjustment,
	"transfer":                       ledger.TxnAdjustment,
	"transfer_reversal":              ledger.TxnAdjustment,
	"unreconciled_customer_funds":    ledger.TxnAdjustment,
}

// ReportingCategories returns the documented reporting categories, sorted.
func ReportingCategories() []string {
	out := make([]string, 0, len(reportingCategories))
	for c := range reportingCategories {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// CategoryOther is how the import summary names lines of a category Stripe
// does not document.
const CategoryOther = "other"

// balanceLine is one balance transaction as reports and the API describe
// it, before it becomes provider transactions.
type balanceLine struct {
	BalanceTxnID  string
	Created       time.Time
	ChargeCreated time.Time
	Category      string
	SourceID      string
	ChargeID      string
	PaymentIntent string
	IntentKey     string
	Counterparty  string
	// Gross and Fee are in the balance's (settlement) currency, signed as
	// Stripe signs them: gross negative takes money out, fee positive is
	// charged.
	Gross, Fee money.Amount
	// Presented is the customer-facing amount (the charge, refund or
	// dispute in the currency shown to the customer), zero when not known.
	Presented    money.Amount
	ExchangeRate string
	Status       ledger.TxnStatus
}

// lineResult is what a balance line shows: its transactions, the main one
// first, the category it counts under in an import summary, and a warning
// when it was read but deserves a look.
type lineResult struct {
	txns     []ledger.ProviderTxn
	category string
	warning  string
}

// lineError is a balance line that cannot be read, naming its field.
type lineError struct {
	field string
	err   error
}

func (e *lineError) Error() string { return e.field + ": " + e.err.Error() }

func badLine(field, format string, args ...any) (lineResult, *lineError) {
	return lineResult{}, &lineError{field: field, err: fmt.Errorf(format, args...)}
}

// feeSuffix marks the fee of a line whose main transaction is known by the
// balance transaction's own id (a dispute reversal, an adjustment).
const feeSuffix = ":fee"

// normalize turns a balance line into provider transactions, all or none.
//
// Charges, refunds, disputes and their reversals and failures are stored as
// magnitudes, their type giving the direction, linked to the charge; their
// amount is the customer-facing one when the line names it, the settlement
// (gross) being kept beside it. Fees are positive when assessed, negative
// when returned. Payouts are magnitudes. Adjustments and lines of
// undocumented categories keep the sign of gross. A non-zero fee on a line
// becomes a fee transaction under the balance transaction id.
func (l balanceLine) normalize() (lineResult, *lineError) {
	return l.normalizeInto(make([]ledger.ProviderTxn, 0, 2))
}

// normalizeInto is normalize, with the transactions appended to
// into[:0] (room for two: a payment and its fee).
func (l balanceLine) normalizeInto(into []ledger.ProviderTxn) (lineResult, *lineError) {
	if l.Category == "" {
		return badLine("reporting_category", "is empty")
	}
	typ, res := l.categoryType()
	st := l.Status
	if st == "" {
		st = ledger.TxnSucceeded
	}
	gross := l.Gross.Value
	base := ledger.ProviderTxn{Provider: Provider, Type: typ, Status: st, OccurredAt: l.Created}
	payment := base
	payment.Reference, payment.ProviderRef, payment.Counterparty = l.IntentKey, l.PaymentIntent, l.Counterparty
	main := payment
	sign := 0 // the sign gross must have: 1, -1, or 0 for either
	byBalance := false
	switch typ {
	case ledger.TxnCharge:
		sign = 1
		main.ID = firstOf(l.ChargeID, l.SourceID)
		if !l.ChargeCreated.IsZero() {
			main.OccurredAt = l.ChargeCreated
		}
	case ledger.TxnRefund, ledger.TxnDispute:
		sign = -1
		main.ID, main.LinkedID = firstOf(l.SourceID, l.BalanceTxnID), l.ChargeID
	case ledger.TxnReversal:
		sign = -1
		main.ID, main.LinkedID = l.BalanceTxnID, l.ChargeID
		if l.Category == "partial_capture_reversal" {
			main.ID = firstOf(l.SourceID, l.BalanceTxnID)
		}
	case ledger.TxnDisputeReversal, ledger.TxnRefundFailure:
		sign = 1
		main.ID, main.LinkedID = l.BalanceTxnID, l.ChargeID
	case ledger.TxnPayout:
		main = base
		main.ID = firstOf(l.SourceID, l.BalanceTxnID)
	case ledger.TxnFee:
		main = base
		main.ID, main.LinkedID, main.Amount = l.BalanceTxnID, firstOf(l.ChargeID, l.SourceID), neg(l.Gross)
		res.txns = append(into[:0], main)
		return res, nil
	default: // adjustments and undocumented categories
		main = base
		main.ID, main.LinkedID, main.Amount = l.BalanceTxnID, firstOf(l.ChargeID, l.SourceID), l.Gross
		byBalance = true
	}
	switch {
	case sign > 0 && gross.IsNegative():
		return badLine("gross", "%s is negative on a %s line", l.Gross.Text(), l.Category)
	case sign < 0 && gross.IsPositive():
		return badLine("gross", "%s is positive on a %s line (it takes money out)", l.Gross.Text(), l.Category)
	}
	if main.ID == "" {
		return badLine(idField(typ), "is empty on a %s line", l.Category)
	}
	if main.Amount.IsZero() {
		l.magnitudeInto(&main)
	}
	if main.ID == l.BalanceTxnID {
		byBalance = true
	}
	res.txns = append(into[:0], main)
	if !l.Fee.Value.IsZero() {
		res.txns = append(res.txns, l.fee(base, main.ID, byBalance))
	}
	return res, nil
}

// categoryType is the transaction type of the line's reporting category
// and the result it starts: an undocumented category is imported as
// CategoryOther, with a warning.
func (l balanceLine) categoryType() (ledger.TxnType, lineResult) {
	typ, known := reportingCategories[l.Category]
	res := lineResult{category: l.Category}
	if !known {
		typ, res.category = ledger.TxnOther, CategoryOther
		res.warning = fmt.Sprintf("reporting category %q is not one Stripe documents: imported as %s (kept as evidence, never matched as a charge)",
			l.Category, CategoryOther)
	}
	return typ, res
}

// magnitudeInto sets main's amount to the magnitude of the line: the
// customer-facing amount when the line names it (the settlement kept beside
// it when the currencies differ), else gross.
func (l balanceLine) magnitudeInto(main *ledger.ProviderTxn) {
	main.Amount = abs(l.Gross)
	if !l.Presented.IsZero() {
		main.Amount = abs(l.Presented)
		if l.Presented.Currency != l.Gross.Currency {
			main.Settlement, main.ExchangeRate = abs(l.Gross), l.ExchangeRate
		}
	}
}

// fee is the fee transaction of the line, under the balance transaction id
// (with feeSuffix when the main transaction is known by that id too),
// linked to the charge or else to mainID.
func (l balanceLine) fee(base ledger.ProviderTxn, mainID string, byBalance bool) ledger.ProviderTxn {
	fee := base
	fee.Type, fee.ID, fee.Amount = ledger.TxnFee, l.BalanceTxnID, l.Fee
	fee.LinkedID = firstOf(l.ChargeID, mainID)
	if byBalance {
		fee.ID += feeSuffix
	}
	return fee
}

func idField(typ ledger.TxnType) string {
	if typ == ledger.TxnCharge {
		return "charge_id"
	}
	return "source_id"
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}
