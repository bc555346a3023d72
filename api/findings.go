package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/jsonbody"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/schedule"
)

// ActorHeader names the person a findings API call acts for. Without it,
// actions are recorded as done by apiTokenActor: the one API token is the
// only identity the server can vouch for.
const (
	ActorHeader   = "X-Reconcile-Actor"
	apiTokenActor = "api-token"
)

// The findings API, /v1/findings: list with filters, get with evidence and
// history, and people's actions (ack, resolve, reopen, notes, match,
// unmatch), behind the same bearer token as the intents API.

// findingsList is the answer of GET /v1/findings.
type findingsList struct {
	Findings []findings.FindingView `json:"findings"`
	// AtRisk totals the listed unresolved findings' money at risk per
	// currency.
	AtRisk []riskTotal `json:"at_risk"`
}

type riskTotal struct {
	Currency string `json:"currency"`
	Amount   string `json:"amount"`
	Findings int    `json:"findings"`
}

// totalsAtRisk sums the money at risk of the unresolved findings per
// currency, currencies sorted (findings.TotalsAtRisk, as the console and the
// metric count it).
func totalsAtRisk(fs []ledger.Finding) []riskTotal {
	ts := findings.TotalsAtRisk(fs)
	out := make([]riskTotal, 0, len(ts))
	for _, t := range ts {
		out = append(out, riskTotal{Currency: t.Amount.Currency, Amount: t.Amount.Text(), Findings: t.Findings})
	}
	return out
}

// parseFindingFilter reads the list filters: status and kind (repeated or
// comma-separated), provider, from and to (RFC 3339 or YYYY-MM-DD in the
// provider's zone, on the evidence time), run and limit. Statuses default
// to open and acknowledged.
func (api *API) parseFindingFilter(ctx context.Context, q url.Values) (ledger.FindingFilter, error) {
	f := ledger.FindingFilter{Limit: 1000}
	list := func(key string) []string {
		var out []string
		for _, v := range q[key] {
			for _, p := range strings.Split(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
		}
		return out
	}
	statuses := list("status")
	if len(statuses) == 0 {
		statuses = []string{"open", "acknowledged"}
	}
	for _, s := range statuses {
		st, ok := ledger.ParseFindingStatus(s)
		if !ok {
			return f, badField("status", "%q: want open, acknowledged or resolved", s)
		}
		f.Statuses = append(f.Statuses, st)
	}
	for _, k := range list("kind") {
		kind, ok := findings.ParseKind(k)
		if !ok {
			return f, badField("kind", "%q: want one of %s", k, findings.KindNames())
		}
		f.Kinds = append(f.Kinds, kind)
	}
	zone, err := api.parseScope(ctx, q, &f)
	if err != nil {
		return f, err
	}
	for _, b := range []struct {
		key string
		dst *time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		if v := q.Get(b.key); v != "" {
			t, err := schedule.ParseTime(v, zone)
			if err != nil {
				return f, badField(b.key, "%v", err)
			}
			*b.dst = t
		}
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return f, badField("to", "is not after from")
	}
	if v := q.Get("run"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return f, badField("run", "%q: want a run id", v)
		}
		f.RunID = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 10000 {
			return f, badField("limit", "%q: want 1 to 10000", v)
		}
		f.Limit = n
	}
	return f, nil
}

// parseScope reads the provider and account of a findings filter into f
// and returns the zone its dates are read in: the provider's, else UTC.
func (api *API) parseScope(ctx context.Context, q url.Values, f *ledger.FindingFilter) (*time.Location, error) {
	p := q.Get("provider")
	if p == "" {
		if q.Has("account") {
			return nil, badField("account", "needs provider: an account belongs to one provider")
		}
		return time.UTC, nil
	}
	known, err := api.cfg.Providers(ctx)
	if err != nil {
		return nil, err
	}
	zone, ok := known[p]
	if !ok {
		return nil, badField("provider", "%q: unknown provider", p)
	}
	f.Provider = p
	if q.Has("account") {
		acct, err := accountOf(api.cfg.Accounts, p, q.Get("account"))
		if err != nil {
			return nil, badField("account", "%s", err)
		}
		f.Accounts = []string{acct}
	}
	return zone, nil
}

func (api *API) listFindings(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, err := api.parseFindingFilter(ctx, r.URL.Query())
	if err != nil {
		api.fail(w, err)
		return
	}
	fs, err := api.cfg.Store.ListFindings(ctx, f)
	if err != nil {
		api.fail(w, err)
		return
	}
	out := findingsList{Findings: make([]findings.FindingView, 0, len(fs)), AtRisk: totalsAtRisk(fs)}
	for _, f := range fs {
		out.Findings = append(out.Findings, findings.ViewFinding(f))
	}
	writeJSON(w, http.StatusOK, out)
}

func (api *API) getFinding(w http.ResponseWriter, r *http.Request) {
	api.writeDetail(w, r, r.PathValue("id"))
}

// writeDetail answers with the detail of finding id.
func (api *API) writeDetail(w http.ResponseWriter, r *http.Request, id string) {
	d, err := findings.Load(r.Context(), api.cfg.Store, id)
	if err != nil {
		api.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d.View())
}

// actor is who a request acts for: the X-Reconcile-Actor header, validated,
// or the API token.
func actorOf(r *http.Request) (ledger.Actor, error) {
	name := strings.TrimSpace(r.Header.Get(ActorHeader))
	if name == "" {
		name = apiTokenActor
	}
	a := ledger.Actor{Name: name, Surface: ledger.SurfaceAPI}
	if err := a.Validate(); err != nil {
		var fe *ledger.FieldError
		if errors.As(err, &fe) {
			return a, badField(ActorHeader, "%v", fe.Err)
		}
		return a, err
	}
	return a, nil
}

type actionRequest struct {
	Note string `json:"note"`
}

// decodeActionBody reads the JSON object of a person's action on a finding
// into req: at most 64 KiB, no unknown fields, an empty body for an empty
// object, no key named twice. want says what the object holds, for the
// error.
func decodeActionBody(r *http.Request, req any, want string) *Error {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err == nil {
		err = jsonbody.Decode(raw, req, jsonbody.Options{DisallowUnknownFields: true, AllowEmpty: true})
	}
	var dup *jsonbody.DuplicateKeyError
	if errors.As(err, &dup) {
		return duplicateKey(dup)
	}
	if err != nil {
		msg := fmt.Sprintf("not a JSON object with %s: %v", want, err)
		return &Error{Status: http.StatusBadRequest, Message: "body: " + msg, Fields: []FieldProblem{{Field: "body", Message: msg}}}
	}
	return nil
}

// action serves a decision whose body is {"note": ...}: ack, resolve,
// reopen, notes.
func (api *API) action(verb findings.Verb) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req actionRequest
		if perr := decodeActionBody(r, &req, "a note"); perr != nil {
			api.fail(w, perr)
			return
		}
		api.decide(w, r, findings.Decision{Verb: verb, Note: req.Note})
	}
}

// decide applies d to the finding of the path for the request's actor
// through the findings service, and answers with the finding's detail.
func (api *API) decide(w http.ResponseWriter, r *http.Request, d findings.Decision) {
	who, err := actorOf(r)
	if err != nil {
		api.fail(w, err)
		return
	}
	d.FindingID, d.Actor = r.PathValue("id"), who
	out, err := api.cfg.Findings.Decide(r.Context(), d)
	var fe *ledger.FieldError
	switch {
	case errors.As(err, &fe) && fe.Field == "intent":
		err = badField("intent_key", "%v", fe.Err)
	case errors.Is(err, ledger.ErrConflict) && (d.Verb == findings.Match || d.Verb == findings.Unmatch):
		err = &Error{Status: http.StatusConflict, Message: err.Error()}
	case errors.Is(err, ledger.ErrConflict):
		err = &Error{Status: http.StatusConflict, Message: fmt.Sprintf("cannot %s a finding that is %s", verbText[d.Verb], out.Finding.Status),
			Current: string(out.Finding.Status)}
	}
	if err != nil {
		api.fail(w, err)
		return
	}
	api.writeDetail(w, r, d.FindingID)
}

// verbText says a verb in a sentence.
var verbText = map[findings.Verb]string{findings.Acknowledge: "acknowledge", findings.Resolve: "resolve",
	findings.Reopen: "reopen", findings.Note: "note"}
