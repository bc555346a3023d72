package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
)

// The remedies of the findings API: refund, writeoff, retry and cancel a
// finding, and approve or reject a request awaiting a second person. Each
// goes through the findings service, as every other surface's does.

type remedyRequest struct {
	Note   string `json:"note"`
	Amount string `json:"amount"`
	TxnID  string `json:"txn_id"`
}

// remedy serves POST /v1/findings/{id}/refund, writeoff, retry and cancel:
// {"note": ..., "amount": ..., "txn_id": ...} (amount for refund and
// writeoff, txn_id for refund only).
func (api *API) remedy(verb findings.Verb) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req remedyRequest
		if perr := decodeActionBody(r, &req, "a note"); perr != nil {
			api.fail(w, perr)
			return
		}
		api.decideRemedy(w, r, findings.Decision{Verb: verb, Note: req.Note, Amount: req.Amount, TxnID: req.TxnID})
	}
}

// request serves POST /v1/findings/{id}/requests/{request}/approve and
// reject: {"note": ...}.
func (api *API) request(verb findings.Verb) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(r.PathValue("request"), 10, 64)
		if err != nil || n <= 0 {
			api.fail(w, badField("request", "%q: want a request number", r.PathValue("request")))
			return
		}
		var req actionRequest
		if perr := decodeActionBody(r, &req, "a note"); perr != nil {
			api.fail(w, perr)
			return
		}
		api.decideRemedy(w, r, findings.Decision{Verb: verb, Note: req.Note, Remedy: n})
	}
}

// decideRemedy applies d for the request's actor and answers the finding's
// detail: 200 when done, 202 when it awaits a second person. A request
// its asker tries to approve is 403; one not awaiting approval, expired,
// or a second refund of one payment, 409.
func (api *API) decideRemedy(w http.ResponseWriter, r *http.Request, d findings.Decision) {
	who, err := actorOf(r)
	if err != nil {
		api.fail(w, err)
		return
	}
	d.FindingID, d.Actor = r.PathValue("id"), who
	out, err := api.cfg.Findings.Decide(r.Context(), d)
	var fe *ledger.FieldError
	switch {
	case errors.Is(err, findings.ErrOwnRequest):
		err = &Error{Status: http.StatusForbidden, Message: err.Error(), Fields: []FieldProblem{{Field: ActorHeader, Message: findings.ErrOwnRequest.Error()}}}
	case errors.As(err, &fe) && fe.Field == "txn":
		err = badField("txn_id", "%v", fe.Err)
	case errors.As(err, &fe) && fe.Field == "intent":
		err = badField("finding", "%v", fe.Err)
	case errors.As(err, &fe) && fe.Field == "state":
		err = &Error{Status: http.StatusConflict, Message: ledger.SafeText(fe.Err.Error(), 256)}
	case errors.Is(err, findings.ErrRequestExpired):
		err = &Error{Status: http.StatusConflict, Message: err.Error(), Current: string(ledger.RemedyExpired)}
	case errors.Is(err, findings.ErrNotWaiting) && out.Remedy != nil:
		err = &Error{Status: http.StatusConflict, Message: fmt.Sprintf("request %d is %s", out.Remedy.ID, out.Remedy.Status),
			Current: string(out.Remedy.Status)}
	case errors.Is(err, ledger.ErrConflict) && out.Finding.Status == ledger.FindingResolved:
		err = &Error{Status: http.StatusConflict, Message: fmt.Sprintf("cannot %s a finding that is resolved", d.Verb), Current: string(out.Finding.Status)}
	case errors.Is(err, ledger.ErrConflict):
		err = &Error{Status: http.StatusConflict, Message: err.Error()}
	}
	if err != nil {
		api.fail(w, err)
		return
	}
	det, err := findings.Load(r.Context(), api.cfg.Store, d.FindingID)
	if err != nil {
		api.fail(w, err)
		return
	}
	status := http.StatusOK
	if out.Waiting() {
		status = http.StatusAccepted
	}
	writeJSON(w, status, det.View())
}
