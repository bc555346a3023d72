package stripe

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	stripeapi "github.com/stripe/stripe-go/v85"

	"github.com/reconcilehq/reconcile/providers"
)

// MetadataPaymentMethod is the request metadata key that names the payment
// method (pm_...) to charge; it is sent as the PaymentIntent's payment
// method, not as metadata.
const MetadataPaymentMethod = "payment_method"

// KeyRetention is how long Stripe is guaranteed to remember an idempotency
// key. An attempt older than this must be looked up (FindCharge) before its
// key is sent again.
const KeyRetention = 24 * time.Hour

var (
	_ providers.Charger       = (*Client)(nil)
	_ providers.KeyHonourer   = (*Client)(nil)
	_ providers.KeyRetention  = (*Client)(nil)
	_ providers.StatusQuerier = (*Client)(nil)
	_ providers.ChargeFinder  = (*Client)(nil)
	_ providers.Puller        = (*Client)(nil)
)

// HonoursIdempotencyKeys reports true: Stripe replays the first result for
// a key it has seen.
func (c *Client) HonoursIdempotencyKeys() bool { return true }

// IdempotencyKeyRetention returns KeyRetention.
func (c *Client) IdempotencyKeyRetention() time.Duration { return KeyRetention }

// Charge creates and confirms a PaymentIntent for req with req.IntentKey as
// the Idempotency-Key and as metadata["intent_key"]. Every attempt at one
// intent sends byte-for-byte the same parameters, so a re-send after a crash
// or an ambiguous error replays the first result instead of charging again.
//
// Errors are *providers.Error. On a decline the result also carries the
// PaymentIntent id and StatusFailed with the decline code, so the attempt
// can record what Stripe created.
func (c *Client) Charge(ctx context.Context, req providers.ChargeRequest) (providers.ChargeResult, error) {
	params, err := c.createParams(req)
	if err != nil {
		return providers.ChargeResult{}, &providers.Error{Provider: Provider, Kind: providers.Permanent,
			Code: "invalid_request", Message: err.Error(), Err: err}
	}
	pi, err := c.sc.V1PaymentIntents.Create(ctx, params)
	if err != nil {
		return declinedResult(err), classify(err)
	}
	return c.intentResult(pi)
}

func (c *Client) createParams(req providers.ChargeRequest) (*stripeapi.PaymentIntentCreateParams, error) {
	if strings.TrimSpace(req.IntentKey) == "" {
		return nil, errors.New("intent key is empty")
	}
	if len(req.IntentKey) > 255 {
		return nil, fmt.Errorf("intent key is %d characters; Stripe takes at most 255", len(req.IntentKey))
	}
	minor, cur, err := toMinor(req.Amount)
	if err != nil {
		return nil, err
	}
	if minor <= 0 {
		return nil, fmt.Errorf("amount %s is not positive", req.Amount)
	}
	pm := req.Metadata[MetadataPaymentMethod]
	if pm == "" {
		pm = c.cfg.PaymentMethod
	}
	if pm == "" {
		return nil, errors.New("no payment method: set metadata payment_method or the configured default")
	}
	md := map[string]string{}
	for k, v := range req.Metadata {
		if k != MetadataPaymentMethod {
			md[k] = v
		}
	}
	if req.Reference != "" {
		md["reference"] = req.Reference
	}
	md[c.key()] = req.IntentKey
	p := &stripeapi.PaymentIntentCreateParams{
		Amount:        stripeapi.Int64(minor),
		Currency:      stripeapi.String(cur),
		Confirm:       stripeapi.Bool(true),
		OffSession:    stripeapi.Bool(true),
		PaymentMethod: stripeapi.String(pm),
		Metadata:      md,
		// Off-session charges cannot follow a redirect; a method that would
		// need one fails instead of waiting for a customer who is not there.
		AutomaticPaymentMethods: &stripeapi.PaymentIntentCreateAutomaticPaymentMethodsParams{
			Enabled:        stripeapi.Bool(true),
			AllowRedirects: stripeapi.String("never"),
		},
	}
	switch cust := strings.TrimSpace(req.Customer); {
	case strings.HasPrefix(cust, "cus_"):
		p.Customer = stripeapi.String(cust)
	case strings.Contains(cust, "@"):
		p.ReceiptEmail = stripeapi.String(cust)
	}
	if req.Description != "" {
		p.Description = stripeapi.String(req.Description)
	}
	p.SetIdempotencyKey(req.IntentKey)
	return p, nil
}

// declinedResult fills what a decline tells about the PaymentIntent Stripe
// created, if anything.
func declinedResult(err error) providers.ChargeResult {
	var se *stripeapi.Error
	if !errors.As(err, &se) || se.Type != stripeapi.ErrorTypeCard {
		return providers.ChargeResult{}
	}
	res := providers.ChargeResult{Status: providers.StatusFailed, Code: string(se.Code), Reason: se.Msg, TxnID: se.ChargeID}
	if se.DeclineCode != "" {
		res.Code = string(se.DeclineCode)
	}
	if se.PaymentIntent != nil {
		res.ProviderRef = se.PaymentIntent.ID
	}
	return res
}

// QueryStatus retrieves the PaymentIntent named by providerRef.
func (c *Client) QueryStatus(ctx context.Context, providerRef string) (providers.ChargeResult, error) {
	if !strings.HasPrefix(providerRef, "pi_") {
		return providers.ChargeResult{}, &providers.Error{Provider: Provider, Kind: providers.Permanent,
			Code: "invalid_request", Message: fmt.Sprintf("%q is not a PaymentIntent id", providerRef)}
	}
	pi, err := c.sc.V1PaymentIntents.Retrieve(ctx, providerRef, nil)
	if err != nil {
		return providers.ChargeResult{}, classify(err)
	}
	return c.intentResult(pi)
}

// FindCharge looks the PaymentIntents up by metadata["intent_key"] with the
// Search API. Search is eventually consistent (usually under a minute), so
// it is meant for attempts older than the key retention, not for one just
// sent. When several PaymentIntents carry the key, a succeeded one wins,
// then one still in progress, then the newest.
func (c *Client) FindCharge(ctx context.Context, intentKey string) (providers.ChargeResult, bool, error) {
	q := fmt.Sprintf("metadata['%s']:'%s'", searchEscape(c.key()), searchEscape(intentKey))
	params := &stripeapi.PaymentIntentSearchParams{SearchParams: stripeapi.SearchParams{Query: q, Limit: stripeapi.Int64(100)}}
	var found []paymentIntentObject
	for pi, err := range c.sc.V1PaymentIntents.Search(ctx, params).All(ctx) {
		if err != nil {
			return providers.ChargeResult{}, false, classify(err)
		}
		o, err := decodeIntent(pi)
		if err != nil {
			return providers.ChargeResult{}, false, err
		}
		if o.Metadata[c.key()] == intentKey {
			found = append(found, o)
		}
	}
	if len(found) == 0 {
		return providers.ChargeResult{}, false, nil
	}
	sort.SliceStable(found, func(i, j int) bool {
		ri, rj := intentRank(found[i].Status), intentRank(found[j].Status)
		if ri != rj {
			return ri < rj
		}
		return derefInt(found[i].Created) > derefInt(found[j].Created)
	})
	res, err := intentResultOf(found[0], "")
	if err != nil {
		return providers.ChargeResult{}, false, badIntent(found[0].ID, err)
	}
	return res, true, nil
}

func searchEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}

func intentRank(status string) int {
	switch status {
	case "succeeded":
		return 0
	case "processing", "requires_capture", "requires_action":
		return 1
	}
	return 2
}

func derefInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func decodeIntent(pi *stripeapi.PaymentIntent) (paymentIntentObject, error) {
	var o paymentIntentObject
	if pi == nil || pi.LastResponse == nil || len(pi.LastResponse.RawJSON) == 0 {
		return o, &providers.Error{Provider: Provider, Kind: providers.Ambiguous, Message: "answer without a PaymentIntent body"}
	}
	if err := decodeObject(pi.LastResponse.RawJSON, "", &o); err != nil {
		return o, &providers.Error{Provider: Provider, Kind: providers.Ambiguous, Message: "undecodable PaymentIntent: " + err.Error(), Err: err}
	}
	return o, nil
}

func (c *Client) intentResult(pi *stripeapi.PaymentIntent) (providers.ChargeResult, error) {
	o, err := decodeIntent(pi)
	if err != nil {
		return providers.ChargeResult{}, err
	}
	res, err := intentResultOf(o, "")
	if err != nil {
		return providers.ChargeResult{}, badIntent(o.ID, err)
	}
	return res, nil
}

// badIntent reports a PaymentIntent answer that does not make sense: what
// it means for the money is unknown.
func badIntent(id string, err error) error {
	return &providers.Error{Provider: Provider, Kind: providers.Ambiguous,
		Message: "PaymentIntent " + id + ": " + err.Error(), Err: err}
}

// intentResultOf maps a PaymentIntent to a ChargeResult. Statuses that wait
// on something (processing, a capture, a customer action) are pending;
// requires_payment_method after a confirmation and canceled are failures.
func intentResultOf(o paymentIntentObject, prefix string) (providers.ChargeResult, error) {
	if err := needID(prefix, o.ID, o.Object, "payment_intent"); err != nil {
		return providers.ChargeResult{}, err
	}
	res := providers.ChargeResult{ProviderRef: o.ID, TxnID: string(o.LatestCharge)}
	if o.Created != nil {
		at, err := needTime(prefix, "created", o.Created)
		if err != nil {
			return providers.ChargeResult{}, err
		}
		res.At = at
	}
	switch o.Status {
	case "succeeded":
		res.Status = providers.StatusSucceeded
	case "processing", "requires_capture", "requires_action":
		res.Status = providers.StatusPending
	case "requires_payment_method", "canceled":
		res.Status = providers.StatusFailed
	default:
		res.Status = providers.StatusUnknown
	}
	received := o.AmountReceived
	if res.Status != providers.StatusSucceeded || received == nil || *received == 0 {
		received = o.Amount
	}
	if received != nil && o.Currency != "" {
		a, err := needAmount(prefix, "amount", received, o.Currency, false)
		if err != nil {
			return providers.ChargeResult{}, err
		}
		res.Amount = a
	}
	if e := o.LastPaymentError; e != nil && res.Status != providers.StatusSucceeded {
		res.Code, res.Reason = e.Code, e.Message
		if e.DeclineCode != "" {
			res.Code = e.DeclineCode
		}
	}
	return res, nil
}
