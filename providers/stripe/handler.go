package stripe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reconcilehq/reconcile/internal/jsonbody"
	"github.com/reconcilehq/reconcile/providers/intake"
)

// Receiver stores a verified event body and interprets it with the
// delivery's parser. (*intake.Processor).Deliver satisfies it. It returns
// an error only when the body could not be stored.
type Receiver interface {
	Deliver(ctx context.Context, d intake.Delivery) (intake.Result, error)
}

// DefaultWebhookTolerance is the oldest webhook signature accepted when
// WebhookConfig sets none (stripe-go's webhook.DefaultTolerance, 5 minutes).
const DefaultWebhookTolerance = webhook.DefaultTolerance

// WebhookAccount is an account whose own webhook endpoint signs its events
// with secrets of its own: a separate Stripe account (one per region, say)
// rather than a connected account of the platform. Its events name no
// account; the secret that verifies one says whose it is.
type WebhookAccount struct {
	// Account is the account's id (acct_...), one of the parser's
	// accounts (WebhookConfig.Parser).
	Account string
	// Secrets are its endpoint's signing secrets (whsec_...), more than one
	// while a secret is being rolled. Never logged.
	Secrets []string
}

// WebhookConfig configures a WebhookHandler.
type WebhookConfig struct {
	// Secrets are the signing secrets (whsec_...) of the platform's
	// endpoint, whose events are placed by their account field (the
	// default account's when they name none). More than one while a secret
	// is being rolled. Never logged.
	Secrets []string
	// Accounts are the accounts whose own endpoints sign with secrets of
	// their own: an event one of an account's secrets verifies is that
	// account's (intake.AccountKind). At least one secret, here or in
	// Secrets, is required, and no secret may verify for two of them.
	Accounts []WebhookAccount
	// Parser interprets the verified bodies: the metadata key and the
	// accounts, which must list each of Accounts.
	Parser EventParser
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
// Receiver with the EventParser (with the kind of the account whose own
// secret verified it, if one did), and answers 200 once the body is stored
// (duplicates and bodies that are quarantined included). It answers 400 for
// a missing, malformed, stale or wrong signature, and for a signed body that
// names a key twice in one object (stored and quarantined first, the answer
// naming the key's path), 405 for anything but POST, 413 for an oversized
// body, and 500 only when the body could not be stored, so that Stripe
// delivers it again.
type WebhookHandler struct {
	cfg WebhookConfig
	// signers are the platform's secrets (account "") and each account's.
	signers []WebhookAccount
}

// NewWebhookHandler checks cfg and returns a handler.
func NewWebhookHandler(cfg WebhookConfig) (*WebhookHandler, error) {
	signers := append([]WebhookAccount{{Secrets: cfg.Secrets}}, cfg.Accounts...)
	owner, n := map[string]string{}, 0
	for i, sg := range signers {
		if i > 0 && sg.Account == "" {
			return nil, errors.New("stripe: webhook: an account with signing secrets has no id")
		}
		if i > 0 && !slices.Contains(cfg.Parser.Accounts, sg.Account) {
			return nil, fmt.Errorf("stripe: webhook: account %s has signing secrets but is not one of the parser's accounts", sg.Account)
		}
		for _, s := range sg.Secrets {
			if s == "" {
				return nil, errors.New("stripe: webhook: empty signing secret")
			}
			if o, ok := owner[s]; ok && o != sg.Account {
				return nil, fmt.Errorf("stripe: webhook: one signing secret is given for %s and for %s: its events could not be placed",
					ownerName(o), ownerName(sg.Account))
			}
			owner[s] = sg.Account
			n++
		}
	}
	if n == 0 {
		return nil, errors.New("stripe: webhook: no signing secret")
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
	return &WebhookHandler{cfg: cfg, signers: signers}, nil
}

// ownerName names the owner of a signing secret in errors: an account, or
// the platform.
func ownerName(account string) string {
	if account == "" {
		return "the platform"
	}
	return "account " + account
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
	account, err := h.verify(body, r.Header.Get("Stripe-Signature"))
	if err != nil {
		h.cfg.Logger.Warn("stripe webhook refused: signature", "remote", r.RemoteAddr, "error", err.Error())
		http.Error(w, "signature verification failed", http.StatusBadRequest)
		return
	}
	d := intake.Delivery{Provider: Provider, Parser: h.cfg.Parser, Body: body, RemoteAddr: r.RemoteAddr}
	if account != "" {
		d.Kind = intake.AccountKind(account)
	}
	res, err := h.cfg.Receiver.Deliver(r.Context(), d)
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

// verify checks the signature with each secret in turn, the platform's
// first, and returns the account whose own secret verified it ("" for the
// platform's). A signed body that is not a snapshot event still passes:
// Stripe signed it, so it is stored and the parser quarantines it with the
// reason instead of Stripe retrying it for days.
func (h *WebhookHandler) verify(body []byte, header string) (string, error) {
	last := webhook.ErrNoValidSignature
	for _, sg := range h.signers {
		for _, secret := range sg.Secrets {
			_, err := webhook.ConstructEventWithOptions(body, header, secret, webhook.ConstructEventOptions{
				Tolerance: h.cfg.Tolerance, IgnoreAPIVersionMismatch: true})
			switch {
			case err == nil:
				return sg.Account, h.notFuture(header)
			case errors.Is(err, webhook.ErrNoValidSignature):
				last = err
				continue
			case errors.Is(err, webhook.ErrNotSigned), errors.Is(err, webhook.ErrInvalidHeader), errors.Is(err, webhook.ErrTooOld):
				return "", err
			default:
				// Signature and timestamp were good; the body is not an event.
				return sg.Account, h.notFuture(header)
			}
		}
	}
	return "", last
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
