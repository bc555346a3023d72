package stripe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/internal/jsonbody"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
)

// Provider is the provider name stored on every Stripe transaction.
const Provider = "stripe"

// MetadataIntentKey is the default metadata key under which the charger
// stores the intent key on a PaymentIntent; Stripe copies it to the charge,
// and the puller, the webhook and the report parser read it back as the
// transaction's reference. Config.IntentMetadataKey changes it.
const MetadataIntentKey = "intent_key"

// Timestamps outside [1970-01-01T00:00:01Z, 9999-12-31T23:59:59Z] are refused.
const maxUnix = 253402300799

// expandable is a Stripe field that holds either an object id or, when
// expanded, the object itself; only the id is kept.
type expandable string

func (e *expandable) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*e = ""
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*e = expandable(s)
		return nil
	case len(b) > 0 && b[0] == '{':
		var o struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		*e = expandable(o.ID)
		return nil
	}
	return &json.UnmarshalTypeError{Value: jsonValueKind(b), Type: reflect.TypeOf("")}
}

func jsonValueKind(b []byte) string {
	switch {
	case len(b) == 0:
		return "nothing"
	case b[0] == '[':
		return "array"
	case b[0] == 't' || b[0] == 'f':
		return "bool"
	}
	return "number"
}

type chargeObject struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	Amount         *int64            `json:"amount"`
	Currency       string            `json:"currency"`
	Created        *int64            `json:"created"`
	Status         string            `json:"status"`
	Captured       *bool             `json:"captured"`
	Metadata       map[string]string `json:"metadata"`
	PaymentIntent  expandable        `json:"payment_intent"`
	Customer       expandable        `json:"customer"`
	ReceiptEmail   *string           `json:"receipt_email"`
	BillingDetails *struct {
		Email *string `json:"email"`
	} `json:"billing_details"`
	Refunds *struct {
		Data []json.RawMessage `json:"data"`
	} `json:"refunds"`
	BalanceTransaction *balanceRef `json:"balance_transaction"`
}

type refundObject struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	Amount        *int64            `json:"amount"`
	Currency      string            `json:"currency"`
	Created       *int64            `json:"created"`
	Status        string            `json:"status"`
	Charge        expandable        `json:"charge"`
	PaymentIntent expandable        `json:"payment_intent"`
	Metadata      map[string]string `json:"metadata"`
	// BalanceTransaction is set when it was expanded.
	BalanceTransaction *balanceRef `json:"balance_transaction"`
}

type paymentIntentObject struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	Amount           *int64            `json:"amount"`
	AmountReceived   *int64            `json:"amount_received"`
	Currency         string            `json:"currency"`
	Created          *int64            `json:"created"`
	Status           string            `json:"status"`
	LatestCharge     expandable        `json:"latest_charge"`
	Metadata         map[string]string `json:"metadata"`
	LastPaymentError *struct {
		Code        string `json:"code"`
		DeclineCode string `json:"decline_code"`
		Message     string `json:"message"`
	} `json:"last_payment_error"`
}

type balanceTxnObject struct {
	ID                string      `json:"id"`
	Object            string      `json:"object"`
	Amount            *int64      `json:"amount"`
	Fee               *int64      `json:"fee"`
	Currency          string      `json:"currency"`
	Created           *int64      `json:"created"`
	Type              string      `json:"type"`
	Status            string      `json:"status"`
	Source            sourceRef   `json:"source"`
	ReportingCategory string      `json:"reporting_category"`
	ExchangeRate      json.Number `json:"exchange_rate"`
}

// balanceRef is a balance transaction field: an id, or the object when it
// was expanded (then Amount is set).
type balanceRef struct {
	ID                string
	Amount            *int64
	Currency          string
	ExchangeRate      json.Number
	Created           *int64
	Status            string
	ReportingCategory string
}

func (b *balanceRef) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		var o balanceTxnObject
		if err := json.Unmarshal(data, &o); err != nil {
			return err
		}
		*b = balanceRef{ID: o.ID, Amount: o.Amount, Currency: o.Currency, ExchangeRate: o.ExchangeRate, Created: o.Created,
			Status: o.Status, ReportingCategory: o.ReportingCategory}
		return nil
	}
	var id expandable
	if err := id.UnmarshalJSON(data); err != nil {
		return err
	}
	*b = balanceRef{ID: string(id)}
	return nil
}

// sourceRef is a balance transaction's source: an id, or the object when
// it was expanded, of which the charge it belongs to is kept.
type sourceRef struct {
	ID, Object string
	Charge     string
}

func (r *sourceRef) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		var o struct {
			ID     string     `json:"id"`
			Object string     `json:"object"`
			Charge expandable `json:"charge"`
		}
		if err := json.Unmarshal(data, &o); err != nil {
			return err
		}
		*r = sourceRef{ID: o.ID, Object: o.Object, Charge: string(o.Charge)}
		if o.Object == "charge" {
			r.Charge = o.ID
		}
		return nil
	}
	var id expandable
	if err := id.UnmarshalJSON(data); err != nil {
		return err
	}
	*r = sourceRef{ID: string(id)}
	if strings.HasPrefix(r.ID, "ch_") || strings.HasPrefix(r.ID, "py_") {
		r.Charge = r.ID
	}
	return nil
}

// disputeObject is a dispute (chargeback) with its balance transactions:
// none while the funds are still in the balance, one when they were
// withdrawn, a second when they were reinstated.
type disputeObject struct {
	ID                  string             `json:"id"`
	Object              string             `json:"object"`
	Amount              *int64             `json:"amount"`
	Currency            string             `json:"currency"`
	Created             *int64             `json:"created"`
	Status              string             `json:"status"`
	Charge              json.RawMessage    `json:"charge"`
	PaymentIntent       expandable         `json:"payment_intent"`
	Metadata            map[string]string  `json:"metadata"`
	BalanceTransactions []balanceTxnObject `json:"balance_transactions"`
}

// decodeObject decodes one Stripe object strictly enough to name the field at
// fault: a wrong type, a fractional amount, malformed JSON or a key named
// twice (internal/jsonbody's rule, which encoding/json would settle by
// keeping the last value) is a *ledger.FieldError whose field is prefix
// plus the JSON path.
func decodeObject(raw []byte, prefix string, v any) error {
	err := jsonbody.Decode(raw, v, jsonbody.Options{})
	var (
		te  *json.UnmarshalTypeError
		dup *jsonbody.DuplicateKeyError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &dup):
		return &ledger.FieldError{Field: prefix + dup.Path, Err: errors.New(dup.Reason())}
	case errors.As(err, &te):
		field := prefix + te.Field
		if te.Field == "" {
			field = wholeField(prefix)
		}
		return &ledger.FieldError{Field: field, Err: fmt.Errorf("want %s, got JSON %s", jsonKind(te.Type), te.Value)}
	case errors.Is(err, jsonbody.ErrTrailingData):
		return &ledger.FieldError{Field: wholeField(prefix), Err: errors.New("trailing data after the JSON object")}
	}
	return &ledger.FieldError{Field: wholeField(prefix), Err: fmt.Errorf("not a JSON object: %w", err)}
}

func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int64, reflect.Int:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice:
		return "an array"
	}
	return t.String()
}

// wholeField names the object at prefix itself, or the body at the top.
func wholeField(prefix string) string {
	if f := strings.TrimSuffix(prefix, "."); f != "" {
		return f
	}
	return "(body)"
}

func fieldErr(prefix, field string, err error) error {
	return &ledger.FieldError{Field: prefix + field, Err: err}
}

func needID(prefix, id, object, wantObject string) error {
	if strings.TrimSpace(id) == "" {
		return fieldErr(prefix, "id", errors.New("is missing"))
	}
	if object != "" && object != wantObject {
		return fieldErr(prefix, "object", fmt.Errorf("is %q, want %q", object, wantObject))
	}
	return nil
}

func needAmount(prefix, field string, minor *int64, currency string, allowNegative bool) (money.Amount, error) {
	if minor == nil {
		return money.Amount{}, fieldErr(prefix, field, errors.New("is missing"))
	}
	if currency == "" {
		return money.Amount{}, fieldErr(prefix, "currency", errors.New("is missing"))
	}
	if _, err := money.NormalizeCurrency(currency); err != nil {
		return money.Amount{}, fieldErr(prefix, "currency", err)
	}
	if *minor < 0 && !allowNegative {
		return money.Amount{}, fieldErr(prefix, field, fmt.Errorf("%d %w", *minor, errNegative))
	}
	a, err := fromMinor(*minor, currency)
	if err == nil {
		err = ledger.CheckAmount(a)
	}
	if err != nil {
		return money.Amount{}, fieldErr(prefix, field, err)
	}
	return a, nil
}

func needTime(prefix, field string, unix *int64) (time.Time, error) {
	if unix == nil {
		return time.Time{}, fieldErr(prefix, field, errors.New("is missing"))
	}
	if *unix < 1 || *unix > maxUnix {
		return time.Time{}, fieldErr(prefix, field, fmt.Errorf("%d is not a plausible Unix time", *unix))
	}
	if err := ledger.CheckTime(time.Unix(*unix, 0)); err != nil {
		return time.Time{}, fieldErr(prefix, field, err)
	}
	return time.Unix(*unix, 0).UTC(), nil
}

// sighter builds the source of each sighting: the channel, how a sighting
// is identified within it, and when it was received.
type sighter struct {
	channel    string
	ref        func(objectID string) string
	receivedAt time.Time
	// key is the metadata key of the intent key; "" is MetadataIntentKey.
	key string
}

func (s sighter) intentKey(md map[string]string) string { return md[metadataKey(s.key)] }

func (s sighter) sighting(t ledger.ProviderTxn, objectID string, raw []byte) providers.Sighting {
	return providers.Sighting{Txn: t, Source: ledger.Source{Channel: s.channel, Ref: s.ref(objectID),
		Raw: append([]byte(nil), raw...), ReceivedAt: s.receivedAt}}
}

// chargeSightings normalises a charge object, and the refunds embedded in it
// when they were expanded. Nothing is returned unless every part is valid.
func chargeSightings(raw []byte, prefix string, s sighter) ([]providers.Sighting, error) {
	var c chargeObject
	if err := decodeObject(raw, prefix, &c); err != nil {
		return nil, err
	}
	if err := needID(prefix, c.ID, c.Object, "charge"); err != nil {
		return nil, err
	}
	amt, err := needAmount(prefix, "amount", c.Amount, c.Currency, false)
	if err != nil {
		return nil, err
	}
	at, err := needTime(prefix, "created", c.Created)
	if err != nil {
		return nil, err
	}
	var st ledger.TxnStatus
	switch c.Status {
	case "succeeded":
		st = ledger.TxnSucceeded
		if c.Captured != nil && !*c.Captured {
			// Authorised but not captured: no money has moved yet.
			st = ledger.TxnPending
		}
	case "pending":
		st = ledger.TxnPending
	case "failed":
		st = ledger.TxnFailed
	default:
		return nil, fieldErr(prefix, "status", fmt.Errorf("unknown charge status %q", c.Status))
	}
	txn := ledger.ProviderTxn{Provider: Provider, ID: c.ID, Type: ledger.TxnCharge, Status: st, Amount: amt,
		OccurredAt: at, Reference: s.intentKey(c.Metadata), ProviderRef: string(c.PaymentIntent),
		Counterparty: counterparty(c)}
	if txn.Settlement, txn.ExchangeRate, err = settlement(prefix+"balance_transaction.", amt, c.BalanceTransaction); err != nil {
		return nil, err
	}
	out := []providers.Sighting{s.sighting(txn, c.ID, raw)}
	if c.Refunds != nil {
		for i, r := range c.Refunds.Data {
			rs, err := refundSighting(r, fmt.Sprintf("%srefunds.data[%d].", prefix, i), s, c)
			if err != nil {
				return nil, err
			}
			out = append(out, rs)
		}
	}
	return out, nil
}

func counterparty(c chargeObject) string {
	if c.Customer != "" {
		return string(c.Customer)
	}
	if c.BillingDetails != nil && c.BillingDetails.Email != nil && *c.BillingDetails.Email != "" {
		return ledger.MaskCustomer(*c.BillingDetails.Email)
	}
	if c.ReceiptEmail != nil {
		return ledger.MaskCustomer(*c.ReceiptEmail)
	}
	return ""
}

// refundSighting normalises a refund. parent is the charge it was embedded
// in, if any, whose reference and counterparty it inherits.
func refundSighting(raw []byte, prefix string, s sighter, parent chargeObject) (providers.Sighting, error) {
	var r refundObject
	if err := decodeObject(raw, prefix, &r); err != nil {
		return providers.Sighting{}, err
	}
	if err := needID(prefix, r.ID, r.Object, "refund"); err != nil {
		return providers.Sighting{}, err
	}
	amt, err := needAmount(prefix, "amount", r.Amount, r.Currency, false)
	if err != nil {
		return providers.Sighting{}, err
	}
	at, err := needTime(prefix, "created", r.Created)
	if err != nil {
		return providers.Sighting{}, err
	}
	var st ledger.TxnStatus
	switch r.Status {
	case "succeeded":
		st = ledger.TxnSucceeded
	case "pending", "requires_action":
		st = ledger.TxnPending
	case "failed", "canceled":
		st = ledger.TxnFailed
	default:
		return providers.Sighting{}, fieldErr(prefix, "status", fmt.Errorf("unknown refund status %q", r.Status))
	}
	linked := string(r.Charge)
	if linked == "" {
		linked = parent.ID
	}
	ref := s.intentKey(r.Metadata)
	if ref == "" {
		ref = s.intentKey(parent.Metadata)
	}
	pi := string(r.PaymentIntent)
	if pi == "" {
		pi = string(parent.PaymentIntent)
	}
	txn := ledger.ProviderTxn{Provider: Provider, ID: r.ID, Type: ledger.TxnRefund, Status: st, Amount: amt,
		OccurredAt: at, Reference: ref, ProviderRef: pi, Counterparty: counterparty(parent), LinkedID: linked}
	if txn.Settlement, txn.ExchangeRate, err = settlement(prefix+"balance_transaction.", amt, r.BalanceTransaction); err != nil {
		return providers.Sighting{}, err
	}
	return s.sighting(txn, r.ID, raw), nil
}

// settlement returns what a payment presented as presented settled as, from
// its expanded balance transaction, when that is in another currency; zero
// and "" otherwise (not expanded, or the same currency).
func settlement(prefix string, presented money.Amount, bt *balanceRef) (money.Amount, string, error) {
	if bt == nil || bt.Amount == nil || bt.Currency == "" {
		return money.Amount{}, "", nil
	}
	a, err := needAmount(prefix, "amount", bt.Amount, bt.Currency, true)
	if err != nil {
		return money.Amount{}, "", err
	}
	if a.Currency == presented.Currency {
		return money.Amount{}, "", nil
	}
	rate, err := exchangeRate(prefix, bt.ExchangeRate)
	return abs(a), rate, err
}

// exchangeRate checks a balance transaction's exchange_rate: a positive
// decimal kept as Stripe wrote it, or "" when null.
func exchangeRate(prefix string, n json.Number) (string, error) {
	if n == "" {
		return "", nil
	}
	d, err := decimal.NewFromString(string(n))
	if err != nil || !d.IsPositive() {
		return "", fieldErr(prefix, "exchange_rate", fmt.Errorf("%s is not a positive decimal", n))
	}
	return string(n), nil
}

// byObjectListing lists the categories whose main transaction comes from
// the listing of their own objects (charges, refunds, disputes): their
// balance transactions add only their fee.
var byObjectListing = map[string]bool{"charge": true, "refund": true, "dispute": true, "dispute_reversal": true,
	"refund_failure": true}

// typeCategories gives a reporting category to balance transactions that
// carry none (older API versions), by type.
var typeCategories = map[string]string{"charge": "charge", "payment": "charge", "refund": "refund",
	"payment_refund": "refund", "payout": "payout", "stripe_fee": "fee", "application_fee": "fee", "tax_fee": "fee",
	"payout_cancel": "payout_reversal", "payout_failure": "payout_reversal", "transfer": "transfer",
	"adjustment": "other_adjustment", "topup": "topup"}

// balanceTxnSightings normalises a balance transaction the way a report row
// of the same balance transaction is read (balanceLine.normalize), except
// that charges, refunds, disputes and their reversals and failures come
// from their own listings, which know the customer-facing amounts and the
// metadata: of those it adds only the fee.
func balanceTxnSightings(raw []byte, prefix string, s sighter) ([]providers.Sighting, error) {
	var b balanceTxnObject
	if err := decodeObject(raw, prefix, &b); err != nil {
		return nil, err
	}
	if err := needID(prefix, b.ID, b.Object, "balance_transaction"); err != nil {
		return nil, err
	}
	amt, err := needAmount(prefix, "amount", b.Amount, b.Currency, true)
	if err != nil {
		return nil, err
	}
	fee, err := needAmount(prefix, "fee", b.Fee, b.Currency, true)
	if err != nil {
		return nil, err
	}
	at, err := needTime(prefix, "created", b.Created)
	if err != nil {
		return nil, err
	}
	rate, err := exchangeRate(prefix, b.ExchangeRate)
	if err != nil {
		return nil, err
	}
	st := ledger.TxnSucceeded
	switch b.Status {
	case "available":
	case "pending":
		st = ledger.TxnPending
	default:
		return nil, fieldErr(prefix, "status", fmt.Errorf("unknown balance transaction status %q", b.Status))
	}
	cat := b.ReportingCategory
	if cat == "" {
		if cat = typeCategories[b.Type]; cat == "" {
			cat = b.Type
		}
	}
	if cat == "payout" && b.Source.ID == "" {
		return nil, fieldErr(prefix, "source", errors.New("is missing on a payout"))
	}
	line := balanceLine{BalanceTxnID: b.ID, Created: at, Category: cat, SourceID: b.Source.ID, ChargeID: b.Source.Charge,
		Gross: amt, Fee: fee, ExchangeRate: rate, Status: st}
	if byObjectListing[cat] {
		if fee.Value.IsZero() {
			return nil, nil
		}
		id := b.ID
		if cat == "dispute_reversal" || cat == "refund_failure" {
			id += feeSuffix // the main transaction has the balance transaction's id
		}
		txn := ledger.ProviderTxn{Provider: Provider, ID: id, Type: ledger.TxnFee, Status: st, Amount: fee, OccurredAt: at,
			LinkedID: firstOf(b.Source.Charge, b.Source.ID)}
		return []providers.Sighting{s.sighting(txn, b.ID, raw)}, nil
	}
	res, lerr := line.normalize()
	if lerr != nil {
		return nil, fieldErr(prefix, lerr.field, lerr.err)
	}
	out := make([]providers.Sighting, len(res.txns))
	for i, t := range res.txns {
		out[i] = s.sighting(t, b.ID, raw)
	}
	if res.warning != "" {
		out[0].Warnings = []string{"balance transaction " + b.ID + ": " + res.warning}
	}
	out[0].Category = res.category
	if t := res.txns[0]; t.Type == ledger.TxnPayout {
		out[0].Payout = &ledger.Payout{Provider: Provider, ID: t.ID, InitiatedAt: t.OccurredAt}
	}
	return out, nil
}

// disputeSightings normalises a dispute: the dispute itself (pending while
// the funds are still in the balance, succeeded once withdrawn, failed when
// an inquiry closed without a chargeback) and a dispute reversal for each
// reinstatement. Fees come from the balance transactions' listing.
// disputeCharge is a dispute's charge: the object when expanded, else only
// its id.
func disputeCharge(prefix string, raw json.RawMessage) (chargeObject, error) {
	var ch chargeObject
	if b := bytes.TrimSpace(raw); len(b) > 0 && b[0] == '{' {
		if err := decodeObject(b, prefix+"charge.", &ch); err != nil {
			return chargeObject{}, err
		}
	} else {
		var id expandable
		if err := id.UnmarshalJSON(b); err != nil || id == "" {
			return chargeObject{}, fieldErr(prefix, "charge", errors.New("is missing"))
		}
		ch.ID = string(id)
	}
	return ch, nil
}

// disputeStatus is the status of a dispute's own transaction before any
// withdrawal: pending while it is open or decided, failed when it closed
// as a warning or was prevented.
func disputeStatus(prefix, status string) (ledger.TxnStatus, error) {
	switch status {
	case "warning_needs_response", "warning_under_review", "needs_response", "under_review", "won", "lost":
		return ledger.TxnPending, nil
	case "warning_closed", "prevented":
		return ledger.TxnFailed, nil
	}
	return "", fieldErr(prefix, "status", fmt.Errorf("unknown dispute status %q", status))
}

func disputeSightings(raw []byte, prefix string, s sighter) ([]providers.Sighting, error) {
	var d disputeObject
	if err := decodeObject(raw, prefix, &d); err != nil {
		return nil, err
	}
	if err := needID(prefix, d.ID, d.Object, "dispute"); err != nil {
		return nil, err
	}
	amt, err := needAmount(prefix, "amount", d.Amount, d.Currency, false)
	if err != nil {
		return nil, err
	}
	created, err := needTime(prefix, "created", d.Created)
	if err != nil {
		return nil, err
	}
	ch, err := disputeCharge(prefix, d.Charge)
	if err != nil {
		return nil, err
	}
	st, err := disputeStatus(prefix, d.Status)
	if err != nil {
		return nil, err
	}
	ref := s.intentKey(ch.Metadata)
	if ref == "" {
		ref = s.intentKey(d.Metadata)
	}
	pi := firstOf(string(d.PaymentIntent), string(ch.PaymentIntent))
	base := ledger.ProviderTxn{Provider: Provider, Amount: amt, Reference: ref, ProviderRef: pi,
		Counterparty: counterparty(ch), LinkedID: ch.ID}
	dispute := base
	dispute.ID, dispute.Type, dispute.Status, dispute.OccurredAt = d.ID, ledger.TxnDispute, st, created
	var out []providers.Sighting
	var reversals []ledger.ProviderTxn
	for i, b := range d.BalanceTransactions {
		bp := fmt.Sprintf("%sbalance_transactions[%d].", prefix, i)
		if err := needID(bp, b.ID, b.Object, "balance_transaction"); err != nil {
			return nil, err
		}
		gross, err := needAmount(bp, "amount", b.Amount, b.Currency, true)
		if err != nil {
			return nil, err
		}
		at, err := needTime(bp, "created", b.Created)
		if err != nil {
			return nil, err
		}
		rate, err := exchangeRate(bp, b.ExchangeRate)
		if err != nil {
			return nil, err
		}
		withdrawal := b.ReportingCategory == "dispute" || b.ReportingCategory == "" && gross.Value.IsNegative()
		txn := base
		if gross.Currency == amt.Currency {
			txn.Amount = abs(gross)
		} else {
			txn.Settlement, txn.ExchangeRate = abs(gross), rate
		}
		if withdrawal {
			// The funds were withdrawn: the dispute is of the money now.
			dispute.Status, dispute.OccurredAt = ledger.TxnSucceeded, at
			dispute.Settlement, dispute.ExchangeRate = txn.Settlement, txn.ExchangeRate
			continue
		}
		txn.ID, txn.Type, txn.Status, txn.OccurredAt = b.ID, ledger.TxnDisputeReversal, ledger.TxnSucceeded, at
		if b.Status == "pending" {
			txn.Status = ledger.TxnPending
		}
		reversals = append(reversals, txn)
	}
	out = append(out, s.sighting(dispute, d.ID, raw))
	for _, r := range reversals {
		out = append(out, s.sighting(r, d.ID, raw))
	}
	return out, nil
}

func abs(a money.Amount) money.Amount {
	return money.Amount{Value: a.Value.Abs(), Currency: a.Currency}
}
func neg(a money.Amount) money.Amount {
	return money.Amount{Value: a.Value.Neg(), Currency: a.Currency}
}
