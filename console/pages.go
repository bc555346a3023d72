package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
)

func (c *Console) routes() {
	c.mux.HandleFunc("GET /console/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/console/findings", http.StatusSeeOther)
	})
	c.mux.HandleFunc("GET /console/findings", c.findings)
	c.mux.HandleFunc("GET /console/findings/{id}", c.finding)
	c.mux.HandleFunc("POST /console/findings/{id}/{action}", c.operator(c.act))
	c.mux.HandleFunc("GET /console/runs", c.runs)
	c.mux.HandleFunc("GET /console/quarantine", c.quarantine)
	c.mux.HandleFunc("POST /console/quarantine/{id}/{action}", c.operator(c.quarantineAct))
	c.mux.HandleFunc("GET /console/jobs", c.jobs)
	c.mux.HandleFunc("POST /console/jobs/{id}/retry", c.operator(c.retryJob))
	c.remedyRoutes()
	c.listRoutes()
}

// operator lets only operators through.
func (c *Console) operator(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !userOf(r).CanAct() {
			c.fail(w, r, userOf(r), http.StatusForbidden, "Viewers may read, not act: ask for the operator role.")
			return
		}
		next(w, r)
	}
}

func (c *Console) actor(r *http.Request) ledger.Actor {
	return ledger.Actor{Name: userOf(r).Name, Surface: ledger.SurfaceWeb}
}

// filterForm is the findings filter as the form shows it; Q searches
// (findingsSearch).
type filterForm struct {
	Status, Provider, Account, Kind, From, To, Run, Q string
}

var statusChoices = map[string][]ledger.FindingStatus{
	"":             {ledger.FindingOpen, ledger.FindingAcknowledged},
	"open":         {ledger.FindingOpen},
	"acknowledged": {ledger.FindingAcknowledged},
	"resolved":     {ledger.FindingResolved},
	"all":          nil,
}

func (c *Console) findings(w http.ResponseWriter, r *http.Request) {
	c.showFindings(w, r, r.URL.Query(), http.StatusOK, "", nil)
}

// totals sums the money at risk of the unresolved findings per currency,
// as the API and the metric do (findings.TotalsAtRisk).
func totals(fs []ledger.Finding) []findings.RiskTotal { return findings.TotalsAtRisk(fs) }

type sourceView struct {
	ledger.Source
	Masked string
}

type txnView struct {
	ledger.ProviderTxn
	Seen []sourceView
}

func (c *Console) finding(w http.ResponseWriter, r *http.Request) {
	c.showFinding(w, r, http.StatusOK, "")
}

// showFinding renders a finding's page, with a problem from a refused action.
func (c *Console) showFinding(w http.ResponseWriter, r *http.Request, status int, problem string) {
	ctx := r.Context()
	id := r.PathValue("id")
	d, err := findings.Load(ctx, c.deps.Store, id)
	if errors.Is(err, ledger.ErrNotFound) {
		c.fail(w, r, userOf(r), http.StatusNotFound, "There is no finding "+id+".")
		return
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	zones, err := c.deps.Providers(ctx)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	f := d.Finding
	data := map[string]any{"Title": "Finding " + f.ID, "F": f, "Zone": zones[f.Provider], "Problem": problem, "History": d.History}
	if d.Intent != nil {
		data["Intent"], data["Attempts"], data["Customer"] = *d.Intent, d.Attempts, ledger.MaskCustomer(d.Intent.Customer)
	}
	views := make([]txnView, 0, len(d.Txns))
	for _, t := range d.Txns {
		t.Counterparty = ledger.MaskCustomer(t.Counterparty)
		v := txnView{ProviderTxn: t}
		for _, s := range t.Sources {
			v.Seen = append(v.Seen, sourceView{Source: s, Masked: ledger.MaskPayload(s.Raw)})
		}
		views = append(views, v)
	}
	data["Txns"] = views
	if d.Link != nil {
		data["Link"] = *d.Link
	}
	data["Remedies"] = d.Remedies
	closes, err := c.deps.Store.ListCloses(ctx)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	if cl, ok := ledger.ClosedBefore(f, closes, zones[f.Provider]); ok {
		data["LateFor"] = cl
	}
	if p := viewPayout(d.Payout); p != nil {
		data["Payout"] = p
	}
	c.render(w, r, status, "finding", data)
}

// act applies an operator's decision on a finding (ack, resolve, reopen,
// note, match, unmatch) through the findings service.
func (c *Console) act(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	verb, ok := findings.ParseVerb(r.PathValue("action"))
	if !ok {
		c.fail(w, r, userOf(r), http.StatusNotFound, "There is no such action.")
		return
	}
	d := findings.Decision{Verb: verb, FindingID: id, Actor: c.actor(r), Note: r.PostFormValue("note"), IntentKey: r.PostFormValue("intent"),
		Amount: r.PostFormValue("amount"), TxnID: r.PostFormValue("txn")}
	if v := r.PostFormValue("request"); v != "" {
		if d.Remedy, _ = strconv.ParseInt(v, 10, 64); d.Remedy <= 0 {
			c.showFinding(w, r, http.StatusUnprocessableEntity, "There is no such request.")
			return
		}
	}
	_, err := c.deps.Findings.Decide(r.Context(), d)
	if status, msg, ok := remedyProblem(verb, err); ok {
		c.showFinding(w, r, status, msg)
		return
	}
	var fe *ledger.FieldError
	switch {
	case errors.Is(err, findings.ErrNoteRequired):
		c.showFinding(w, r, http.StatusUnprocessableEntity, "Write a note: say what was done or why.")
	case errors.Is(err, findings.ErrNoteTooLong):
		c.showFinding(w, r, http.StatusUnprocessableEntity, fmt.Sprintf("The note is longer than %d bytes.", findings.MaxNote))
	case errors.Is(err, findings.ErrIntentRequired):
		c.showFinding(w, r, http.StatusUnprocessableEntity, "Name the intent the payment belongs to.")
	case errors.As(err, &fe):
		c.showFinding(w, r, http.StatusUnprocessableEntity, "Refused: "+fe.Err.Error()+".")
	case errors.Is(err, ledger.ErrNotFound):
		c.fail(w, r, userOf(r), http.StatusNotFound, "There is no finding "+id+".")
	case errors.Is(err, ledger.ErrConflict) && (verb == findings.Match || verb == findings.Unmatch):
		c.showFinding(w, r, http.StatusConflict, "Refused: "+refusal(err)+".")
	case errors.Is(err, ledger.ErrConflict):
		c.showFinding(w, r, http.StatusConflict, "That does not apply to the finding as it is now (someone may have acted first).")
	case err != nil:
		c.internal(w, r, err)
	default:
		http.Redirect(w, r, "/console/findings/"+url.PathEscape(id), http.StatusSeeOther)
	}
}

func (c *Console) runs(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	runs, err := c.deps.Store.ListRuns(ctx, "", 100)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	zones, err := c.deps.Providers(ctx)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "runs", map[string]any{"Title": "Runs", "Runs": runs, "Zones": zones})
}

func (c *Console) quarantine(w http.ResponseWriter, r *http.Request) {
	c.showQuarantine(w, r, http.StatusOK, "", "")
}

func (c *Console) showQuarantine(w http.ResponseWriter, r *http.Request, status int, problem, done string) {
	items, err := c.deps.Store.ListQuarantine(r.Context(), "", 200)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	type itemView struct {
		ledger.QuarantineItem
		Masked string
	}
	views := make([]itemView, 0, len(items))
	for _, q := range items {
		views = append(views, itemView{QuarantineItem: q, Masked: ledger.MaskPayload(q.Raw)})
	}
	c.render(w, r, status, "quarantine", map[string]any{"Title": "Quarantine", "Items": views, "Problem": problem, "Done": done,
		"UTC": time.UTC})
}

func (c *Console) quarantineAct(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		c.fail(w, r, userOf(r), http.StatusNotFound, "There is no such item.")
		return
	}
	note := strings.TrimSpace(r.PostFormValue("note"))
	now := c.deps.Clock().UTC()
	switch r.PathValue("action") {
	case "dismiss":
		if note == "" {
			c.showQuarantine(w, r, http.StatusUnprocessableEntity, fmt.Sprintf("Item %d: write a note saying why it needs nothing more.", id), "")
			return
		}
		_, err = c.deps.Store.UpdateQuarantine(ctx, ledger.QuarantineUpdate{ID: id, To: ledger.QuarantineDismissed, Actor: c.actor(r), Note: note, Now: now})
	case "replay":
		var q ledger.QuarantineItem
		q, err = c.deps.Store.GetQuarantine(ctx, id)
		if err == nil && q.Status != ledger.QuarantineKept {
			err = ledger.ErrConflict
		}
		if err == nil {
			if c.deps.Replay == nil {
				c.showQuarantine(w, r, http.StatusUnprocessableEntity, fmt.Sprintf("Item %d: replay is not available here.", id), "")
				return
			}
			var res string
			if res, err = c.deps.Replay(ctx, q); err != nil {
				c.showQuarantine(w, r, http.StatusUnprocessableEntity, err.Error(), "")
				return
			}
			msg := "replayed: " + res
			if note != "" {
				msg = note + " (" + msg + ")"
			}
			_, err = c.deps.Store.UpdateQuarantine(ctx, ledger.QuarantineUpdate{ID: id, To: ledger.QuarantineReplayed, Actor: c.actor(r), Note: msg, Now: now})
		}
	default:
		c.fail(w, r, userOf(r), http.StatusNotFound, "There is no such action.")
		return
	}
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		c.fail(w, r, userOf(r), http.StatusNotFound, fmt.Sprintf("There is no quarantined item %d.", id))
	case errors.Is(err, ledger.ErrConflict):
		c.showQuarantine(w, r, http.StatusConflict, fmt.Sprintf("Item %d was already dismissed or replayed.", id), "")
	case err != nil:
		c.internal(w, r, err)
	default:
		http.Redirect(w, r, "/console/quarantine", http.StatusSeeOther)
	}
}

func (c *Console) jobs(w http.ResponseWriter, r *http.Request) {
	data := map[string]any{"Title": "Discarded jobs", "UTC": time.UTC}
	if c.deps.Jobs != nil {
		jobs, err := c.deps.Jobs.Discarded(r.Context(), 200)
		if err != nil {
			c.internal(w, r, err)
			return
		}
		data["Jobs"], data["Queue"] = jobs, true
	}
	waits, err := c.deps.Store.ListRefundWaits(r.Context(), 200)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	data["Waits"] = waits
	c.render(w, r, http.StatusOK, "jobs", data)
}

func (c *Console) retryJob(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || c.deps.Jobs == nil {
		c.fail(w, r, userOf(r), http.StatusNotFound, "There is no such job.")
		return
	}
	if _, err := c.deps.Jobs.Retry(r.Context(), id); err != nil {
		c.fail(w, r, userOf(r), http.StatusConflict, fmt.Sprintf("Job %d could not be retried: %v", id, err))
		return
	}
	http.Redirect(w, r, "/console/jobs", http.StatusSeeOther)
}
