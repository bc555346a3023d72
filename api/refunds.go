package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/reconcilehq/reconcile/internal/jsonbody"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// refundRequest is the body of POST /v1/refunds. The provider and the
// customer are the charge's; the currency, when given, must be the
// charge's.
type refundRequest struct {
	RefundOf  string            `json:"refund_of"`
	Amount    json.Number       `json:"amount"`
	Currency  string            `json:"currency"`
	Reference string            `json:"reference"`
	Metadata  map[string]string `json:"metadata"`
}

// createRefund serves POST /v1/refunds: a refund intent for (part of) a
// charge intent, under the same Idempotency-Key rules as intents. A refund
// beyond what remains refundable of the charge is refused with 422.
func (api *API) createRefund(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	p, problems, err := api.parseRefundRequest(r, key)
	var dup *jsonbody.DuplicateKeyError
	if errors.As(err, &dup) {
		writeError(w, duplicateKey(dup))
		return
	}
	if err != nil {
		api.internal(w, err)
		return
	}
	if len(problems) > 0 {
		writeError(w, invalid(problems))
		return
	}
	api.save(w, r, key, p)
}

// parseRefundRequest reads the body and completes the refund from its
// charge; the error is a *jsonbody.DuplicateKeyError or a failure to read
// the charge.
func (api *API) parseRefundRequest(r *http.Request, key string) (ledger.IntentParams, []fieldProblem, error) {
	var problems []fieldProblem
	bad := func(field, format string, args ...any) {
		problems = append(problems, fieldProblem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case key == "":
		bad("Idempotency-Key", "header is required: the refund's stable key, e.g. refund:order-4471:1")
	case len(key) > 255:
		bad("Idempotency-Key", "longer than 255 characters")
	}
	var req refundRequest
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxIntentBody))
	if err == nil {
		err = jsonbody.Decode(raw, &req, jsonbody.Options{UseNumber: true, DisallowUnknownFields: true})
	}
	var dup *jsonbody.DuplicateKeyError
	if errors.As(err, &dup) {
		return ledger.IntentParams{}, nil, dup
	}
	if err != nil {
		bad("body", "not a JSON refund: %v", err)
		return ledger.IntentParams{}, problems, nil
	}
	p := ledger.IntentParams{Key: key, Kind: ledger.IntentRefund, RefundOf: strings.TrimSpace(req.RefundOf),
		Reference: req.Reference, Metadata: req.Metadata}
	if p.RefundOf == "" {
		bad("refund_of", "is required: the key of the charge intent to refund")
		return p, problems, nil
	}
	charge, err := api.cfg.Store.GetIntent(r.Context(), p.RefundOf)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		bad("refund_of", "no intent has key %q", p.RefundOf)
		return p, problems, nil
	case err != nil:
		return p, nil, err
	}
	p.Provider, p.Account, p.Customer = charge.Provider, charge.Account, charge.Customer
	cur := charge.Amount.Currency
	if req.Currency != "" {
		if cur, err = money.NormalizeCurrency(req.Currency); err != nil {
			bad("currency", "%v", err)
			return p, problems, nil
		}
	}
	switch {
	case req.Amount == "":
		bad("amount", "is required, as a decimal string such as \"500.00\"")
	default:
		if p.Amount, err = money.Parse(req.Amount.String(), cur); err != nil {
			bad("amount", "%v", err)
		}
	}
	if len(problems) > 0 {
		return p, problems, nil
	}
	p, err = p.Normalize()
	var fe *ledger.FieldError
	if errors.As(err, &fe) {
		bad(fe.Field, "%v", fe.Err)
	}
	return p, problems, nil
}
