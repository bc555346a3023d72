package stripe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	stripeapi "github.com/stripe/stripe-go/v85"

	"github.com/reconcilehq/reconcile/providers"
)

// classify turns an error from a Stripe call into a *providers.Error whose
// kind tells the charge worker what the money may have done:
//
//   - declines and invalid requests are Permanent: Stripe refused to act;
//   - rate limits, lock timeouts, a key still in flight, refused
//     connections and authentication failures are Retryable: Stripe
//     certainly did not act;
//   - network errors, timeouts, 5xx answers, undecodable answers and
//     idempotency conflicts are Ambiguous: the request may have charged, and
//     only the same key (or a look-up) may follow.
//
// The Stripe error's own text is not kept: it carries the PaymentIntent,
// whose client secret must not reach logs.
func classify(err error) *providers.Error {
	var se *stripeapi.Error
	if errors.As(err, &se) {
		return classifyAPI(se)
	}
	pe := &providers.Error{Provider: Provider, Kind: providers.Ambiguous, Err: err}
	var oe *net.OpError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		pe.Message = "request interrupted before an answer: " + err.Error()
	case errors.As(err, &oe) && oe.Op == "dial":
		// The connection was never made, so nothing was sent.
		pe.Kind = providers.Retryable
	}
	return pe
}

func classifyAPI(se *stripeapi.Error) *providers.Error {
	status := se.HTTPStatusCode
	pe := &providers.Error{Provider: Provider, Code: string(se.Code), Kind: providers.Ambiguous}
	pe.Message = se.Msg
	if pe.Message == "" {
		pe.Message = http.StatusText(status)
	}
	pe.Message = fmt.Sprintf("%s (HTTP %d", pe.Message, status)
	if se.RequestID != "" {
		pe.Message += ", request " + se.RequestID
	}
	pe.Message += ")"
	if se.LastResponse != nil && se.LastResponse.Header != nil {
		if s, err := strconv.Atoi(se.LastResponse.Header.Get("Retry-After")); err == nil && s > 0 {
			pe.RetryAfter = time.Duration(s) * time.Second
		}
	}
	switch {
	case se.Code == stripeapi.ErrorCodeIdempotencyKeyInUse, se.Code == stripeapi.ErrorCodeLockTimeout,
		se.Code == stripeapi.ErrorCodeRateLimit, se.Type == stripeapi.ErrorTypeRateLimit,
		status == http.StatusTooManyRequests, status == http.StatusConflict:
		pe.Kind = providers.Retryable
	case se.Type == stripeapi.ErrorTypeIdempotency:
		// Another request with different parameters already used this key;
		// what it did is unknown here and must be looked up.
		pe.Kind = providers.Ambiguous
		if pe.Code == "" {
			pe.Code = string(stripeapi.ErrorTypeIdempotency)
		}
	case status >= 500, se.Type == stripeapi.ErrorTypeAPI:
		pe.Kind = providers.Ambiguous
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		// The key was refused before anything happened; retrying helps once
		// the configuration is fixed.
		pe.Kind = providers.Retryable
	case se.Type == stripeapi.ErrorTypeCard, status == http.StatusPaymentRequired:
		pe.Kind = providers.Permanent
		if se.DeclineCode != "" {
			pe.Code = string(se.DeclineCode)
		}
	case se.Type == stripeapi.ErrorTypeInvalidRequest, status >= 400 && status < 500:
		pe.Kind = providers.Permanent
	}
	return pe
}
