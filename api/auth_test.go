package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestBearerAuth passes the right token only, and nothing when no token is
// configured (an empty bearer token is no token).
func TestBearerAuth(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, c := range []struct {
		token, header string
		want          int
	}{
		{"s3cret", "Bearer s3cret", http.StatusNoContent},
		{"s3cret", "Bearer s3cre", http.StatusUnauthorized},
		{"s3cret", "bearer s3cret", http.StatusUnauthorized},
		{"s3cret", "s3cret", http.StatusUnauthorized},
		{"s3cret", "", http.StatusUnauthorized},
		{"", "Bearer ", http.StatusUnauthorized},
		{"", "", http.StatusUnauthorized},
	} {
		for name, h := range map[string]http.Handler{
			"bearer": BearerAuth(c.token, ok),
		} {
			r := httptest.NewRequest(http.MethodGet, "/v1/x", nil)
			if c.header != "" {
				r.Header.Set("Authorization", c.header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.want {
				t.Errorf("%s: token %q, Authorization %q: %d, want %d", name, c.token, c.header, w.Code, c.want)
			}
			if w.Code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") != `Bearer realm="reconcile"` {
				t.Errorf("%s: 401 without the challenge: %q", name, w.Header().Get("WWW-Authenticate"))
			}
		}
	}
}
