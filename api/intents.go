package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/jsonbody"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// The intents API: POST /v1/intents and GET /v1/intents/{key}. Callers in
// any language create intents under an Idempotency-Key (the intent key) and
// get the same answer however often they repeat the request.

type intentRequest struct {
	Provider  string            `json:"provider"`
	Account   string            `json:"account"`
	Amount    json.Number       `json:"amount"`
	Currency  string            `json:"currency"`
	Customer  string            `json:"customer"`
	Reference string            `json:"reference"`
	Metadata  map[string]string `json:"metadata"`
	// Kind is charge (the default) or expected; an expected payment may
	// have a due date and a tolerance.
	Kind      string      `json:"kind"`
	DueAt     string      `json:"due_at"`
	Tolerance json.Number `json:"tolerance"`
}

func (api *API) createIntent(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	body, err := io.ReadAll(io.LimitReader(r.Body, maxIntentBody+1))
	var tooBig *http.MaxBytesError
	if err != nil && !errors.As(err, &tooBig) {
		writeError(w, &Error{Status: http.StatusBadRequest, Message: "reading the body failed"})
		return
	}
	if len(body) > maxIntentBody || tooBig != nil {
		writeError(w, &Error{Status: http.StatusRequestEntityTooLarge, Message: "request body too large",
			Fields: []FieldProblem{{Field: "body", Message: fmt.Sprintf("longer than %d bytes", maxIntentBody)}}})
		return
	}
	var dup *jsonbody.DuplicateKeyError
	if errors.As(jsonbody.Check(body), &dup) {
		writeError(w, duplicateKey(dup))
		return
	}
	p, problems := parseIntentRequest(bytes.NewReader(body), key, api.cfg.Accounts)
	if len(problems) == 0 {
		// What the provider would refuse (M-Pesa: KES 1500.50, not whole
		// shillings) is refused now, not later in the background.
		var fe *ledger.FieldError
		if err := api.cfg.Charges.CheckIntent(p); errors.As(err, &fe) {
			problems = append(problems, fieldProblem{Field: fe.Field, Message: fe.Err.Error()})
		} else if err != nil {
			problems = append(problems, fieldProblem{Field: "body", Message: err.Error()})
		}
	}
	if len(problems) > 0 {
		writeError(w, invalid(problems))
		return
	}
	api.save(w, r, key, p)
}

// save creates the intent of p under key in one transaction with the stored
// response, or answers a repeat of the request from what was stored.
func (api *API) save(w http.ResponseWriter, r *http.Request, key string, p ledger.IntentParams) {
	ctx := r.Context()
	hash := requestHash(p)
	if prev, err := api.cfg.Store.GetAPIRequest(ctx, key); err == nil {
		api.replay(w, prev, hash)
		return
	} else if !errors.Is(err, ledger.ErrNotFound) {
		api.internal(w, err)
		return
	}
	var (
		stored ledger.APIRequest
		fresh  bool
	)
	err := api.cfg.Store.InTx(ctx, func(tx ledger.Tx) error {
		in, _, err := api.cfg.Charges.CreateIntentTx(ctx, tx, ledger.NewIntent{IntentParams: p, CreatedAt: api.cfg.Clock()})
		if err != nil {
			return err
		}
		body, err := json.Marshal(findings.ViewIntent(in, nil))
		if err != nil {
			return err
		}
		stored, fresh, err = tx.SaveAPIRequest(ctx, ledger.APIRequest{Key: key, RequestHash: hash, Status: http.StatusCreated,
			Response: body, CreatedAt: api.cfg.Clock()})
		return err
	})
	var kr *ledger.KeyReuseError
	var fe *ledger.FieldError
	switch {
	case errors.As(err, &kr):
		writeError(w, &Error{Status: http.StatusConflict, Message: kr.Error()})
	case errors.As(err, &fe):
		writeError(w, invalid([]FieldProblem{{Field: ledger.SafeText(fe.Field, 64), Message: ledger.SafeText(fe.Err.Error(), 256)}}))
	case err != nil:
		api.internal(w, err)
	case !fresh:
		api.replay(w, stored, hash) // a concurrent request with this key got there first
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(stored.Status)
		_, _ = w.Write(stored.Response)
	}
}

// replay answers a repeat: the stored response with 200 for the same
// request, 409 for another request under the same key.
func (api *API) replay(w http.ResponseWriter, prev ledger.APIRequest, hash string) {
	if prev.RequestHash != hash {
		writeError(w, &Error{Status: http.StatusConflict,
			Message: "key reused with different parameters: this Idempotency-Key was used for another request"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(prev.Response)
}

func (api *API) getIntent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	key := r.PathValue("key")
	in, err := api.cfg.Store.GetIntent(ctx, key)
	if errors.Is(err, ledger.ErrNotFound) {
		writeError(w, &Error{Status: http.StatusNotFound, Message: "no intent with this key"})
		return
	}
	if err != nil {
		api.internal(w, err)
		return
	}
	attempts, err := api.cfg.Store.ListAttempts(ctx, key)
	if err != nil {
		api.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, findings.ViewIntent(in, attempts))
}

// internal answers an unexpected error of the intents API: 500, logged.
func (api *API) internal(w http.ResponseWriter, err error) {
	api.cfg.Logger.Error("intents api", "error", err)
	writeError(w, &Error{Status: http.StatusInternalServerError, Message: "internal error"})
}

// maxIntentBody bounds the body of POST /v1/intents; a longer one is
// answered 413.
const maxIntentBody = 64 << 10

// MaxIntentBody is the longest body of POST /v1/intents and /v1/refunds,
// in bytes.
const MaxIntentBody = maxIntentBody

func parseIntentRequest(body io.Reader, key string, accounts map[string][]string) (ledger.IntentParams, []fieldProblem) {
	var problems []fieldProblem
	bad := func(field, format string, args ...any) {
		problems = append(problems, fieldProblem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case key == "":
		bad("Idempotency-Key", "header is required: the intent's stable key, e.g. charge:order-4471")
	case len(key) > ledger.MaxIDLen:
		bad("Idempotency-Key", "longer than %d characters", ledger.MaxIDLen)
	}
	var req intentRequest
	raw, err := io.ReadAll(io.LimitReader(body, maxIntentBody))
	if err != nil || !utf8.Valid(raw) {
		// encoding/json would turn invalid bytes into U+FFFD silently.
		bad("body", "is not valid UTF-8")
		return ledger.IntentParams{}, problems
	}
	if err := jsonbody.Decode(raw, &req, jsonbody.Options{UseNumber: true, DisallowUnknownFields: true}); errors.Is(err, jsonbody.ErrTrailingData) {
		bad("body", "holds more than one JSON value: trailing data after the intent")
		return ledger.IntentParams{}, problems
	} else if err != nil {
		bad("body", "not a JSON intent: %s", ledger.SafeText(err.Error(), 256))
		return ledger.IntentParams{}, problems
	}
	p := ledger.IntentParams{Key: key, Provider: req.Provider, Customer: req.Customer, Reference: req.Reference, Metadata: req.Metadata}
	if req.Provider == "" {
		bad("provider", "is required")
	}
	if acct, err := accountOf(accounts, req.Provider, req.Account); err != nil {
		bad("account", "%s", ledger.SafeText(err.Error(), 256))
	} else {
		p.Account = acct
	}
	switch k, err := ledger.ParseIntentKind(req.Kind); {
	case err != nil:
		bad("kind", "%s", ledger.SafeText(err.Error(), 256))
	case k == ledger.IntentRefund:
		bad("kind", "a refund is created with POST /v1/refunds")
	default:
		p.Kind = k
	}
	if req.DueAt != "" {
		if p.DueAt, err = time.Parse(time.RFC3339Nano, req.DueAt); err != nil {
			bad("due_at", "%q: want RFC 3339 with a zone, e.g. 2026-11-02T09:30:00Z", ledger.SafeText(req.DueAt, 64))
		}
	}
	cur, err := money.NormalizeCurrency(req.Currency)
	if err != nil {
		bad("currency", "%s", ledger.SafeText(err.Error(), 256))
	} else if req.Amount == "" {
		bad("amount", "is required, as a decimal string such as \"1500.00\"")
	} else if p.Amount, err = money.Parse(req.Amount.String(), cur); err != nil {
		bad("amount", "%s", ledger.SafeText(err.Error(), 256))
	} else if req.Tolerance != "" {
		if p.Tolerance, err = money.Parse(req.Tolerance.String(), cur); err != nil {
			bad("tolerance", "%s", ledger.SafeText(err.Error(), 256))
		}
	}
	if len(problems) > 0 {
		return p, problems
	}
	p, err = p.Normalize()
	var fe *ledger.FieldError
	if errors.As(err, &fe) {
		bad(fe.Field, "%s", ledger.SafeText(fe.Err.Error(), 256))
	}
	return p, problems
}

// requestHash identifies a request by its normalised parameters.
func requestHash(p ledger.IntentParams) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%s\x00%s\x00%s", p.Key, p.Provider, p.Amount.Text(), p.Amount.Currency, p.Customer, p.Reference)
	if p.Account != "" { // the default account's requests hash as they always did
		fmt.Fprintf(&b, "\x00account=%s", p.Account)
	}
	if p.IsRefund() { // charges hash as they always did: stored requests still match
		fmt.Fprintf(&b, "\x00refund_of=%s", p.RefundOf)
	}
	if p.IsExpected() {
		fmt.Fprintf(&b, "\x00expected\x00due=%s\x00tolerance=%s", p.DueAt.Format(time.RFC3339Nano), p.Tolerance.Text())
	}
	for _, k := range slices.Sorted(maps.Keys(p.Metadata)) {
		fmt.Fprintf(&b, "\x00%s=%s", k, p.Metadata[k])
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// accountOf reads the account an intent names among the accounts of its
// provider (ledger.ParseAccount).
func accountOf(accounts map[string][]string, provider, name string) (string, error) {
	return ledger.ParseAccount(name, accounts[strings.ToLower(strings.TrimSpace(provider))])
}
