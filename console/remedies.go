package console

import (
	"errors"
	"net/http"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
)

// pageNames are the console's pages; partials are the templates a page
// includes besides the layout and its own.
var (
	pageNames = []string{"findings", "finding", "runs", "quarantine", "jobs", "error", "requests", "close"}
	partials  = map[string][]string{
		"finding":  {"templates/remedies.html", "templates/flags.html", "templates/payout.html"},
		"jobs":     {"templates/waits.html"},
		"findings": {"templates/charts.html"},
	}
)

// The remedies' part of the console: the forms to refund, write off, retry
// or cancel on a finding's page (remedies.html), the requests awaiting a
// second person with their Approve and Reject forms (requests.html), and
// the refunds that wait for evidence on the jobs page (waits.html). The
// forms post to the finding's action route, which decides through the
// findings service like every other form.
func (c *Console) remedyRoutes() {
	c.mux.HandleFunc("GET /console/requests", c.requests)
	c.closeRoutes()
}

// requestView is a request as the requests page shows it.
type requestView struct {
	ledger.Remedy
	Finding ledger.Finding
	Zone    *time.Location
}

// requests lists the requests awaiting approval, oldest first, and the
// last ones decided.
func (c *Console) requests(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	zones, err := c.deps.Providers(ctx)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	now := c.deps.Clock()
	view := func(rs []ledger.Remedy) ([]requestView, error) {
		out := make([]requestView, 0, len(rs))
		for _, x := range rs {
			f, err := c.deps.Store.GetFinding(ctx, x.FindingID)
			if err != nil && !errors.Is(err, ledger.ErrNotFound) {
				return nil, err
			}
			out = append(out, requestView{Remedy: x, Finding: f, Zone: zones[x.Provider]})
		}
		return out, nil
	}
	waiting, err := c.deps.Store.ListRemedies(ctx, ledger.RemedyFilter{Statuses: []ledger.RemedyStatus{ledger.RemedyAwaitingApproval}})
	if err != nil {
		c.internal(w, r, err)
		return
	}
	var open, lapsed []ledger.Remedy
	for _, x := range waiting {
		if x.Expired(now) {
			lapsed = append(lapsed, x)
		} else {
			open = append(open, x)
		}
	}
	decided, err := c.deps.Store.ListRemedies(ctx, ledger.RemedyFilter{Statuses: []ledger.RemedyStatus{ledger.RemedyApplied,
		ledger.RemedyConfirmed, ledger.RemedyRejected, ledger.RemedyExpired}})
	if err != nil {
		c.internal(w, r, err)
		return
	}
	var recent []ledger.Remedy
	for i := len(decided) - 1; i >= 0 && len(recent) < 50; i-- {
		if decided[i].DecidedBy != "" || decided[i].Status == ledger.RemedyExpired {
			recent = append(recent, decided[i])
		}
	}
	data := map[string]any{"Title": "Requests awaiting approval", "UTC": time.UTC}
	for key, rs := range map[string][]ledger.Remedy{"Open": open, "Lapsed": lapsed, "Recent": recent} {
		v, err := view(rs)
		if err != nil {
			c.internal(w, r, err)
			return
		}
		data[key] = v
	}
	c.render(w, r, http.StatusOK, "requests", data)
}

// remedyProblem is how the finding page answers a refused remedy or
// request: ok is false for errors the page answers as any decision's.
func remedyProblem(verb findings.Verb, err error) (status int, msg string, ok bool) {
	var fe *ledger.FieldError
	switch {
	case err == nil:
		return 0, "", false
	case errors.Is(err, findings.ErrOwnRequest):
		return http.StatusForbidden, "You asked for this: another operator must approve it.", true
	case errors.Is(err, findings.ErrRequestExpired):
		return http.StatusConflict, "The request has expired unapproved and does nothing: ask again.", true
	case errors.Is(err, findings.ErrNotWaiting):
		return http.StatusConflict, "The request was approved, rejected or expired already.", true
	case errors.Is(err, findings.ErrRequestRequired):
		return http.StatusUnprocessableEntity, "Name the request to decide.", true
	case errors.As(err, &fe) && (fe.Field == "amount" || fe.Field == "txn" || fe.Field == "state" || fe.Field == "request" || fe.Field == "action"):
		return http.StatusUnprocessableEntity, "Refused: " + fe.Err.Error() + ".", true
	case errors.Is(err, ledger.ErrConflict) && findings.IsRemedy(verb):
		if msg := refusal(err); msg != err.Error() {
			return http.StatusConflict, "Refused: " + msg + ".", true
		}
	}
	return 0, "", false
}
