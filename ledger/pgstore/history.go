package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
)

// Each state change writes its history event in the same statement, through
// a data-modifying CTE: the change and its event commit together whether or
// not the caller opened a transaction.

const historyCols = `id, subject_kind, subject_id, action, actor, surface, run_id, note, at`

const insertHistorySQL = `INSERT INTO history (subject_kind, subject_id, action, actor, surface, run_id, note, at) `

func scanHistoryEvent(row pgx.Row) (ledger.HistoryEvent, error) {
	var ev ledger.HistoryEvent
	err := row.Scan(&ev.ID, &ev.SubjectKind, &ev.SubjectID, &ev.Action, &ev.Actor, &ev.Surface, &ev.RunID, &ev.Note, &ev.At)
	ev.At = ev.At.UTC()
	return ev, err
}

func (e executor) history(ctx context.Context, kind, id string) ([]ledger.HistoryEvent, error) {
	rows, err := e.db.Query(ctx, `SELECT `+historyCols+` FROM history WHERE subject_kind = $1 AND subject_id = $2 ORDER BY id`, kind, id)
	if err != nil {
		return nil, ledger.Wrap(kind+" history", id, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.HistoryEvent, error) { return scanHistoryEvent(r) })
	return out, ledger.Wrap(kind+" history", id, translate(err))
}

func (e executor) FindingHistory(ctx context.Context, id string) ([]ledger.HistoryEvent, error) {
	if _, err := e.GetFinding(ctx, id); err != nil {
		return nil, err
	}
	return e.history(ctx, ledger.SubjectFinding, id)
}

func (e executor) QuarantineHistory(ctx context.Context, id int64) ([]ledger.HistoryEvent, error) {
	if _, err := e.GetQuarantine(ctx, id); err != nil {
		return nil, err
	}
	return e.history(ctx, ledger.SubjectQuarantine, strconv.FormatInt(id, 10))
}

func actorName(a ledger.Actor) string {
	if n := strings.TrimSpace(a.Name); n != "" {
		return n
	}
	return "unknown"
}

// UpdateFinding moves a finding to u.To by the person's transition
// (ledger.TransitionTo), compare-and-set on the statuses it may start from,
// with its history event. An empty note keeps the latest note.
func (e executor) UpdateFinding(ctx context.Context, u ledger.FindingUpdate) (ledger.Finding, error) {
	t, err := ledger.TransitionTo(u.To)
	if err != nil {
		return ledger.Finding{}, ledger.Wrap("update finding", u.ID, err)
	}
	// What the move writes besides the status: who acknowledged or
	// resolved it, or the resolution undone.
	var set string
	switch u.To {
	case ledger.FindingAcknowledged:
		set = `acknowledged_at = $2, acknowledged_by = $4`
	case ledger.FindingResolved:
		set = `resolved_at = $2, resolved_by = 'person', resolver = $4`
	case ledger.FindingOpen:
		set = `resolved_at = NULL, resolved_by = '', resolver = ''`
	}
	q := `WITH u AS (
			UPDATE findings SET status = $7, ` + set + `, note = CASE WHEN $3 = '' THEN note ELSE $3 END
			WHERE id = $1 AND status = ANY($8::text[]) RETURNING ` + findingCols + `),
		h AS (` + insertHistorySQL + `SELECT 'finding', id, $6, $4, $5, 0, $3, $2 FROM u)
		SELECT ` + findingCols + ` FROM u`
	f, err := scanFinding(e.db.QueryRow(ctx, q, u.ID, utc(u.Now), strings.TrimSpace(u.Note), actorName(u.Actor),
		string(u.Actor.Surface), string(t.Action), string(t.To), t.FromText()))
	if errors.Is(err, pgx.ErrNoRows) {
		cur, gerr := e.GetFinding(ctx, u.ID)
		if gerr != nil {
			return ledger.Finding{}, gerr
		}
		return cur, ledger.Wrap("update finding", u.ID, fmt.Errorf("%w: finding is %s", ledger.ErrConflict, cur.Status))
	}
	return f, ledger.Wrap("update finding", u.ID, translate(err))
}

func (e executor) NoteFinding(ctx context.Context, n ledger.FindingNote) (ledger.Finding, error) {
	note := strings.TrimSpace(n.Note)
	if note == "" {
		return ledger.Finding{}, ledger.Wrap("note finding", n.ID, &ledger.FieldError{Field: "note", Err: errors.New("is empty")})
	}
	f, err := scanFinding(e.db.QueryRow(ctx, `
		WITH u AS (UPDATE findings SET note = $2 WHERE id = $1 RETURNING `+findingCols+`),
		h AS (`+insertHistorySQL+`SELECT 'finding', id, 'noted', $3, $4, 0, $2, $5 FROM u)
		SELECT `+findingCols+` FROM u`, n.ID, note, actorName(n.Actor), string(n.Actor.Surface), utc(n.Now)))
	return f, ledger.Wrap("note finding", n.ID, translate(err))
}

const quarantineCols = `id, source, origin, line, field, reason, raw, received_at, status`

func scanQuarantine(r pgx.Row) (ledger.QuarantineItem, error) {
	var q ledger.QuarantineItem
	err := r.Scan(&q.ID, &q.Source, &q.Origin, &q.Line, &q.Field, &q.Reason, &q.Raw, &q.At, &q.Status)
	q.At = q.At.UTC()
	return q, err
}

func (e executor) GetQuarantine(ctx context.Context, id int64) (ledger.QuarantineItem, error) {
	q, err := scanQuarantine(e.db.QueryRow(ctx, `SELECT `+quarantineCols+` FROM quarantine WHERE id = $1`, id))
	return q, ledger.Wrap("get quarantine", strconv.FormatInt(id, 10), translate(err))
}

func (e executor) UpdateQuarantine(ctx context.Context, u ledger.QuarantineUpdate) (ledger.QuarantineItem, error) {
	key := strconv.FormatInt(u.ID, 10)
	var action ledger.Action
	switch u.To {
	case ledger.QuarantineDismissed:
		action = ledger.ActionDismissed
	case ledger.QuarantineReplayed:
		action = ledger.ActionReplayed
	default:
		return ledger.QuarantineItem{}, ledger.Wrap("update quarantine", key, fmt.Errorf("cannot move a quarantined item to %q", u.To))
	}
	q, err := scanQuarantine(e.db.QueryRow(ctx, `
		WITH u AS (UPDATE quarantine SET status = $2 WHERE id = $1 AND status = 'kept' RETURNING `+quarantineCols+`),
		h AS (`+insertHistorySQL+`SELECT 'quarantine', id::text, $3, $4, $5, 0, $6, $7 FROM u)
		SELECT `+quarantineCols+` FROM u`, u.ID, string(u.To), string(action), actorName(u.Actor), string(u.Actor.Surface),
		strings.TrimSpace(u.Note), utc(u.Now)))
	if errors.Is(err, pgx.ErrNoRows) {
		cur, gerr := e.GetQuarantine(ctx, u.ID)
		if gerr != nil {
			return ledger.QuarantineItem{}, gerr
		}
		return cur, ledger.Wrap("update quarantine", key, fmt.Errorf("%w: item is %s", ledger.ErrConflict, cur.Status))
	}
	return q, ledger.Wrap("update quarantine", key, translate(err))
}

// runEvents are the arrays of the history events a run's upsert implies.
type runEvents struct {
	id, action, note []string
}

func (r *runEvents) add(evs []ledger.HistoryEvent) {
	for _, ev := range evs {
		r.id, r.action, r.note = append(r.id, ev.SubjectID), append(r.action, string(ev.Action)), append(r.note, ev.Note)
	}
}

// resolverOf names the run that resolved a finding.
func resolverOf(runID int64) string {
	if runID == 0 {
		return ledger.ActorRun
	}
	return fmt.Sprintf("run %d", runID)
}
