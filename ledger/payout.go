package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/money"
)

// Bank accounts are providers too: their statements are read into provider
// transactions of the provider "bank:<name>", a credit or a debit each.
const (
	// TxnBankCredit is money booked into a bank account (an entry of its
	// statement with the credit mark). Its amount is a magnitude.
	TxnBankCredit TxnType = "bank_credit"
	// TxnBankDebit is money booked out of a bank account. Its amount is a
	// magnitude.
	TxnBankDebit TxnType = "bank_debit"
)

// BankProviderPrefix begins the provider name of every bank account.
const BankProviderPrefix = "bank:"

// BankProvider returns the provider name of the bank account named name.
func BankProvider(name string) string { return BankProviderPrefix + name }

// IsBankProvider reports whether provider names a bank account.
func IsBankProvider(provider string) bool { return strings.HasPrefix(provider, BankProviderPrefix) }

// BankEntry is what a bank statement says of one of its entries beyond the
// provider transaction it is stored as (same provider and id): the days, the
// bank's and the payer's references, and the whole remittance text. The
// transaction keeps the amount, direction (its type), status, the
// remittance reference the matching reads and the raw entry as its source.
type BankEntry struct {
	Provider string
	TxnID    string
	// Statement names the statement the entry was read from: its id and
	// sequence ("STMT260309 #68/1").
	Statement string
	// Index is the entry's position in its statement, from 1.
	Index int
	// BookingDate and ValueDate are calendar days, as midnight UTC of the
	// day the bank wrote (no zone: banks book days); ValueDate is zero when
	// the statement gives none.
	BookingDate time.Time
	ValueDate   time.Time
	// Reversal marks an entry that undoes an earlier one.
	Reversal bool
	// BankRef is the bank's reference of the entry; EndToEndID the payer's
	// end-to-end reference (camt EndToEndId, the MT940 and BAI2 customer
	// reference).
	BankRef    string
	EndToEndID string
	// Counterparty is who paid a credit or was paid by a debit: a name,
	// with any account number masked.
	Counterparty string
	// Text is the whole remittance information; Info the bank's
	// additional information; Code the bank transaction code as
	// "scheme:code" pairs.
	Text string
	Info string
	Code string
}

// Payout is money a provider sends to a bank account: a Stripe payout, an
// M-Pesa settlement of the paybill's balance to the bank. The payout's
// amount and status are those of its provider transaction (same provider
// and id); the payout adds when and how it should reach the bank.
type Payout struct {
	Provider string
	// Account is the provider account the payout is of (an M-Pesa paybill,
	// a Stripe connected account); empty is the default one. It is the
	// account of the transaction that told of the payout, and is never
	// changed once stored.
	Account string
	ID      string
	// InitiatedAt is when the payout left the provider (Stripe's created,
	// the settlement row's completion time); zero when not known.
	InitiatedAt time.Time
	// ArrivalAt is when the provider says the money reaches the bank
	// (Stripe's arrival_date); zero when it does not say.
	ArrivalAt time.Time
	// TraceID is the bank trace number the provider gives (Stripe
	// trace_id), which the bank's remittance text may echo.
	TraceID string
	// Descriptor is what the provider tells the bank to show (Stripe's
	// statement descriptor, the settlement's details).
	Descriptor string
	// Destination is the bank account as the provider names it (ba_...,
	// "EQUITY BANK 0100****5678").
	Destination string
	// Carried and Left are, for a payout that sweeps a running balance
	// (an M-Pesa settlement), the balance before the first of its items
	// and the balance it left behind: the payout is Carried plus its items
	// minus Left. Zero (no currency) when not known; a Stripe payout is
	// its items alone.
	Carried money.Amount
	Left    money.Amount
	// FirstSeenAt and UpdatedAt are set by the store.
	FirstSeenAt time.Time
	UpdatedAt   time.Time
}

// ExpectedAt is when the payout should reach the bank: its arrival when the
// provider says, else when it left.
func (p Payout) ExpectedAt() time.Time {
	if !p.ArrivalAt.IsZero() {
		return p.ArrivalAt
	}
	return p.InitiatedAt
}

// PayoutItem says that a payout carries a provider transaction of the same
// provider: a charge, a refund, a fee, a dispute, an adjustment.
type PayoutItem struct {
	Provider string
	PayoutID string
	TxnID    string
	// FirstSeenAt is set by the store.
	FirstSeenAt time.Time
}

// PayoutLookup selects payouts of one provider (PayoutStore.FindPayouts):
// those expected (ExpectedAt) in [From, To) when both are set, and those
// among IDs or whose TraceID is among TraceIDs whatever their time; of
// these accounts when Accounts is set ("" is the default one), else of any.
type PayoutLookup struct {
	Provider string
	Accounts []string
	From, To time.Time
	IDs      []string
	TraceIDs []string
}

// PayoutStore keeps what matching payouts to bank statements reads beside
// the provider transactions: the details of bank entries, the payouts
// providers make to bank accounts, and what each payout carries.
type PayoutStore interface {
	// RecordBankEntries stores the details of bank entries; an entry
	// already stored (provider and transaction id) is left as it is. It
	// returns how many it added.
	RecordBankEntries(ctx context.Context, es []BankEntry) (int, error)
	// GetBankEntries returns the entries of provider among ids, once each,
	// in no particular order.
	GetBankEntries(ctx context.Context, provider string, ids []string) ([]BankEntry, error)
	// RecordPayouts stores payouts; a payout already stored gets its empty
	// fields filled, never overwritten. It returns how many it added or
	// filled.
	RecordPayouts(ctx context.Context, ps []Payout) (int, error)
	// RecordPayoutItems stores what payouts carry; an item already stored
	// is left. It returns how many it added.
	RecordPayoutItems(ctx context.Context, items []PayoutItem) (int, error)
	// FindPayouts returns, once each and in no particular order, the
	// payouts l selects.
	FindPayouts(ctx context.Context, l PayoutLookup) ([]Payout, error)
	// PayoutItems returns the items of the payouts of provider among
	// payoutIDs, by payout then transaction id.
	PayoutItems(ctx context.Context, provider string, payoutIDs []string) ([]PayoutItem, error)
	// ItemsOfTxns returns the items that name any of txnIDs of provider:
	// the payouts those transactions were paid out in, by transaction then
	// payout id.
	ItemsOfTxns(ctx context.Context, provider string, txnIDs []string) ([]PayoutItem, error)
}

// ValidateBankEntry checks an entry before it is stored.
func ValidateBankEntry(e BankEntry) error {
	switch {
	case e.Provider == "":
		return &FieldError{Field: "provider", Err: errEmpty}
	case e.TxnID == "":
		return &FieldError{Field: "txn_id", Err: errEmpty}
	case e.BookingDate.IsZero():
		return &FieldError{Field: "booking_date", Err: errEmpty}
	}
	for _, d := range []struct {
		field string
		t     time.Time
	}{{"booking_date", e.BookingDate}, {"value_date", e.ValueDate}} {
		if d.t.IsZero() {
			continue
		}
		if err := CheckTime(d.t); err != nil {
			return &FieldError{Field: d.field, Err: err}
		}
		if h, m, s := d.t.Clock(); h != 0 || m != 0 || s != 0 || d.t.Nanosecond() != 0 || d.t.Location() != time.UTC {
			return &FieldError{Field: d.field, Err: fmt.Errorf("%s is not a day (midnight UTC)", d.t.Format(time.RFC3339Nano))}
		}
	}
	for _, f := range []struct{ name, v string }{{"statement", e.Statement}, {"bank_ref", e.BankRef},
		{"end_to_end_id", e.EndToEndID}, {"counterparty", e.Counterparty}, {"code", e.Code}} {
		if err := checkField(f.name, f.v, MaxIDLen); err != nil {
			return err
		}
	}
	for _, f := range []struct{ name, v string }{{"text", e.Text}, {"info", e.Info}} {
		if err := checkField(f.name, f.v, MaxTextLen); err != nil {
			return err
		}
	}
	return nil
}

// MaxTextLen bounds the remittance text and additional information of a
// bank entry, in bytes.
const MaxTextLen = 4096

// ValidatePayout checks a payout before it is stored: it needs a time to be
// expected at.
func ValidatePayout(p Payout) error {
	switch {
	case p.Provider == "":
		return &FieldError{Field: "provider", Err: errEmpty}
	case p.ID == "":
		return &FieldError{Field: "id", Err: errEmpty}
	case p.ExpectedAt().IsZero():
		return &FieldError{Field: "arrival_at", Err: fmt.Errorf("%w: neither its arrival nor when it left is known", errEmpty)}
	}
	if err := checkField("account", p.Account, MaxIDLen); err != nil {
		return err
	}
	for _, t := range []struct {
		field string
		t     time.Time
	}{{"initiated_at", p.InitiatedAt}, {"arrival_at", p.ArrivalAt}} {
		if !t.t.IsZero() {
			if err := CheckTime(t.t); err != nil {
				return &FieldError{Field: t.field, Err: err}
			}
		}
	}
	if !p.Carried.IsZero() && !p.Left.IsZero() && p.Carried.Currency != p.Left.Currency {
		return &FieldError{Field: "left", Err: fmt.Errorf("in %s, carried in %s", p.Left.Currency, p.Carried.Currency)}
	}
	for _, f := range []struct{ name, v string }{{"provider", p.Provider}, {"id", p.ID}, {"trace_id", p.TraceID},
		{"descriptor", p.Descriptor}, {"destination", p.Destination}} {
		if err := checkField(f.name, f.v, MaxIDLen); err != nil {
			return err
		}
	}
	return nil
}

// ValidatePayoutItem checks an item before it is stored.
func ValidatePayoutItem(it PayoutItem) error {
	switch {
	case it.Provider == "":
		return &FieldError{Field: "provider", Err: errEmpty}
	case it.PayoutID == "":
		return &FieldError{Field: "payout_id", Err: errEmpty}
	case it.TxnID == "":
		return &FieldError{Field: "txn_id", Err: errEmpty}
	}
	if err := checkField("payout_id", it.PayoutID, MaxIDLen); err != nil {
		return err
	}
	return checkField("txn_id", it.TxnID, MaxIDLen)
}

// PayoutRef names a payout of provider in a finding about it, whose own
// provider is the bank account: "stripe/po_123", "mpesa/SFT26068X1Y2".
func PayoutRef(provider, id string) string { return provider + "/" + id }

// SplitPayoutRef reads a PayoutRef; ok is false for any other id (a bank
// entry's, which never holds a slash).
func SplitPayoutRef(ref string) (provider, id string, ok bool) {
	provider, id, ok = strings.Cut(ref, "/")
	if !ok || provider == "" || id == "" {
		return "", "", false
	}
	return provider, id, true
}

// MergePayouts returns ps with each payout once, in the order first seen,
// the empty fields of the first sighting of a payout filled from the later
// ones: what recording them one after the other would store.
func MergePayouts(ps []Payout) []Payout {
	type key struct{ provider, id string }
	at := make(map[key]int, len(ps))
	out := make([]Payout, 0, len(ps))
	for _, p := range ps {
		i, ok := at[key{p.Provider, p.ID}]
		if !ok {
			at[key{p.Provider, p.ID}] = len(out)
			out = append(out, p)
			continue
		}
		q := &out[i]
		if q.InitiatedAt.IsZero() {
			q.InitiatedAt = p.InitiatedAt
		}
		if q.ArrivalAt.IsZero() {
			q.ArrivalAt = p.ArrivalAt
		}
		for _, f := range []struct {
			dst *string
			src string
		}{{&q.TraceID, p.TraceID}, {&q.Descriptor, p.Descriptor},
			{&q.Destination, p.Destination}} {
			if *f.dst == "" {
				*f.dst = f.src
			}
		}
		if q.Carried.IsZero() {
			q.Carried = p.Carried
		}
		if q.Left.IsZero() {
			q.Left = p.Left
		}
	}
	return out
}
