package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/report"
)

//go:embed templates/*.html
var templateFS embed.FS

// Sign-in modes.
const (
	// ModeLocal serves one person on the loopback interface: requests from
	// elsewhere, or naming another host, are refused.
	ModeLocal = "local"
	// ModeProxy takes the person from a header set by an authenticating
	// reverse proxy, accepted only from the configured proxies.
	ModeProxy = "proxy"
)

// Roles.
const (
	RoleViewer   = "viewer"
	RoleOperator = "operator"
)

// Config says who may use the console and how they are known.
type Config struct {
	// Mode is ModeLocal or ModeProxy.
	Mode string
	// LocalUser is the one person of ModeLocal, recorded as the actor; an
	// operator.
	LocalUser string
	// UserHeader carries the person's e-mail or name in ModeProxy.
	UserHeader string
	// TrustedProxies are the addresses UserHeader is accepted from.
	TrustedProxies []netip.Prefix
	// Operators may act; Viewers may read. "*" among Viewers lets anyone the
	// proxy signed in read. In ModeOIDC an entry is an e-mail address or a
	// group from the ID token's groups claim.
	Operators, Viewers []string
	// OIDC is the sign-in of ModeOIDC.
	OIDC OIDCConfig
}

// Job is a discarded background job, as the console shows it.
type Job struct {
	ID                   int64
	Kind, State, Subject string
	Attempt, MaxAttempts int
	When                 time.Time
	LastError            string
}

// Jobs lists the discarded jobs and retries one.
type Jobs interface {
	Discarded(ctx context.Context, limit int) ([]Job, error)
	Retry(ctx context.Context, id int64) (Job, error)
}

// Deps are what the console reads and acts through.
type Deps struct {
	Store Store
	// Jobs may be nil: the jobs page then says there is no queue.
	Jobs Jobs
	// Replay submits a quarantined item again through its path (see
	// `reconcile quarantine replay`).
	Replay func(ctx context.Context, q ledger.QuarantineItem) (string, error)
	// Findings applies operators' decisions on findings.
	Findings *findings.Service
	// Providers lists the known providers with their zones; times show in
	// the provider's zone.
	Providers func(ctx context.Context) (map[string]*time.Location, error)
	// Accounts are, by provider, its accounts besides the default one
	// (config.AccountsOf): the findings filter offers them, and the month's
	// close has a section for each.
	Accounts map[string][]string
	Clock    func() time.Time
	Logger   *slog.Logger
}

// Console serves the finance operations pages under /console.
type Console struct {
	cfg   Config
	deps  Deps
	pages map[string]*template.Template
	mux   *http.ServeMux
	oidc  *oidcSignIn
	// formToken names one rendering of a form whose action is applied
	// once (the bulk decisions); randomToken, fixed in tests.
	formToken func() string
}

// New checks the configuration and parses the pages.
func New(cfg Config, d Deps) (*Console, error) {
	switch cfg.Mode {
	case ModeLocal:
		if strings.TrimSpace(cfg.LocalUser) == "" {
			return nil, errors.New("console: local mode needs the name of its one user")
		}
	case ModeProxy:
		if cfg.UserHeader == "" || len(cfg.TrustedProxies) == 0 {
			return nil, errors.New("console: proxy mode needs the user header and the trusted proxies")
		}
		if len(cfg.Operators) == 0 && len(cfg.Viewers) == 0 {
			return nil, errors.New("console: proxy mode needs operators or viewers")
		}
	case ModeOIDC:
		if err := cfg.OIDC.Check(); err != nil {
			return nil, fmt.Errorf("console: %w", err)
		}
		if len(cfg.Operators) == 0 && len(cfg.Viewers) == 0 {
			return nil, errors.New("console: oidc mode needs operators or viewers")
		}
	default:
		return nil, fmt.Errorf("console: unknown mode %q (want local, proxy or oidc)", cfg.Mode)
	}
	if d.Store == nil || d.Providers == nil || d.Findings == nil {
		return nil, errors.New("console: a store, the findings service and the providers are required")
	}
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Console{cfg: cfg, deps: d, pages: map[string]*template.Template{}, mux: http.NewServeMux(), formToken: randomToken}
	for _, p := range pageNames {
		files := append([]string{"templates/layout.html", "templates/" + p + ".html"}, partials[p]...)
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, files...)
		if err != nil {
			return nil, fmt.Errorf("console: page %s: %w", p, err)
		}
		c.pages[p] = t
	}
	if cfg.Mode == ModeOIDC {
		var err error
		if c.oidc, err = newOIDCSignIn(cfg.OIDC, d.Clock); err != nil {
			return nil, fmt.Errorf("console: %w", err)
		}
	}
	c.routes()
	return c, nil
}

// Handler serves /console/ with sign-in, roles and cross-origin protection
// of every form.
func (c *Console) Handler() http.Handler {
	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, user{}, http.StatusForbidden, "This form was sent from another site and was refused.")
	}))
	h := c.identify(csrf.Handler(c.mux))
	if c.oidc == nil {
		return h
	}
	// The sign-in pages come before identification.
	signin := http.NewServeMux()
	signin.HandleFunc("GET /console/login", c.login)
	signin.HandleFunc("GET /console/callback", c.callback)
	signin.Handle("POST /console/logout", csrf.Handler(http.HandlerFunc(c.logout)))
	signin.Handle("/", h)
	return signin
}

// user is the signed-in person.
type user struct {
	Name string
	Role string
}

func (u user) CanAct() bool { return u.Role == RoleOperator }

type userKey struct{}

func userOf(r *http.Request) user {
	u, _ := r.Context().Value(userKey{}).(user)
	return u
}

// identify signs the person in by the configured mode and sets their role.
func (c *Console) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		remote, err := remoteAddr(r)
		if err != nil {
			c.fail(w, r, user{}, http.StatusForbidden, "Your address could not be read.")
			return
		}
		var u user
		switch c.cfg.Mode {
		case ModeLocal:
			if !remote.IsLoopback() || !loopbackHost(r.Host) {
				c.fail(w, r, user{}, http.StatusForbidden, "The console in local mode serves this machine only.")
				return
			}
			u = user{Name: c.cfg.LocalUser, Role: RoleOperator}
		case ModeOIDC:
			var ok bool
			if u, ok = c.identifyOIDC(w, r); !ok {
				return
			}
		case ModeProxy:
			if !slices.ContainsFunc(c.cfg.TrustedProxies, func(p netip.Prefix) bool { return p.Contains(remote) }) {
				c.fail(w, r, user{}, http.StatusForbidden, "Sign in through the company's proxy.")
				return
			}
			name := strings.TrimSpace(r.Header.Get(c.cfg.UserHeader))
			if name == "" || len(name) > 200 || strings.ContainsAny(name, "\r\n\t") {
				c.fail(w, r, user{}, http.StatusUnauthorized, "You are not signed in.")
				return
			}
			u = user{Name: name, Role: c.roleOf(name)}
			if u.Role == "" {
				c.fail(w, r, u, http.StatusForbidden, "You have no role in the console: ask for viewer or operator.")
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
	})
}

func (c *Console) roleOf(name string) string { return c.roleOfAny(name, nil) }

// roleOfAny gives the role of a person known by name (an e-mail address)
// and, in ModeOIDC, by groups: the highest any of them is granted.
func (c *Console) roleOfAny(name string, groups []string) string {
	names := append([]string{name}, groups...)
	match := func(list []string) bool {
		return slices.ContainsFunc(list, func(s string) bool {
			return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(strings.TrimSpace(s), n) })
		})
	}
	switch {
	case match(c.cfg.Operators):
		return RoleOperator
	case match(c.cfg.Viewers) || slices.Contains(c.cfg.Viewers, "*"):
		return RoleViewer
	}
	return ""
}

func remoteAddr(r *http.Request) (netip.Addr, error) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, err
	}
	return ap.Addr().Unmap(), nil
}

// loopbackHost refuses requests naming another host (DNS rebinding).
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// render writes a page; a template error is logged and answered 500.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, page string, data map[string]any) {
	data["User"] = userOf(r)
	data["SignOut"] = c.oidc != nil && userOf(r).Name != ""
	data["Page"] = page
	var b strings.Builder
	if err := c.pages[page].Execute(&b, data); err != nil {
		c.deps.Logger.Error("console: render", "page", page, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func (c *Console) fail(w http.ResponseWriter, r *http.Request, u user, status int, msg string) {
	if u.Name != "" {
		r = r.WithContext(context.WithValue(r.Context(), userKey{}, u))
	}
	c.render(w, r, status, "error", map[string]any{"Title": http.StatusText(status), "Status": status, "Message": msg})
}

// internal answers an unexpected error without showing it.
func (c *Console) internal(w http.ResponseWriter, r *http.Request, err error) {
	c.deps.Logger.Error("console", "path", r.URL.Path, "error", err)
	c.fail(w, r, userOf(r), http.StatusInternalServerError, "Something went wrong; it has been logged.")
}

var funcs = template.FuncMap{
	"when":   report.LocalTime,
	"amount": money.Amount.Display,
	// remediable says whether a verb (refund, writeoff, retry, cancel)
	// applies to a finding's kind.
	"remediable": func(verb string, kind ledger.Kind) bool { return findings.Remediable(findings.Verb(verb), kind) },
	// dict pairs titles with lists for a template to range over, in the
	// titles' order.
	"dict": func(pairs ...any) map[string]any {
		out := map[string]any{}
		for i := 0; i+1 < len(pairs); i += 2 {
			out[fmt.Sprint(pairs[i])] = pairs[i+1]
		}
		return out
	},
}
