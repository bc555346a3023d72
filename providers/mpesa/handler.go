package mpesa

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/intake"
)

// Receiver stores and interprets one delivery; *intake.Processor implements
// it.
type Receiver interface {
	Deliver(ctx context.Context, d intake.Delivery) (intake.Result, error)
}

// Quarantiner keeps input the handler refused (too large, from an address
// outside the allowlist); ledger.Store implements it.
type Quarantiner interface {
	AddQuarantine(ctx context.Context, q ledger.QuarantineItem) (int64, error)
}

// Handler defaults.
const (
	DefaultPrefix         = "/daraja"
	DefaultMaxBodyBytes   = 64 << 10
	DefaultReadTimeout    = 10 * time.Second
	DefaultProcessTimeout = 15 * time.Second
	// minTokenLen is the shortest path token accepted: 128 bits in hex.
	minTokenLen = 32
	// keptRefused bounds how much of a refused body is quarantined.
	keptRefused = 64 << 10
)

// HandlerConfig configures the callback endpoints.
type HandlerConfig struct {
	// PathToken is the unguessable path segment of every endpoint
	// (/daraja/{token}/stk): at least 32 letters, digits, '-' or '_', none of
	// the words Safaricom refuses in callback URLs. NewPathToken makes one.
	PathToken string
	// Prefix is the path the endpoints sit under; default "/daraja".
	Prefix string
	// AllowIPs lists the addresses and CIDR prefixes allowed to post. Nil
	// means SafaricomIPs; an empty, non-nil list turns the allowlist off.
	AllowIPs []string
	// TrustedProxies lists the proxies (addresses or prefixes) whose
	// X-Forwarded-For header is believed; empty means the peer address is
	// the client.
	TrustedProxies []string
	// MaxBodyBytes bounds a body; default 64 KiB. Larger bodies get 413.
	MaxBodyBytes int64
	// ReadTimeout bounds reading a body once the handler starts; default
	// 10 s. The server's own ReadHeaderTimeout bounds the headers.
	ReadTimeout time.Duration
	// ProcessTimeout bounds storing and interpreting a body, which goes on
	// even if the sender hangs up; default 15 s.
	ProcessTimeout time.Duration
	// Quarantine, when set, keeps refused bodies (oversized, or from an
	// address outside the allowlist) with the reason.
	Quarantine Quarantiner
	// Clock stamps quarantined bodies; time.Now when nil.
	Clock func() time.Time
}

// Endpoint is one callback URL path and what arrives there.
type Endpoint struct {
	// Path is relative to the token: "stk", "c2b/confirmation"...
	Path string
	Kind string
	// Scope separates deduplication of bodies that also arrive elsewhere
	// byte for byte (C2B validation and confirmation).
	Scope string
	Ack   []byte
	// Reject, when set, answers a body that was quarantined (now, or when
	// it was first delivered) instead of Ack: the C2B validation, whose
	// answer decides whether the payment goes ahead.
	Reject []byte
}

// Endpoints lists the callback paths. None contains a word Safaricom
// refuses in callback URLs.
var Endpoints = []Endpoint{
	{Path: "stk", Kind: KindSTK, Ack: AckSuccess},
	{Path: "c2b/validation", Kind: KindC2BValidation, Scope: KindC2BValidation, Ack: AckAccepted, Reject: AckRejected},
	{Path: "c2b/confirmation", Kind: KindC2BConfirmation, Ack: AckSuccess},
	{Path: "b2c/result", Kind: KindB2C, Ack: AckSuccess},
	{Path: "b2c/timeout", Kind: KindB2C, Ack: AckSuccess},
	{Path: "reversal/result", Kind: KindReversal, Ack: AckSuccess},
	{Path: "reversal/timeout", Kind: KindReversalTimeout, Ack: AckSuccess},
	{Path: "status/result", Kind: KindTransactionStatus, Ack: AckSuccess},
	{Path: "status/timeout", Kind: KindTransactionStatusTimeout, Ack: AckSuccess},
	{Path: "balance/result", Kind: KindAccountBalance, Ack: AckSuccess},
	{Path: "balance/timeout", Kind: KindAccountBalance, Ack: AckSuccess},
}

// forbiddenWords may not appear in Daraja callback URLs.
var forbiddenWords = []string{"m-pesa", "mpesa", "safaricom", "exe", "exec", "cmd", "sql", "query"}

// NewPathToken returns a fresh random path token (128 bits, hex).
func NewPathToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// CallbackURL returns the URL to register for the endpoint at path
// ("stk", "c2b/confirmation"...): base + prefix + "/" + token + "/" + path.
func (c HandlerConfig) CallbackURL(base, path string) string {
	prefix := c.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return strings.TrimRight(base, "/") + prefix + "/" + c.PathToken + "/" + path
}

// ResultURLsAt returns the result and timeout URLs of the handler's
// endpoints under api ("reversal", "status"): api/result and api/timeout.
func (c HandlerConfig) ResultURLsAt(base, api string) ResultURLs {
	return ResultURLs{Result: c.CallbackURL(base, api+"/result"), Timeout: c.CallbackURL(base, api+"/timeout")}
}

// Handler serves the M-Pesa callback endpoints.
type Handler struct {
	cfg     HandlerConfig
	allow   []netip.Prefix
	allowOn bool
	trusted []netip.Prefix
	recv    Receiver
	parser  CallbackParser
	log     *slog.Logger
	byPath  map[string]Endpoint
}

// NewHandler checks cfg and returns the handler. Requests go to
// {Prefix}/{PathToken}/{endpoint path}; see Endpoints. A wrong token or path
// gets 404, a sender outside the allowlist 403, an oversized body 413, a
// body not read in time 408. Every other POST is stored through recv before
// it is answered 200 with the acknowledgement Safaricom expects, also when it
// is a duplicate or does not parse (it is then quarantined), except a C2B
// validation that does not parse, which is answered AckRejected; only a
// body that could not be stored is answered 500, so that Safaricom delivers
// it again.
func NewHandler(cfg HandlerConfig, recv Receiver, logger *slog.Logger) (*Handler, error) {
	if recv == nil {
		return nil, errors.New("mpesa: handler needs a receiver")
	}
	if err := checkToken(cfg.PathToken); err != nil {
		return nil, err
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	cfg.Prefix = "/" + strings.Trim(cfg.Prefix, "/")
	for _, w := range forbiddenWords {
		if strings.Contains(strings.ToLower(cfg.Prefix), w) {
			return nil, fmt.Errorf("mpesa: handler prefix %q contains %q, which Safaricom refuses in callback URLs", cfg.Prefix, w)
		}
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.ProcessTimeout <= 0 {
		cfg.ProcessTimeout = DefaultProcessTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &Handler{cfg: cfg, recv: recv, log: logger, byPath: map[string]Endpoint{}}
	allow := cfg.AllowIPs
	if allow == nil {
		allow = SafaricomIPs
	}
	var err error
	if h.allow, err = parsePrefixes("allowed IPs", allow); err != nil {
		return nil, err
	}
	h.allowOn = len(allow) > 0
	if h.trusted, err = parsePrefixes("trusted proxies", cfg.TrustedProxies); err != nil {
		return nil, err
	}
	for _, e := range Endpoints {
		h.byPath[e.Path] = e
	}
	return h, nil
}

func checkToken(t string) error {
	if len(t) < minTokenLen {
		return fmt.Errorf("mpesa: callback path token has %d characters, want at least %d (use NewPathToken)", len(t), minTokenLen)
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return errors.New("mpesa: callback path token may hold only letters, digits, '-' and '_'")
		}
	}
	for _, w := range forbiddenWords {
		if strings.Contains(strings.ToLower(t), w) {
			return fmt.Errorf("mpesa: callback path token contains %q, which Safaricom refuses in callback URLs", w)
		}
	}
	return nil
}

// Pattern is the ServeMux pattern that routes every endpoint here,
// "{Prefix}/"; other methods than POST are answered 405 by the handler.
func (h *Handler) Pattern() string { return h.cfg.Prefix + "/" }

// refuseBody answers a request whose body could not be read whole: too
// large (the head of it quarantined), not read in time, or unreadable.
func (h *Handler) refuseBody(w http.ResponseWriter, r *http.Request, ep Endpoint, addr string, body []byte, err error) {
	// The rest of the body is not wanted: close the connection rather
	// than drain it (the read deadline stays, so a stalled sender
	// cannot hold the connection).
	w.Header().Set("Connection", "close")
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		h.log.Warn("mpesa callback body too large", "endpoint", ep.Path, "remote", addr, "limit", h.cfg.MaxBodyBytes)
		h.quarantine(r.Context(), ep, addr, "body", fmt.Sprintf("body larger than %d bytes", h.cfg.MaxBodyBytes), body[:min(len(body), keptRefused)])
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
	case errors.Is(err, os.ErrDeadlineExceeded):
		h.log.Warn("mpesa callback body not read in time", "endpoint", ep.Path, "remote", addr, "timeout", h.cfg.ReadTimeout)
		http.Error(w, "request timeout", http.StatusRequestTimeout)
	default:
		h.log.Warn("mpesa callback body unreadable", "endpoint", ep.Path, "remote", addr, "error", err)
		http.Error(w, "bad request", http.StatusBadRequest)
	}
}

// ServeHTTP takes one callback: routes it by path, refuses other methods,
// addresses outside the allowlist and bodies it cannot read, hands the body
// to the receiver and acknowledges it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ep, ok := h.route(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// Bound the time spent reading the body, refused or not.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.cfg.ReadTimeout))
	client, ok := clientIP(r, h.trusted)
	addr := client.String()
	if !ok {
		addr = "unparseable"
	}
	if h.allowOn && (!ok || !contains(h.allow, client)) {
		h.log.Warn("mpesa callback from an address outside the allowlist", "endpoint", ep.Path, "remote", addr,
			"peer", r.RemoteAddr)
		body, _ := io.ReadAll(io.LimitReader(r.Body, min(h.cfg.MaxBodyBytes, keptRefused)))
		h.quarantine(r.Context(), ep, addr, "remote_addr", fmt.Sprintf("source address %s is not in the allowlist", addr), body)
		w.Header().Set("Connection", "close")
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		h.refuseBody(w, r, ep, addr, body, err)
		return
	}
	_ = rc.SetReadDeadline(time.Time{})
	// Storing and interpreting go on if the sender hangs up: a stored body
	// must be interpreted, and the sender will deliver again anyway.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), h.cfg.ProcessTimeout)
	defer cancel()
	res, err := h.recv.Deliver(ctx, intake.Delivery{Provider: Provider, Parser: h.parser, Body: body, RemoteAddr: addr,
		Kind: ep.Kind, Scope: ep.Scope})
	if err != nil && res.Callback.ID == 0 {
		h.log.Error("mpesa callback not stored", "endpoint", ep.Path, "remote", addr, "error", err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"ResultCode":1,"ResultDesc":"Not stored, deliver again"}`))
		return
	}
	attrs := []any{"endpoint", ep.Path, "callback_id", res.Callback.ID, "kind", res.Kind, "duplicate", res.Duplicate,
		"new_txns", res.NewTxns, "new_sources", res.NewSources, "remote", addr}
	switch {
	case err != nil:
		h.log.Error("mpesa callback stored, interpretation failed; it stays unprocessed for reprocessing", append(attrs, "error", err)...)
	case res.Rejected != nil:
		h.log.Warn("mpesa callback stored and quarantined", append(attrs, "reason", res.Rejected.Error())...)
	default:
		h.log.Info("mpesa callback", attrs...)
	}
	ack := ep.Ack
	if quarantined := res.Rejected != nil || res.Duplicate && res.Callback.Error != ""; quarantined && ep.Reject != nil {
		ack = ep.Reject
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(ack)
}

// route finds the endpoint of a request path, checking the token in
// constant time.
func (h *Handler) route(path string) (Endpoint, bool) {
	rest, ok := strings.CutPrefix(path, h.cfg.Prefix+"/")
	if !ok {
		return Endpoint{}, false
	}
	token, sub, ok := strings.Cut(rest, "/")
	if !ok || subtle.ConstantTimeCompare([]byte(token), []byte(h.cfg.PathToken)) != 1 {
		return Endpoint{}, false
	}
	ep, ok := h.byPath[strings.TrimSuffix(sub, "/")]
	return ep, ok
}

func (h *Handler) quarantine(ctx context.Context, ep Endpoint, addr, field, reason string, raw []byte) {
	if h.cfg.Quarantine == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.ProcessTimeout)
	defer cancel()
	if _, err := h.cfg.Quarantine.AddQuarantine(ctx, ledger.QuarantineItem{Source: Provider + "_callback",
		Origin: "http " + addr + " " + ep.Path, Field: field, Reason: reason, Raw: raw, At: h.cfg.Clock().UTC()}); err != nil {
		h.log.Error("mpesa refused callback not quarantined", "endpoint", ep.Path, "remote", addr, "error", err)
	}
}
