package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
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
	ctx := r.Context()
	id := r.PathValue("id")
	who, err := actorOf(r)
	if err != nil {
		api.fail(w, err)
		return
	}
	var req matchRequest
	if perr := decodeActionBody(r, &req, "intent_key and note"); perr != nil {
		api.fail(w, perr)
		return
	}
	note := strings.TrimSpace(req.Note)
	switch {
	case len(note) > maxNote:
		api.fail(w, badField("note", "longer than %d bytes", maxNote))
		return
	case link && strings.TrimSpace(req.IntentKey) == "":
		api.fail(w, badField("intent_key", "is required: name the intent the transaction pays"))
		return
	case !link && req.IntentKey != "":
		api.fail(w, badField("intent_key", "is not taken by unmatch"))
		return
	}
	now := api.cfg.Clock().UTC()
	if link {
		_, err = ledger.MatchManually(ctx, api.cfg.Store, ledger.MatchParams{FindingID: id, IntentKey: req.IntentKey, Actor: who, Note: note, Now: now,
			OnResolved: api.cfg.OnResolve})
	} else {
		_, err = ledger.UnmatchManually(ctx, api.cfg.Store, ledger.UnmatchParams{FindingID: id, Actor: who, Note: note, Now: now})
	}
	var fe *ledger.FieldError
	switch {
	case errors.As(err, &fe) && fe.Field == "intent":
		api.fail(w, badField("intent_key", "%v", fe.Err))
		return
	case errors.Is(err, ledger.ErrConflict):
		api.fail(w, &apiError{Status: http.StatusConflict, Message: err.Error()})
		return
	case err != nil:
		api.fail(w, err)
		return
	}
	api.writeDetail(w, r, id)
}
