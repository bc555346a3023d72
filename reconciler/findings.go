package reconciler

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
)

// ListFindings returns the findings that match f, in report order.
func (r *Reconciler) ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error) {
	fs, err := r.store.ListFindings(ctx, f)
	if err != nil {
		return nil, err
	}
	return fs, nil
}

// Acknowledge marks an open finding as being looked at, with an optional note.
func (r *Reconciler) Acknowledge(ctx context.Context, id, note string) (ledger.Finding, error) {
	return r.update(ctx, id, ledger.FindingAcknowledged, note)
}

// Resolve closes an open or acknowledged finding by hand. A person's
// resolution needs a note saying what was done; it holds until the finding
// escalates.
func (r *Reconciler) Resolve(ctx context.Context, id, note string) (ledger.Finding, error) {
	if strings.TrimSpace(note) == "" {
		return ledger.Finding{}, &ledger.FieldError{Field: "note", Err: errors.New("is empty: say what was done")}
	}
	return r.update(ctx, id, ledger.FindingResolved, note)
}

func (r *Reconciler) update(ctx context.Context, id string, to ledger.FindingStatus, note string) (ledger.Finding, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return ledger.Finding{}, &ledger.FieldError{Field: "id", Err: errors.New("is empty")}
	}
	f, err := r.store.UpdateFinding(ctx, ledger.FindingUpdate{ID: id, To: to, Note: strings.TrimSpace(note), Now: r.cfg.Clock().UTC()})
	if err != nil {
		return ledger.Finding{}, fmt.Errorf("findings %s: %w", verb(to), err)
	}
	return f, nil
}

func verb(s ledger.FindingStatus) string {
	if s == ledger.FindingAcknowledged {
		return "ack"
	}
	return "resolve"
}
