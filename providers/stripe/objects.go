package stripe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
)

// Provider is the provider name stored on every Stripe transaction.
const Provider = "stripe"

// MetadataIntentKey is the metadata key under which the charger stores the
// intent key on a PaymentIntent; Stripe copies it to the charge, and the
// puller reads it back as the transaction's reference.
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
	ID                string     `json:"id"`
	Object            string     `json:"object"`
	Amount            *int64     `json:"amount"`
	Fee               *int64     `json:"fee"`
	Currency          string     `json:"currency"`
	Created           *int64     `json:"created"`
	Type              string     `json:"type"`
	Status            string     `json:"status"`
	Source            expandable `json:"source"`
	ReportingCategory string     `json:"reporting_category"`
}

// decodeObject decodes one Stripe object strictly enough to name the field at
// fault: a wrong type, a fractional amount or malformed JSON is a
// *ledger.FieldError whose field is prefix plus the JSON path.
func decodeObject(raw []byte, prefix string, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := prefix + te.Field
			if te.Field == "" {
				field = wholeField(prefix)
			}
			return &ledger.FieldError{Field: field, Err: fmt.Errorf("want %s, got JSON %s", jsonKind(te.Type), te.Value)}
		}
		return &ledger.FieldError{Field: wholeField(prefix), Err: fmt.Errorf("not a JSON object: %w", err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &ledger.FieldError{Field: wholeField(prefix), Err: errors.New("trailing data after the JSON object")}
	}
	return nil
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
}

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
		OccurredAt: at, Reference: c.Metadata[MetadataIntentKey], ProviderRef: string(c.PaymentIntent),
		Counterparty: counterparty(c)}
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
	ref := r.Metadata[MetadataIntentKey]
	if ref == "" {
		ref = parent.Metadata[MetadataIntentKey]
	}
	pi := string(r.PaymentIntent)
	if pi == "" {
		pi = string(parent.PaymentIntent)
	}
	txn := ledger.ProviderTxn{Provider: Provider, ID: r.ID, Type: ledger.TxnRefund, Status: st, Amount: amt,
		OccurredAt: at, Reference: ref, ProviderRef: pi, Counterparty: counterparty(parent), LinkedID: linked}
	return s.sighting(txn, r.ID, raw), nil
}

// balanceTxnSightings normalises what a balance transaction adds to charges
// and refunds (which have their own listings): the Stripe fee it carries, as
// a fee transaction under the balance transaction's id linked to its source,
// and payouts and Stripe's own fees. Other types add nothing.
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
	st := ledger.TxnSucceeded
	switch b.Status {
	case "available":
	case "pending":
		st = ledger.TxnPending
	default:
		return nil, fieldErr(prefix, "status", fmt.Errorf("unknown balance transaction status %q", b.Status))
	}
	source := string(b.Source)
	switch b.Type {
	case "payout":
		if source == "" {
			return nil, fieldErr(prefix, "source", errors.New("is missing on a payout"))
		}
		txn := ledger.ProviderTxn{Provider: Provider, ID: source, Type: ledger.TxnPayout, Status: st,
			Amount: abs(amt), OccurredAt: at}
		return []providers.Sighting{s.sighting(txn, b.ID, raw)}, nil
	case "stripe_fee", "application_fee", "tax_fee":
		txn := ledger.ProviderTxn{Provider: Provider, ID: b.ID, Type: ledger.TxnFee, Status: st,
			Amount: neg(amt), OccurredAt: at, LinkedID: source}
		return []providers.Sighting{s.sighting(txn, b.ID, raw)}, nil
	}
	if fee.Value.IsZero() {
		return nil, nil
	}
	txn := ledger.ProviderTxn{Provider: Provider, ID: b.ID, Type: ledger.TxnFee, Status: st,
		Amount: fee, OccurredAt: at, LinkedID: source}
	return []providers.Sighting{s.sighting(txn, b.ID, raw)}, nil
}

func abs(a money.Amount) money.Amount {
	return money.Amount{Value: a.Value.Abs(), Currency: a.Currency}
}
func neg(a money.Amount) money.Amount {
	return money.Amount{Value: a.Value.Neg(), Currency: a.Currency}
}
