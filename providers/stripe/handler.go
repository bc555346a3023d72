package stripe

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reconcilehq/reconcile/internal/jsonbody"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
)

// Receiver stores a verified event body and interprets it with parser.
// (*intake.Processor).Receive satisfies it. It returns an error only when
// the body could not be stored.
type Receiver interface {
	Receive(ctx context.Context, provider string, parser providers.CallbackParser, body []byte, remote string) (intake.Result, error)
}

// DefaultWebhookTolerance is the oldest webhook signature accepted when
// WebhookConfig sets none (stripe-go's webhook.DefaultTolerance, 5 minutes).
const DefaultWebhookTolerance = webhook.DefaultTolerance

// WebhookConfig configures a WebhookHandler.
type WebhookConfig struct {
	// Secrets are the endpoint's signing secrets (whsec_...). More than one
	// while a secret is being rolled. Required; never logged.
	Secrets []string
	// Receiver stores and interprets verified bodies. Required.
	Receiver Receiver
	// Tolerance is how old a signature's timestamp may be. Default
	// DefaultWebhookTolerance.
	Tolerance time.Duration
	// MaxBodyBytes caps a body. Default 1 MiB.
	MaxBodyBytes int64
	// Logger receives one line per refused or failed delivery. Optional.
	Logger *slog.Logger
	// Clock tells the time a signature's timestamp is judged against;
	// time.Now when nil.
	Clock func() time.Time
}

// WebhookHandler receives Stripe webhook deliveries: it verifies the
// Stripe-Signature header against the raw body, hands the body to the
// Receiver with an EventParser, and answers 200 once the body is stored
// (duplicates and bodies that are quarantined included). It answers 400 for
// a missing, malformed, stale or wrong signature, and for a signed body that
// names a key twice in one object (stored and quarantined first, the answer
// naming the key's path), 405 for anything but POST, 413 for an oversized
// body, and 500 only when the body could not be stored, so that Stripe
// delivers it again.
type WebhookHandler struct {
	cfg WebhookConfig
}

// NewWebhookHandler checks cfg and returns a handler.
func NewWebhookHandler(cfg WebhookConfig) (*WebhookHandler, error) {
	if len(cfg.Secrets) == 0 {
		return nil, errors.New("stripe: webhook: no signing secret")
	}
	for _, s := range cfg.Secrets {
		if s == "" {
			return nil, errors.New("stripe: webhook: empty signing secret")
		}
	}
	if cfg.Receiver == nil {
		return nil, errors.New("stripe: webhook: no receiver")
	}
	if cfg.Tolerance < 0 {
		return nil, errors.New("stripe: webhook: negative tolerance")
	}
	if cfg.Tolerance == 0 {
		cfg.Tolerance = DefaultWebhookTolerance
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	return &WebhookHandler{cfg: cfg}, nil
}

func (h *WebhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			h.cfg.Logger.Warn("stripe webhook refused: body too large", "remote", r.RemoteAddr, "limit", mbe.Limit)
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "could not read body", http.StatusBadRequest)
		return
	}
	if err := h.verify(body, r.Header.Get("Stripe-Signature")); err != nil {
		h.cfg.Logger.Warn("stripe webhook refused: signature", "remote", r.RemoteAddr, "error", err.Error())
		http.Error(w, "signature verification failed", http.StatusBadRequest)
		return
	}
	res, err := h.cfg.Receiver.Receive(r.Context(), Provider, EventParser{}, body, r.RemoteAddr)
	if err != nil {
		h.cfg.Logger.Error("stripe webhook not stored", "remote", r.RemoteAddr, "error", err.Error())
		http.Error(w, "not stored", http.StatusInternalServerError)
		return
	}
	// A key named twice makes the body mean two things: it is kept in the
	// quarantine (by the parser, once), and the sender is told which key,
	// on every delivery of it.
	var dup *jsonbody.DuplicateKeyError
	if errors.As(jsonbody.Check(body), &dup) {
		h.cfg.Logger.Warn("stripe webhook refused: duplicate key", "remote", r.RemoteAddr, "path", dup.Path)
		http.Error(w, dup.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if res.Duplicate {
		_, _ = io.WriteString(w, `{"received":true,"duplicate":true}`)
		return
	}
	_, _ = io.WriteString(w, `{"received":true}`)
}

// verify checks the signature with each secret in turn. A signed body that
// is not a snapshot event still passes: Stripe signed it, so it is stored
// and the parser quarantines it with the reason instead of Stripe retrying
// it for days.
func (h *WebhookHandler) verify(body []byte, header string) error {
	var last error
	for _, secret := range h.cfg.Secrets {
		_, err := webhook.ConstructEventWithOptions(body, header, secret, webhook.ConstructEventOptions{
			Tolerance: h.cfg.Tolerance, IgnoreAPIVersionMismatch: true})
		switch {
		case err == nil:
			return h.notFuture(header)
		case errors.Is(err, webhook.ErrNoValidSignature):
			last = err
			continue
		case errors.Is(err, webhook.ErrNotSigned), errors.Is(err, webhook.ErrInvalidHeader), errors.Is(err, webhook.ErrTooOld):
			return err
		default:
			// Signature and timestamp were good; the body is not an event.
			return h.notFuture(header)
		}
	}
	return last
}

// errFuture refuses a signature stamped later than now plus the tolerance:
// the library only refuses stamps that are too old, and a stamp from the
// future would make a captured delivery replayable for as long as it is
// ahead.
var errFuture = errors.New("webhook timestamp is in the future beyond the tolerance")

func (h *WebhookHandler) notFuture(header string) error {
	for part := range strings.SplitSeq(header, ",") {
		v, ok := strings.CutPrefix(strings.TrimSpace(part), "t=")
		if !ok {
			continue
		}
		sec, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return webhook.ErrInvalidHeader
		}
		if time.Unix(sec, 0).After(h.cfg.Clock().Add(h.cfg.Tolerance)) {
			return errFuture
		}
		return nil
	}
	return webhook.ErrInvalidHeader
}
