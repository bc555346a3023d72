package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"os/user"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/console"
)

// ConsoleConfig configures the web console of `reconcile serve`.
type ConsoleConfig struct {
	// Mode is off (default), local (loopback only, one person) or proxy
	// (people signed in by an authenticating reverse proxy).
	Mode string `mapstructure:"mode"`
	// LocalUser is the one person of local mode; default the operating
	// system user.
	LocalUser string `mapstructure:"local_user"`
	// UserHeader carries the person in proxy mode; default X-Forwarded-Email.
	UserHeader string `mapstructure:"user_header"`
	// TrustedProxies are the addresses or CIDR networks UserHeader is
	// accepted from.
	TrustedProxies []string `mapstructure:"trusted_proxies"`
	// Operators may act, Viewers may read ("*": anyone signed in).
	Operators []string `mapstructure:"operators"`
	Viewers   []string `mapstructure:"viewers"`
	// OIDC is the sign-in of oidc mode.
	OIDC ConsoleOIDC `mapstructure:"oidc"`
	// PublicURL is the console's address as people reach it
	// (https://reconcile.example.com); default, in oidc mode, the origin of
	// OIDC.RedirectURL. Slack links to its findings pages
	// (alerts.findings_url defaults to PublicURL/console/findings).
	PublicURL string `mapstructure:"public_url"`
	// Listen, when set, serves the console on a listener of its own (for
	// example an internal address) instead of under /console on
	// http.listen, the public callback port. Default "": http.listen.
	Listen string `mapstructure:"listen"`
}

// FindingsURL is the console's findings page as people reach it, or ""
// when the console is off or its address is unknown.
func (c ConsoleConfig) FindingsURL() (string, error) {
	if c.Mode == "" || c.Mode == "off" {
		return "", nil
	}
	base := strings.TrimSpace(c.PublicURL)
	if base == "" && c.Mode == console.ModeOIDC && c.OIDC.RedirectURL != "" {
		base = c.OIDC.RedirectURL
		if u, err := url.Parse(base); err == nil {
			base = u.Scheme + "://" + u.Host
		}
	}
	if base == "" {
		return "", nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("config console.public_url: %q is not an http(s) address", base)
	}
	return strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/") + "/console/findings", nil
}

// ConsoleOIDC signs people in with the company's OpenID Connect provider.
type ConsoleOIDC struct {
	Issuer   string `mapstructure:"issuer"`
	ClientID string `mapstructure:"client_id"`
	// ClientSecret (secret, RECONCILE_CONSOLE_OIDC_CLIENT_SECRET).
	ClientSecret string `mapstructure:"client_secret" secret:"env"`
	// RedirectURL is https://HOST/console/callback, as registered.
	RedirectURL string   `mapstructure:"redirect_url"`
	Scopes      []string `mapstructure:"scopes"`
	GroupsClaim string   `mapstructure:"groups_claim"`
	// SessionKey (secret, RECONCILE_CONSOLE_OIDC_SESSION_KEY, at least 32
	// characters) seals the session cookies.
	SessionKey string        `mapstructure:"session_key" secret:"env"`
	SessionTTL time.Duration `mapstructure:"session_ttl"`
}

func (c ConsoleConfig) validate() []error {
	if c.Mode == console.ModeOIDC {
		// Its secrets are checked by serve, the one command that needs them.
		if c.OIDC.ClientSecret == "" {
			c.OIDC.ClientSecret = "not-needed-here"
		}
		if c.OIDC.SessionKey == "" {
			c.OIDC.SessionKey = strings.Repeat("x", 32)
		}
	}
	if _, err := c.build(false); err != nil {
		return []error{err}
	}
	if _, err := c.FindingsURL(); err != nil {
		return []error{err}
	}
	return nil
}

// Console turns the configuration into the console's; nil when off. In
// local mode without local_user, the person is the operating system user.
func (c ConsoleConfig) Console() (*console.Config, error) {
	return c.build(true)
}

// build turns the configuration into the console's, asking the operating
// system who the local user is when osUser is set.
func (c ConsoleConfig) build(osUser bool) (*console.Config, error) {
	switch c.Mode {
	case "off", "":
		return nil, nil
	case console.ModeLocal, console.ModeProxy:
	case console.ModeOIDC:
		o := c.OIDC
		out := &console.Config{Mode: c.Mode, Operators: c.Operators, Viewers: c.Viewers, OIDC: console.OIDCConfig{
			Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret, RedirectURL: o.RedirectURL, Scopes: o.Scopes,
			GroupsClaim: o.GroupsClaim, SessionKey: []byte(o.SessionKey), SessionTTL: o.SessionTTL}}
		if err := out.OIDC.Check(); err != nil {
			return nil, fmt.Errorf("config console.oidc: %w (secrets: RECONCILE_CONSOLE_OIDC_CLIENT_SECRET, RECONCILE_CONSOLE_OIDC_SESSION_KEY)", err)
		}
		if len(c.Operators) == 0 && len(c.Viewers) == 0 {
			return nil, fmt.Errorf("config console: oidc mode needs console.operators or console.viewers")
		}
		return out, nil
	default:
		return nil, fmt.Errorf("config console.mode: unknown mode %q (want off, local, proxy or oidc)", c.Mode)
	}
	out := &console.Config{Mode: c.Mode, LocalUser: strings.TrimSpace(c.LocalUser), UserHeader: c.UserHeader,
		Operators: c.Operators, Viewers: c.Viewers}
	if osUser && out.Mode == console.ModeLocal && out.LocalUser == "" {
		if u, err := user.Current(); err == nil {
			out.LocalUser = u.Username
		}
	}
	for i, p := range c.TrustedProxies {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			a, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return nil, fmt.Errorf("config console.trusted_proxies[%d]: %q is not an address or CIDR network", i, p)
			}
			pfx = netip.PrefixFrom(a, a.BitLen())
		}
		out.TrustedProxies = append(out.TrustedProxies, pfx)
	}
	if c.Mode == console.ModeProxy && (len(out.TrustedProxies) == 0 || strings.TrimSpace(c.UserHeader) == "") {
		return nil, fmt.Errorf("config console: proxy mode needs console.user_header and console.trusted_proxies")
	}
	if c.Mode == console.ModeProxy && len(c.Operators) == 0 && len(c.Viewers) == 0 {
		return nil, fmt.Errorf("config console: proxy mode needs console.operators or console.viewers")
	}
	return out, nil
}
