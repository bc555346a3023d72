package console

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestOIDCSignIn signs people in through an in-process OpenID provider
// (mockoidc): an operator by e-mail acts and is recorded, a viewer by group
// reads and is refused an action, someone without a role gets no session,
// and a forged session cookie or a callback with the wrong state signs no
// one in.
func TestOIDCSignIn(t *testing.T) {
	t.Parallel()
	for _, engine := range dbtest.Engines() {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, engine.New)
			m, err := mockoidc.Run()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Shutdown() })
			mc := m.Config()

			var handler http.Handler
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
			t.Cleanup(srv.Close)
			c, err := New(Config{Mode: ModeOIDC, Operators: []string{"ops@example.com"}, Viewers: []string{"finance-readers"},
				OIDC: OIDCConfig{Issuer: mc.Issuer, ClientID: mc.ClientID, ClientSecret: mc.ClientSecret,
					RedirectURL: srv.URL + "/console/callback", Scopes: []string{"openid", "email", "groups"},
					SessionKey: []byte(strings.Repeat("k", 32))}},
				Deps{Store: b.store, Clock: time.Now, Providers: b.console.deps.Providers, Findings: b.console.deps.Findings})
			if err != nil {
				t.Fatal(err)
			}
			handler = c.Handler()

			browser := func() *http.Client {
				jar, err := cookiejar.New(nil)
				if err != nil {
					t.Fatal(err)
				}
				return &http.Client{Jar: jar}
			}
			get := func(cl *http.Client, path string) (int, string, *http.Response) {
				t.Helper()
				resp, err := cl.Get(srv.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(raw), resp
			}

			// Not signed in: a page sends the browser to the provider and back.
			ops := browser()
			m.QueueUser(&mockoidc.MockUser{Subject: "1", Email: "ops@example.com", EmailVerified: true})
			code, body, resp := get(ops, "/console/findings/"+b.unknown)
			if code != 200 || !strings.Contains(body, "ops@example.com (operator)") || !strings.Contains(body, `action="/console/logout"`) ||
				resp.Request.URL.Path != "/console/findings/"+b.unknown {
				t.Fatalf("operator sign-in: %d at %s\n%s", code, resp.Request.URL, body)
			}
			u, _ := url.Parse(srv.URL + "/console/")
			for _, ck := range ops.Jar.Cookies(u) {
				if ck.Name == flowCookie {
					t.Errorf("the sign-in cookie outlived the sign-in")
				}
			}
			r, err := ops.PostForm(srv.URL+"/console/findings/"+b.unknown+"/resolve", url.Values{"note": {"refunded by hand"}})
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			f, err := b.store.GetFinding(context.Background(), b.unknown)
			if err != nil || f.Status != ledger.FindingResolved || f.Resolver != "ops@example.com" {
				t.Fatalf("operator resolve: %d, %s by %q, %v", r.StatusCode, f.Status, f.Resolver, err)
			}
			evs, _ := b.store.FindingHistory(context.Background(), b.unknown)
			if last := evs[len(evs)-1]; last.Actor != "ops@example.com" || last.Surface != ledger.SurfaceWeb {
				t.Errorf("history: %+v", last)
			}

			// A viewer by group reads and may not act.
			viewer := browser()
			m.QueueUser(&mockoidc.MockUser{Subject: "2", Email: "reader@example.com", EmailVerified: true, Groups: []string{"finance-readers"}})
			if code, body, _ := get(viewer, "/console/findings"); code != 200 || !strings.Contains(body, "reader@example.com (viewer)") {
				t.Fatalf("viewer sign-in: %d\n%s", code, body)
			}
			r, err = viewer.PostForm(srv.URL+"/console/findings/"+b.dup+"/resolve", url.Values{"note": {"mine"}})
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != http.StatusForbidden {
				t.Errorf("viewer action: %d", r.StatusCode)
			}
			if f, _ := b.store.GetFinding(context.Background(), b.dup); f.Status == ledger.FindingResolved {
				t.Errorf("a viewer resolved a finding")
			}

			// No role: refused, and no session is kept.
			stranger := browser()
			m.QueueUser(&mockoidc.MockUser{Subject: "3", Email: "someone@example.com", EmailVerified: true, Groups: []string{"sales"}})
			if code, _, _ := get(stranger, "/console/findings"); code != http.StatusForbidden {
				t.Errorf("stranger: %d", code)
			}
			for _, ck := range stranger.Jar.Cookies(u) {
				if ck.Name == sessionCookie {
					t.Errorf("a person without a role got a session")
				}
			}

			// A forged session cookie signs no one in.
			noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/console/findings", nil)
			req.AddCookie(&http.Cookie{Name: sessionCookie, Value: "eyJlIjoib3BzQGV4YW1wbGUuY29tIn0"})
			resp, err = noFollow.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/console/login") {
				t.Errorf("forged session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
			}
			// A POST without a session is refused, not redirected.
			resp, err = noFollow.PostForm(srv.URL+"/console/findings/"+b.dup+"/ack", url.Values{})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("post without a session: %d", resp.StatusCode)
			}
			// A callback whose state is not the one started here.
			if code, _, _ := get(browser(), "/console/callback?code=x&state=forged"); code != http.StatusBadRequest {
				t.Errorf("forged state: %d", code)
			}
			// Signing out ends the session.
			r, err = ops.PostForm(srv.URL+"/console/logout", url.Values{})
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			for _, ck := range ops.Jar.Cookies(u) {
				if ck.Name == sessionCookie {
					t.Errorf("signed out, the session cookie is still there")
				}
			}
		})
	}
}

func TestOIDCConfig(t *testing.T) {
	s := dbtest.SQLite(t)
	prov := func(context.Context) (map[string]*time.Location, error) { return nil, nil }
	good := OIDCConfig{Issuer: "https://id.example.com", ClientID: "c", ClientSecret: "s",
		RedirectURL: "https://reconcile.example.com/console/callback", SessionKey: []byte(strings.Repeat("k", 32))}
	for name, edit := range map[string]func(*Config){
		"no roles":     func(c *Config) { c.Operators = nil },
		"short key":    func(c *Config) { c.OIDC.SessionKey = []byte("short") },
		"no secret":    func(c *Config) { c.OIDC.ClientSecret = "" },
		"bad redirect": func(c *Config) { c.OIDC.RedirectURL = "https://reconcile.example.com/callback" },
	} {
		cfg := Config{Mode: ModeOIDC, Operators: []string{"ops@example.com"}, OIDC: good}
		edit(&cfg)
		if _, err := New(cfg, Deps{Store: s, Providers: prov, Findings: findings.NewService(s, findings.Options{})}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c, err := New(Config{Mode: ModeOIDC, Operators: []string{"ops@example.com"}, OIDC: good}, Deps{Store: s, Providers: prov, Findings: findings.NewService(s, findings.Options{})})
	if err != nil || !c.oidc.secure {
		t.Fatalf("good config: %v (secure %v)", err, c != nil && c.oidc.secure)
	}
}
