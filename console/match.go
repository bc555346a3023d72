package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
)

// manualMatch links an unknown_charge's transaction to the intent of the
// form (match) or undoes that link (unmatch), for operators.
func (c *Console) manualMatch(w http.ResponseWriter, r *http.Request, id string, link bool) {
	ctx := r.Context()
	note := strings.TrimSpace(r.PostFormValue("note"))
	if len(note) > 4000 {
		c.showFinding(w, r, http.StatusUnprocessableEntity, "The note is longer than 4000 characters.")
		return
	}
	now := c.deps.Clock().UTC()
	var err error
	if link {
		key := strings.TrimSpace(r.PostFormValue("intent"))
		if key == "" {
			c.showFinding(w, r, http.StatusUnprocessableEntity, "Name the intent the payment belongs to.")
			return
		}
		_, err = ledger.MatchManually(ctx, c.deps.Store, ledger.MatchParams{FindingID: id, IntentKey: key, Actor: c.actor(r), Note: note, Now: now,
			OnResolved: c.deps.OnResolve})
	} else {
		_, err = ledger.UnmatchManually(ctx, c.deps.Store, ledger.UnmatchParams{FindingID: id, Actor: c.actor(r), Note: note, Now: now})
	}
	var fe *ledger.FieldError
	switch {
	case errors.As(err, &fe):
		c.showFinding(w, r, http.StatusUnprocessableEntity, "Refused: "+fe.Err.Error()+".")
	case errors.Is(err, ledger.ErrNotFound):
		c.fail(w, r, userOf(r), http.StatusNotFound, "There is no finding "+id+".")
	case errors.Is(err, ledger.ErrConflict):
		c.showFinding(w, r, http.StatusConflict, "Refused: "+refusal(err)+".")
	case err != nil:
		c.internal(w, r, err)
	default:
		http.Redirect(w, r, "/console/findings/"+url.PathEscape(id), http.StatusSeeOther)
	}
}

// refusal is the reason of a conflict, without the operation's prefix.
func refusal(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "conflict: "); i >= 0 {
		return s[i+len("conflict: "):]
	}
	return s
}
