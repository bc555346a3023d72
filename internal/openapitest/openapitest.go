package openapitest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/reconcilehq/reconcile/providers/mpesa"
)

// File is docs/openapi.yaml.
func File(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("openapitest: cannot find the module directory")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "docs", "openapi.yaml")
}

// Load loads and validates docs/openapi.yaml (OpenAPI 3.1: kin-openapi
// validates its schemas as JSON Schema 2020-12).
func Load(t testing.TB) *openapi3.T {
	t.Helper()
	file := File(t)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(file)
	if err != nil {
		t.Fatalf("load %s: %v", file, err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("%s is OpenAPI %s, want 3.1", file, doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("validate %s: %v", file, err)
	}
	return doc
}

// Checker sends requests to a live server and validates each request and
// answer against the description.
type Checker struct {
	t      testing.TB
	doc    *openapi3.T
	router routers.Router
	mu     sync.Mutex
	// seen records operation id -> statuses answered.
	seen map[string][]int
}

// New loads the description and returns a Checker reporting to t.
func New(t testing.TB) *Checker {
	doc := Load(t)
	// Route by path alone: the two ports are told apart by the test, which
	// sends admin paths to the admin listener.
	routed := *doc
	routed.Servers = nil
	routed.Paths = openapi3.NewPaths()
	for path, item := range doc.Paths.Map() {
		it := *item
		it.Servers = nil
		routed.Paths.Set(path, &it)
	}
	router, err := legacy.NewRouter(&routed)
	if err != nil {
		t.Fatal(err)
	}
	return &Checker{t: t, doc: doc, router: router, seen: map[string][]int{}}
}

// bearerOnly accepts a request that carries a bearer token; checking its
// value is the server's job.
func bearerOnly(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecuritySchemeName == "bearer" && strings.HasPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ") {
		return nil
	}
	return errors.New("no bearer token")
}

// Exchange is one request's answer.
type Exchange struct {
	Code   int
	Body   string
	Header http.Header
	// ReqErr is what the description says about the request: nil when it
	// is valid.
	ReqErr error
}

// Do sends method base+path with body and headers, validates the request
// and the answer, and returns the answer. A route the description lacks
// and an answer it does not describe fail the test.
func (c *Checker) Do(base, method, path string, body []byte, header http.Header) Exchange {
	c.t.Helper()
	ctx := context.Background()
	newReq := func() *http.Request {
		r, err := http.NewRequest(method, base+path, bytes.NewReader(body))
		if err != nil {
			c.t.Fatal(err)
		}
		for k, v := range header {
			r.Header[k] = v
		}
		return r
	}
	check := newReq()
	route, params, err := c.router.FindRoute(check)
	if err != nil {
		c.t.Fatalf("%s %s is not in docs/openapi.yaml: %v", method, path, err)
	}
	opts := &openapi3filter.Options{AuthenticationFunc: bearerOnly, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route, Options: opts}
	reqErr := openapi3filter.ValidateRequest(ctx, in)

	resp, err := http.DefaultClient.Do(newReq())
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Options: opts}
	out.SetBodyBytes(got)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		c.t.Errorf("%s %s answered %d %s %q, which docs/openapi.yaml does not describe: %v", method, path, resp.StatusCode,
			resp.Header.Get("Content-Type"), Truncate(string(got)), err)
	}
	c.mu.Lock()
	c.seen[route.Operation.OperationID] = append(c.seen[route.Operation.OperationID], resp.StatusCode)
	c.mu.Unlock()
	return Exchange{Code: resp.StatusCode, Body: string(got), Header: resp.Header, ReqErr: reqErr}
}

// Truncate shortens s for a message.
func Truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// Covered fails for every documented operation whose path has one of the
// prefixes (every operation without any) that the test never called.
func (c *Checker) Covered(prefixes ...string) {
	c.t.Helper()
	for path, item := range c.doc.Paths.Map() {
		if len(prefixes) > 0 && !hasPrefix(path, prefixes) {
			continue
		}
		for method, op := range item.Operations() {
			if len(c.seen[op.OperationID]) == 0 {
				c.t.Errorf("%s %s (%s) is described but was not exercised", method, path, op.OperationID)
			}
		}
	}
}

// hasPrefix reports whether path starts with one of prefixes.
func hasPrefix(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// Documented fails for every route pattern ("METHOD /path", as given to
// an http.ServeMux) that the description lacks. The M-Pesa handler's
// pattern, its prefix alone, stands for its endpoints.
func (c *Checker) Documented(patterns []string) {
	c.t.Helper()
	has := func(method, path string) bool {
		item := c.doc.Paths.Value(path)
		return item != nil && item.GetOperation(method) != nil
	}
	prefix := "/daraja/"
	for _, p := range patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "", p
		}
		switch {
		case path == prefix && method == "":
			// The M-Pesa handler serves its endpoints under the prefix.
			for _, e := range mpesa.Endpoints {
				if !has(http.MethodPost, prefix+"{token}/"+e.Path) {
					c.t.Errorf("M-Pesa endpoint POST %s{token}/%s is served but not described", prefix, e.Path)
				}
			}
		case !has(method, path):
			c.t.Errorf("route %q is served but not described in docs/openapi.yaml", p)
		}
	}
}
