package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/reconcilehq/reconcile/internal/jsonbody"
	"github.com/reconcilehq/reconcile/ledger"
)

// Error is the body of every error answer of the API, intents, refunds
// and findings alike (docs/openapi.yaml, Error):
//
//	{"error": "invalid request", "fields": [{"field": "amount", "message": "..."}], "status": "resolved"}
//
// error says what went wrong; fields, when the request is at fault, names
// each field, header or parameter at fault with its own message; status,
// when a decision conflicts with a finding's status, is that status.
type Error struct {
	// Status is the HTTP status of the answer.
	Status  int            `json:"-"`
	Message string         `json:"error"`
	Fields  []FieldProblem `json:"fields,omitempty"`
	// Current is the finding's status when a decision conflicts with it.
	Current string `json:"status,omitempty"`
}

// Error implements error.
func (e *Error) Error() string { return e.Message }

// FieldProblem is one field at fault and what is wrong with it.
type FieldProblem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// fieldProblem is FieldProblem, as the request decoders name it.
type fieldProblem = FieldProblem

// invalid is the answer to a request whose fields are at fault: 422.
func invalid(problems []FieldProblem) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Message: "invalid request", Fields: problems}
}

// badField is the answer to a request with one field at fault: 422, the
// problem said in full.
func badField(field, format string, args ...any) *Error {
	msg := ledger.SafeText(fmt.Sprintf(format, args...), 256)
	return &Error{Status: http.StatusUnprocessableEntity, Message: msg, Fields: []FieldProblem{{Field: field, Message: msg}}}
}

// duplicateKey is the answer to a body that names a key twice: 400, with
// the key's path as the field at fault.
func duplicateKey(dup *jsonbody.DuplicateKeyError) *Error {
	return &Error{Status: http.StatusBadRequest, Message: "invalid request", Fields: []FieldProblem{{Field: dup.Path, Message: dup.Error()}}}
}

// writeError answers e.
func writeError(w http.ResponseWriter, e *Error) { writeJSON(w, e.Status, e) }

// fail answers err: the one place where errors become statuses and bodies.
// An *Error is answered as it is; a field at fault is 422, a key reused for
// another request 409, no such finding 404, and anything else 500, logged
// and not shown.
func (api *API) fail(w http.ResponseWriter, err error) {
	var (
		e  *Error
		fe *ledger.FieldError
		kr *ledger.KeyReuseError
	)
	switch {
	case errors.As(err, &e):
		writeError(w, e)
	case errors.As(err, &kr):
		writeError(w, &Error{Status: http.StatusConflict, Message: kr.Error()})
	case errors.As(err, &fe):
		writeError(w, badField(ledger.SafeText(fe.Field, 64), "%v", fe.Err))
	case errors.Is(err, ledger.ErrNotFound):
		writeError(w, &Error{Status: http.StatusNotFound, Message: "no such finding"})
	default:
		api.cfg.Logger.Error("api", "error", err)
		writeError(w, &Error{Status: http.StatusInternalServerError, Message: "internal error"})
	}
}
