package api

import (
	"net/http"

	"github.com/reconcilehq/reconcile/findings"
)

type matchRequest struct {
	IntentKey string `json:"intent_key"`
	Note      string `json:"note"`
}

// match serves POST /v1/findings/{id}/match: {"intent_key": ..., "note": ...}.
func (api *API) match(w http.ResponseWriter, r *http.Request) { api.matchOrUnmatch(w, r, true) }

// unmatch serves POST /v1/findings/{id}/unmatch: {"note": ...}.
func (api *API) unmatch(w http.ResponseWriter, r *http.Request) {
	api.matchOrUnmatch(w, r, false)
}

func (api *API) matchOrUnmatch(w http.ResponseWriter, r *http.Request, link bool) {
	var req matchRequest
	if perr := decodeActionBody(r, &req, "intent_key and note"); perr != nil {
		api.fail(w, perr)
		return
	}
	d := findings.Decision{Verb: findings.Unmatch, Note: req.Note, IntentKey: req.IntentKey}
	if link {
		d.Verb = findings.Match
	}
	api.decide(w, r, d)
}
