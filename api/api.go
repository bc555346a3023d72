package api

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
)

// Store is what the API reads and writes of the books; a ledger.Store has
// it.
type Store interface {
	// The stored answer of a request, and the intent it made.
	GetAPIRequest(ctx context.Context, key string) (ledger.APIRequest, error)
	ListAttempts(ctx context.Context, intentKey string) ([]ledger.Attempt, error)
	// Findings, with their detail.
	ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error)
	findings.DetailReader
	ledger.Transactor
}

// Charges creates intents: the charge service.
type Charges interface {
	// CheckIntent refuses what the provider would refuse.
	CheckIntent(p ledger.IntentParams) error
	// CreateIntentTx creates an intent and queues its charge in tx.
	CreateIntentTx(ctx context.Context, tx ledger.Tx, n ledger.NewIntent) (ledger.Intent, bool, error)
}

// Config is what the API serves with.
type Config struct {
	// Token is the bearer token every request must carry (compared in
	// constant time); an empty one lets nothing through.
	Token   string
	Store   Store
	Charges Charges
	// Providers lists the known providers and their zones, for the
	// findings filters.
	Providers func(ctx context.Context) (map[string]*time.Location, error)
	// Accounts lists, by provider, its accounts beyond the default one
	// (M-Pesa short codes): an intent may name one of them.
	Accounts map[string][]string
	// Findings applies people's decisions on findings.
	Findings *findings.Service
	// Clock stamps what is recorded (nil: time.Now).
	Clock  func() time.Time
	Logger *slog.Logger
}

// API serves the HTTP JSON API: intents, refunds and findings.
type API struct {
	cfg Config
}

// New returns the API of cfg.
func New(cfg Config) *API {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &API{cfg: cfg}
}

// Mux is where the API registers its routes (an http.ServeMux).
type Mux interface {
	Handle(pattern string, h http.Handler)
}

// Routes registers every route of the API on mux, each behind the bearer
// token.
func (a *API) Routes(mux Mux) {
	for _, r := range []struct {
		pattern string
		h       http.HandlerFunc
	}{
		{"POST /v1/intents", a.createIntent},
		{"GET /v1/intents/{key}", a.getIntent},
		{"POST /v1/refunds", a.createRefund},
		{"GET /v1/findings", a.listFindings},
		{"GET /v1/findings/{id}", a.getFinding},
		{"POST /v1/findings/{id}/ack", a.action(findings.Acknowledge)},
		{"POST /v1/findings/{id}/resolve", a.action(findings.Resolve)},
		{"POST /v1/findings/{id}/reopen", a.action(findings.Reopen)},
		{"POST /v1/findings/{id}/notes", a.action(findings.Note)},
		{"POST /v1/findings/{id}/match", a.match},
		{"POST /v1/findings/{id}/unmatch", a.unmatch},
		{"POST /v1/findings/{id}/refund", a.remedy(findings.Refund)},
		{"POST /v1/findings/{id}/writeoff", a.remedy(findings.WriteOff)},
		{"POST /v1/findings/{id}/retry", a.remedy(findings.Retry)},
		{"POST /v1/findings/{id}/cancel", a.remedy(findings.Cancel)},
		{"POST /v1/findings/{id}/requests/{request}/approve", a.request(findings.Approve)},
		{"POST /v1/findings/{id}/requests/{request}/reject", a.request(findings.Reject)},
	} {
		mux.Handle(r.pattern, BearerAuth(a.cfg.Token, r.h))
	}
}

// BearerAuth passes on the requests that carry token as their bearer token
// (compared in constant time) and answers the others 401. An empty token
// lets nothing through.
func BearerAuth(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="reconcile"`)
			writeError(w, &Error{Status: http.StatusUnauthorized, Message: "missing or wrong bearer token"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// WriteJSON answers status with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
