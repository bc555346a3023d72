package fake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
)

// Charger charges through a fake Server.
type Charger struct {
	// Name is the provider name used in errors.
	Name    string
	BaseURL string
	// HonoursKeys must match the server's HonourKeys.
	HonoursKeys bool
	// Timeout bounds one request; default 5 s.
	Timeout time.Duration
	once    sync.Once
	client  *http.Client
}

var (
	_ providers.Charger       = (*Charger)(nil)
	_ providers.KeyHonourer   = (*Charger)(nil)
	_ providers.StatusQuerier = (*Charger)(nil)

	_ providers.Refunder            = (*Charger)(nil)
	_ providers.RefundStatusQuerier = (*Charger)(nil)
)

// HonoursIdempotencyKeys reports the server's mode.
func (c *Charger) HonoursIdempotencyKeys() bool { return c.HonoursKeys }

func (c *Charger) http() *http.Client {
	c.once.Do(func() {
		t := c.Timeout
		if t == 0 {
			t = 5 * time.Second
		}
		c.client = &http.Client{Timeout: t}
	})
	return c.client
}

// Charge posts one charge under the intent key.
func (c *Charger) Charge(ctx context.Context, req providers.ChargeRequest) (providers.ChargeResult, error) {
	return c.post(ctx, "/v1/charges", req.IntentKey, chargeRequest{Amount: req.Amount.Text(), Currency: req.Amount.Currency, Customer: req.Customer})
}

// Refund posts one refund of the charge req.ChargeRef under the refund key.
func (c *Charger) Refund(ctx context.Context, req providers.RefundRequest) (providers.ChargeResult, error) {
	if req.ChargeRef == "" {
		return providers.ChargeResult{}, &providers.Error{Provider: c.Name, Kind: providers.Permanent, Code: "invalid_request",
			Message: "refund " + req.RefundKey + ": the charge's reference is unknown"}
	}
	return c.post(ctx, "/v1/refunds", req.RefundKey, chargeRequest{Amount: req.Amount.Text(), Currency: req.Amount.Currency, Charge: req.ChargeRef})
}

// QueryRefundStatus looks a refund up by its id.
func (c *Charger) QueryRefundStatus(ctx context.Context, _ providers.RefundRequest, providerRef string) (providers.ChargeResult, error) {
	return c.get(ctx, "/v1/refunds/"+providerRef)
}

func (c *Charger) post(ctx context.Context, path, key string, r chargeRequest) (providers.ChargeResult, error) {
	body, _ := json.Marshal(r)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return providers.ChargeResult{}, err
	}
	hr.Header.Set("Idempotency-Key", key)
	hr.Header.Set("Content-Type", "application/json")
	if !c.HonoursKeys {
		// net/http re-sends a POST that carries an Idempotency-Key by itself
		// when a reused connection breaks before the answer; against a
		// provider that ignores keys that is a second charge no ledger sees.
		// A request without GetBody is never replayed.
		hr.GetBody = nil
	}
	resp, err := c.http().Do(hr)
	if err != nil {
		return providers.ChargeResult{}, c.transportError(err)
	}
	defer resp.Body.Close()
	return c.result(resp)
}

// QueryStatus looks a charge up by its id.
func (c *Charger) QueryStatus(ctx context.Context, providerRef string) (providers.ChargeResult, error) {
	return c.get(ctx, "/v1/charges/"+providerRef)
}

func (c *Charger) get(ctx context.Context, path string) (providers.ChargeResult, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+path, nil)
	if err != nil {
		return providers.ChargeResult{}, err
	}
	resp, err := c.http().Do(hr)
	if err != nil {
		return providers.ChargeResult{}, c.transportError(err)
	}
	defer resp.Body.Close()
	return c.result(resp)
}

func (c *Charger) result(resp *http.Response) (providers.ChargeResult, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return providers.ChargeResult{}, c.transportError(err)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		var ch Charge
		if err := json.Unmarshal(b, &ch); err != nil {
			return providers.ChargeResult{}, &providers.Error{Provider: c.Name, Kind: providers.Ambiguous, Message: "unreadable answer", Err: err}
		}
		amount, err := money.Parse(ch.Amount, ch.Currency)
		if err != nil {
			return providers.ChargeResult{}, &providers.Error{Provider: c.Name, Kind: providers.Ambiguous, Message: "unreadable amount", Err: err}
		}
		return providers.ChargeResult{ProviderRef: ch.ID, TxnID: ch.ID, Status: providers.StatusSucceeded, Amount: amount}, nil
	case resp.StatusCode == http.StatusPaymentRequired:
		return providers.ChargeResult{}, &providers.Error{Provider: c.Name, Kind: providers.Permanent, Code: "card_declined", Message: "the card was declined"}
	case resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusTooManyRequests:
		return providers.ChargeResult{}, &providers.Error{Provider: c.Name, Kind: providers.Retryable, Code: fmt.Sprint(resp.StatusCode), Message: "provider unavailable"}
	case resp.StatusCode == http.StatusNotFound:
		return providers.ChargeResult{Status: providers.StatusUnknown}, nil
	case resp.StatusCode >= 500:
		return providers.ChargeResult{}, &providers.Error{Provider: c.Name, Kind: providers.Ambiguous, Code: fmt.Sprint(resp.StatusCode), Message: "provider error"}
	default:
		return providers.ChargeResult{}, &providers.Error{Provider: c.Name, Kind: providers.Permanent, Code: fmt.Sprint(resp.StatusCode), Message: string(b)}
	}
}

// transportError classifies a failed exchange: a connection that was never
// made cannot have charged; anything after sending may have.
func (c *Charger) transportError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return &providers.Error{Provider: c.Name, Kind: providers.Retryable, Message: "cannot connect", Err: err}
	}
	return &providers.Error{Provider: c.Name, Kind: providers.Ambiguous, Message: "no answer", Err: err}
}

// Instant is a charger that succeeds at once without any I/O, for measuring
// everything but the provider.
type Instant struct{}

// Charge succeeds with the intent key as reference.
func (Instant) Charge(_ context.Context, req providers.ChargeRequest) (providers.ChargeResult, error) {
	return providers.ChargeResult{ProviderRef: "instant_" + req.IntentKey, TxnID: "instant_" + req.IntentKey,
		Status: providers.StatusSucceeded, Amount: req.Amount}, nil
}

// HonoursIdempotencyKeys is true: replaying is free.
func (Instant) HonoursIdempotencyKeys() bool { return true }

// Refund succeeds with the refund key as reference.
func (Instant) Refund(_ context.Context, req providers.RefundRequest) (providers.ChargeResult, error) {
	return providers.ChargeResult{ProviderRef: "instant_" + req.RefundKey, TxnID: "instant_" + req.RefundKey,
		Status: providers.StatusSucceeded, Amount: req.Amount}, nil
}
