package stripe

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	stripeapi "github.com/stripe/stripe-go/v85"

	"github.com/reconcilehq/reconcile/providers"
)

var (
	_ providers.Refunder            = (*Client)(nil)
	_ providers.RefundFinder        = (*Client)(nil)
	_ providers.RefundStatusQuerier = (*Client)(nil)
)

// refundReasons are the reasons Stripe accepts on a refund; a request's
// other reasons stay in its metadata only.
var refundReasons = map[string]bool{"duplicate": true, "fraudulent": true, "requested_by_customer": true}

// Refund creates a refund of the charge req names (its PaymentIntent, or
// its charge when no PaymentIntent is known) with req.RefundKey as the
// Idempotency-Key and as metadata under the intent metadata key, so that a
// re-send replays the first refund and a pull links the refund to its
// refund intent. Every attempt sends byte-for-byte the same parameters.
//
// Errors are *providers.Error; Stripe's refusal (the charge is already
// refunded, the amount exceeds what is left) is permanent.
func (c *Client) Refund(ctx context.Context, req providers.RefundRequest) (providers.ChargeResult, error) {
	params, err := c.refundParams(req)
	if err != nil {
		return providers.ChargeResult{}, &providers.Error{Provider: Provider, Kind: providers.Permanent,
			Code: "invalid_request", Message: err.Error(), Err: err}
	}
	r, err := c.sc.V1Refunds.Create(ctx, params)
	if err != nil {
		return providers.ChargeResult{}, classify(err)
	}
	return refundResult(r)
}

func (c *Client) refundParams(req providers.RefundRequest) (*stripeapi.RefundCreateParams, error) {
	switch {
	case strings.TrimSpace(req.RefundKey) == "":
		return nil, errors.New("refund key is empty")
	case len(req.RefundKey) > 255:
		return nil, fmt.Errorf("refund key is %d characters; Stripe takes at most 255", len(req.RefundKey))
	}
	minor, _, err := toMinor(req.Amount) // Stripe takes the currency from the charge
	if err != nil {
		return nil, err
	}
	if minor <= 0 {
		return nil, fmt.Errorf("amount %s is not positive", req.Amount)
	}
	p := &stripeapi.RefundCreateParams{Amount: stripeapi.Int64(minor)}
	pi, ch, err := refundTarget(req)
	if err != nil {
		return nil, err
	}
	p.PaymentIntent, p.Charge = pi, ch
	md := map[string]string{}
	for k, v := range req.Metadata {
		md[k] = v
	}
	md[c.key()] = req.RefundKey
	if req.ChargeKey != "" {
		md["refund_of"] = req.ChargeKey
	}
	p.Metadata = md
	if refundReasons[req.Reason] {
		p.Reason = stripeapi.String(req.Reason)
	}
	p.SetIdempotencyKey(req.RefundKey)
	return p, nil
}

// refundTarget names the charge a refund gives money back for, as Stripe
// takes it: the PaymentIntent when one is recorded, else the charge id
// (one of the two is set).
func refundTarget(req providers.RefundRequest) (paymentIntent, charge *string, err error) {
	isCharge := func(id string) bool { return strings.HasPrefix(id, "ch_") || strings.HasPrefix(id, "py_") }
	switch {
	case strings.HasPrefix(req.ChargeRef, "pi_"):
		return stripeapi.String(req.ChargeRef), nil, nil
	case isCharge(req.ChargeTxnID):
		return nil, stripeapi.String(req.ChargeTxnID), nil
	case isCharge(req.ChargeRef):
		return nil, stripeapi.String(req.ChargeRef), nil
	}
	return nil, nil, fmt.Errorf("charge %s: no PaymentIntent or charge id is recorded for it", req.ChargeKey)
}

// QueryRefundStatus retrieves the refund named by providerRef (re_...).
func (c *Client) QueryRefundStatus(ctx context.Context, _ providers.RefundRequest, providerRef string) (providers.ChargeResult, error) {
	if !strings.HasPrefix(providerRef, "re_") && !strings.HasPrefix(providerRef, "pyr_") {
		return providers.ChargeResult{}, &providers.Error{Provider: Provider, Kind: providers.Permanent,
			Code: "invalid_request", Message: fmt.Sprintf("%q is not a refund id", providerRef)}
	}
	r, err := c.sc.V1Refunds.Retrieve(ctx, providerRef, nil)
	if err != nil {
		return providers.ChargeResult{}, classify(err)
	}
	return refundResult(r)
}

// FindRefund lists the refunds of the charge req names and picks those
// whose metadata carries req.RefundKey (Stripe's Search API does not cover
// refunds). When several do, a succeeded one wins, then one in progress,
// then the newest.
func (c *Client) FindRefund(ctx context.Context, req providers.RefundRequest) (providers.ChargeResult, bool, error) {
	params := &stripeapi.RefundListParams{}
	pi, ch, err := refundTarget(req)
	if err != nil {
		return providers.ChargeResult{}, false, &providers.Error{Provider: Provider, Kind: providers.Permanent, Code: "invalid_request",
			Message: err.Error()}
	}
	params.PaymentIntent, params.Charge = pi, ch
	params.Limit = stripeapi.Int64(int64(c.cfg.PageSize))
	var found []refundObject
	for r, err := range c.sc.V1Refunds.List(ctx, params).All(ctx) {
		if err != nil {
			return providers.ChargeResult{}, false, classify(err)
		}
		o, err := decodeRefund(r)
		if err != nil {
			return providers.ChargeResult{}, false, err
		}
		if o.Metadata[c.key()] == req.RefundKey {
			found = append(found, o)
		}
	}
	if len(found) == 0 {
		return providers.ChargeResult{}, false, nil
	}
	sort.SliceStable(found, func(i, j int) bool {
		ri, rj := refundRank(found[i].Status), refundRank(found[j].Status)
		if ri != rj {
			return ri < rj
		}
		return derefInt(found[i].Created) > derefInt(found[j].Created)
	})
	res, err := refundResultOf(found[0])
	if err != nil {
		return providers.ChargeResult{}, false, err
	}
	return res, true, nil
}

func refundRank(status string) int {
	switch status {
	case "succeeded":
		return 0
	case "pending", "requires_action":
		return 1
	}
	return 2
}

func decodeRefund(r *stripeapi.Refund) (refundObject, error) {
	var o refundObject
	if r == nil || r.LastResponse == nil || len(r.LastResponse.RawJSON) == 0 {
		// A listed refund carries no response of its own: its page does.
		if r != nil && r.ID != "" {
			o = refundObject{ID: r.ID, Object: "refund", Amount: stripeapi.Int64(r.Amount), Currency: string(r.Currency),
				Created: stripeapi.Int64(r.Created), Status: string(r.Status), Metadata: r.Metadata}
			return o, nil
		}
		return o, &providers.Error{Provider: Provider, Kind: providers.Ambiguous, Message: "answer without a refund body"}
	}
	if err := decodeObject(r.LastResponse.RawJSON, "", &o); err != nil {
		return o, &providers.Error{Provider: Provider, Kind: providers.Ambiguous, Message: "undecodable refund: " + err.Error(), Err: err}
	}
	return o, nil
}

func refundResult(r *stripeapi.Refund) (providers.ChargeResult, error) {
	o, err := decodeRefund(r)
	if err != nil {
		return providers.ChargeResult{}, err
	}
	return refundResultOf(o)
}

// refundResultOf maps a refund to a ChargeResult: pending and
// requires_action wait, failed and canceled failed.
func refundResultOf(o refundObject) (providers.ChargeResult, error) {
	if err := needID("", o.ID, o.Object, "refund"); err != nil {
		return providers.ChargeResult{}, badRefund(o.ID, err)
	}
	res := providers.ChargeResult{ProviderRef: o.ID, TxnID: o.ID}
	if o.Created != nil {
		at, err := needTime("", "created", o.Created)
		if err != nil {
			return providers.ChargeResult{}, badRefund(o.ID, err)
		}
		res.At = at
	}
	switch o.Status {
	case "succeeded":
		res.Status = providers.StatusSucceeded
	case "pending", "requires_action":
		res.Status = providers.StatusPending
	case "failed", "canceled":
		res.Status = providers.StatusFailed
		res.Reason = "refund " + o.Status
	default:
		res.Status = providers.StatusUnknown
	}
	if o.Amount != nil && o.Currency != "" {
		a, err := needAmount("", "amount", o.Amount, o.Currency, false)
		if err != nil {
			return providers.ChargeResult{}, badRefund(o.ID, err)
		}
		res.Amount = a
	}
	return res, nil
}

func badRefund(id string, err error) error {
	return &providers.Error{Provider: Provider, Kind: providers.Ambiguous, Message: "refund " + id + ": " + err.Error(), Err: err}
}
