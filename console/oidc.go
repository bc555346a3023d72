package console

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// ModeOIDC signs people in with the company's OpenID Connect provider.
const ModeOIDC = "oidc"

// OIDCConfig is the OpenID Connect sign-in of ModeOIDC.
type OIDCConfig struct {
	// Issuer is the provider's issuer URL (discovery at
	// Issuer/.well-known/openid-configuration).
	Issuer string
	// ClientID and ClientSecret (secret) identify the console to it.
	ClientID, ClientSecret string
	// RedirectURL is the console's callback as registered with the provider:
	// https://reconcile.example.com/console/callback.
	RedirectURL string
	// Scopes asked for; default DefaultScopes (openid, email and profile). Add the one that
	// brings the groups claim if the provider needs it (often "groups").
	Scopes []string
	// GroupsClaim names the ID token claim listing the person's groups;
	// default DefaultGroupsClaim.
	GroupsClaim string
	// SessionKey (secret, at least 32 bytes) seals the session cookies.
	SessionKey []byte
	// SessionTTL is how long a sign-in lasts; default DefaultSessionTTL.
	SessionTTL time.Duration
	// HTTPClient talks to the provider (nil: http.DefaultClient).
	HTTPClient *http.Client
}

// Defaults of OIDCConfig, which the CLI's configuration shares.
const (
	DefaultGroupsClaim = "groups"
	DefaultSessionTTL  = 12 * time.Hour
)

// DefaultScopes are the scopes asked for when OIDCConfig names none.
func DefaultScopes() []string { return []string{oidc.ScopeOpenID, "email", "profile"} }

const (
	sessionCookie = "reconcile_session"
	flowCookie    = "reconcile_signin"
	flowTTL       = 10 * time.Minute
)

// Check reports what is missing or wrong, naming no secret.
func (o OIDCConfig) Check() error {
	var errs []error
	if o.Issuer == "" || o.ClientID == "" || o.ClientSecret == "" {
		errs = append(errs, errors.New("oidc mode needs the issuer, the client id and the client secret"))
	}
	if u, err := url.Parse(o.RedirectURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		u.Path != "/console/callback" {
		errs = append(errs, errors.New("oidc mode needs the redirect URL, ending in /console/callback"))
	}
	if len(o.SessionKey) < 32 {
		errs = append(errs, errors.New("oidc mode needs a session key of at least 32 bytes"))
	}
	return errors.Join(errs...)
}

// oidcSignIn runs the authorization code flow (with PKCE, state and nonce)
// and keeps the signed-in person in a sealed cookie.
type oidcSignIn struct {
	cfg    OIDCConfig
	aead   cipher.AEAD
	secure bool
	clock  func() time.Time

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	oauth    *oauth2.Config
}

func newOIDCSignIn(cfg OIDCConfig, clock func() time.Time) (*oidcSignIn, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = DefaultScopes()
	}
	if !slices.Contains(cfg.Scopes, oidc.ScopeOpenID) {
		cfg.Scopes = append([]string{oidc.ScopeOpenID}, cfg.Scopes...)
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = DefaultGroupsClaim
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	key := sha256.Sum256(cfg.SessionKey)
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(cfg.RedirectURL) // checked above
	// Cookies are Secure unless the console is reached over plain HTTP on
	// this machine (a trial); browsers keep Secure cookies from https only.
	secure := u.Scheme == "https" || !loopbackHost(u.Host)
	return &oidcSignIn{cfg: cfg, aead: aead, secure: secure, clock: clock}, nil
}

// setup discovers the provider on first use, so that the console starts
// while the provider is unreachable; a failed discovery is tried again.
func (o *oidcSignIn) setup(ctx context.Context) (*oidc.IDTokenVerifier, *oauth2.Config, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.verifier != nil {
		return o.verifier, o.oauth, nil
	}
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, o.cfg.HTTPClient), o.cfg.Issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("openid provider discovery: %w", err)
	}
	o.verifier = p.VerifierContext(oidc.ClientContext(context.WithoutCancel(ctx), o.cfg.HTTPClient), &oidc.Config{ClientID: o.cfg.ClientID, Now: o.clock})
	o.oauth = &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: o.cfg.RedirectURL, Scopes: o.cfg.Scopes}
	return o.verifier, o.oauth, nil
}

// session is what the session cookie holds.
type session struct {
	Email  string    `json:"e"`
	Groups []string  `json:"g,omitempty"`
	Exp    time.Time `json:"x"`
}

// flow is what the sign-in cookie holds between the redirect and the
// callback.
type flow struct {
	State, Nonce, Verifier, Next string
	Exp                          time.Time
}

func (o *oidcSignIn) seal(name string, v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, o.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(o.aead.Seal(nonce, nonce, plain, []byte(name))), nil
}

func (o *oidcSignIn) open(r *http.Request, name string, v any) bool {
	c, err := r.Cookie(name)
	if err != nil {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || len(raw) < o.aead.NonceSize() {
		return false
	}
	plain, err := o.aead.Open(nil, raw[:o.aead.NonceSize()], raw[o.aead.NonceSize():], []byte(name))
	return err == nil && json.Unmarshal(plain, v) == nil
}

func (o *oidcSignIn) setCookie(w http.ResponseWriter, name, value string, ttl time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/console/", MaxAge: int(ttl.Seconds()),
		HttpOnly: true, Secure: o.secure, SameSite: http.SameSiteLaxMode})
}

func (o *oidcSignIn) clearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/console/", MaxAge: -1, HttpOnly: true, Secure: o.secure,
		SameSite: http.SameSiteLaxMode})
}

// current returns the signed-in person, if their session is valid.
func (o *oidcSignIn) current(r *http.Request) (session, bool) {
	var s session
	if !o.open(r, sessionCookie, &s) || s.Email == "" || !o.clock().Before(s.Exp) {
		return session{}, false
	}
	return s, true
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

// safeNext keeps a return path inside the console.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/console/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return "/console/findings"
	}
	return next
}

// login starts the sign-in: state, nonce and PKCE verifier in a sealed
// short-lived cookie, and a redirect to the provider.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	o := c.oidc
	_, oc, err := o.setup(r.Context())
	if err != nil {
		c.deps.Logger.Error("console sign-in", "error", err)
		c.fail(w, r, user{}, http.StatusBadGateway, "The company's sign-in service could not be reached. Try again shortly.")
		return
	}
	f := flow{State: randomToken(), Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(),
		Next: safeNext(r.URL.Query().Get("next")), Exp: o.clock().Add(flowTTL)}
	v, err := o.seal(flowCookie, f)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	o.setCookie(w, flowCookie, v, flowTTL)
	http.Redirect(w, r, oc.AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusFound)
}

// callback finishes the sign-in: checks state, exchanges the code, verifies
// the ID token and its nonce, and gives a role from the e-mail or groups.
func (c *Console) callback(w http.ResponseWriter, r *http.Request) {
	o := c.oidc
	ctx := r.Context()
	var f flow
	q := r.URL.Query()
	if !o.open(r, flowCookie, &f) || !o.clock().Before(f.Exp) || q.Get("state") == "" ||
		subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(f.State)) != 1 {
		c.fail(w, r, user{}, http.StatusBadRequest, "This sign-in is not the one started here, or it expired. Start again from the console.")
		return
	}
	o.clearCookie(w, flowCookie)
	if e := q.Get("error"); e != "" {
		c.fail(w, r, user{}, http.StatusUnauthorized, "The sign-in service refused the sign-in.")
		return
	}
	verifier, oc, err := o.setup(ctx)
	if err != nil {
		c.deps.Logger.Error("console sign-in", "error", err)
		c.fail(w, r, user{}, http.StatusBadGateway, "The company's sign-in service could not be reached. Try again shortly.")
		return
	}
	tok, err := oc.Exchange(oidc.ClientContext(ctx, o.cfg.HTTPClient), q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		c.deps.Logger.Warn("console sign-in: code exchange", "error", err)
		c.fail(w, r, user{}, http.StatusUnauthorized, "The sign-in could not be completed.")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := verifier.Verify(ctx, raw)
	if err != nil || subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		c.deps.Logger.Warn("console sign-in: id token refused", "error", err)
		c.fail(w, r, user{}, http.StatusUnauthorized, "The sign-in could not be verified.")
		return
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		c.fail(w, r, user{}, http.StatusUnauthorized, "The sign-in could not be read.")
		return
	}
	email, _ := claims["email"].(string)
	if verified, ok := claims["email_verified"].(bool); ok && !verified {
		email = ""
	}
	email = strings.TrimSpace(email)
	if email == "" || len(email) > 200 || strings.ContainsAny(email, "\r\n\t") {
		c.fail(w, r, user{}, http.StatusForbidden, "The sign-in gave no verified e-mail address.")
		return
	}
	var groups []string
	if list, ok := claims[o.cfg.GroupsClaim].([]any); ok {
		for _, g := range list {
			if s, ok := g.(string); ok && s != "" {
				groups = append(groups, s)
			}
		}
	}
	u := user{Name: email, Role: c.roleOfAny(email, groups)}
	if u.Role == "" {
		c.deps.Logger.Info("console sign-in refused: no role", "email", email)
		c.fail(w, r, u, http.StatusForbidden, "You have no role in the console: ask for viewer or operator.")
		return
	}
	v, err := o.seal(sessionCookie, session{Email: email, Groups: groups, Exp: o.clock().Add(o.cfg.SessionTTL)})
	if err != nil {
		c.internal(w, r, err)
		return
	}
	o.setCookie(w, sessionCookie, v, o.cfg.SessionTTL)
	c.deps.Logger.Info("console sign-in", "email", email, "role", u.Role)
	http.Redirect(w, r, safeNext(f.Next), http.StatusSeeOther)
}

// logout ends the session.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	c.oidc.clearCookie(w, sessionCookie)
	c.fail(w, r, user{}, http.StatusOK, "You are signed out.")
}

// identifyOIDC reads the session; without one, a page asks to sign in.
func (c *Console) identifyOIDC(w http.ResponseWriter, r *http.Request) (user, bool) {
	s, ok := c.oidc.current(r)
	if !ok {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			http.Redirect(w, r, "/console/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return user{}, false
		}
		c.fail(w, r, user{}, http.StatusUnauthorized, "You are not signed in.")
		return user{}, false
	}
	// Roles are read from the configuration at each request: a person
	// removed from it loses access at once.
	u := user{Name: s.Email, Role: c.roleOfAny(s.Email, s.Groups)}
	if u.Role == "" {
		c.fail(w, r, u, http.StatusForbidden, "You have no role in the console: ask for viewer or operator.")
		return user{}, false
	}
	return u, true
}
