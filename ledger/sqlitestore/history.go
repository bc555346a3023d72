package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// Each state change writes its history event in the same transaction: the
// caller's, or one of its own (SQLite has no data-modifying CTEs).

const historyCols = `id, subject_kind, subject_id, action, actor, surface, run_id, note, at`

// inTx runs fn in the executor's transaction, or in one of its own.
func (e executor) inTx(ctx context.Context, fn func(executor) error) error {
	if e.tx != nil {
		return fn(e)
	}
	return e.atomically(ctx, fn)
}

func (e executor) addHistory(ctx context.Context, evs ...ledger.HistoryEvent) error {
	for _, ev := range evs {
		if _, err := e.exec(ctx, `INSERT INTO history (subject_kind, subject_id, action, actor, surface, run_id, note, at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ev.SubjectKind, ev.SubjectID, string(ev.Action), ev.Actor, string(ev.Surface),
			ev.RunID, ev.Note, ts(ev.At)); err != nil {
			return translate(err)
		}
	}
	return nil
}

func (e executor) history(ctx context.Context, kind, id string) ([]ledger.HistoryEvent, error) {
	rows, err := e.query(ctx, `SELECT `+historyCols+` FROM history WHERE subject_kind = ? AND subject_id = ? ORDER BY id`, kind, id)
	if err != nil {
		return nil, ledger.Wrap(kind+" history", id, translate(err))
	}
	out, err := collect(rows, func(r scanner) (ledger.HistoryEvent, error) {
		var (
			ev ledger.HistoryEvent
			at string
		)
		if err := r.Scan(&ev.ID, &ev.SubjectKind, &ev.SubjectID, &ev.Action, &ev.Actor, &ev.Surface, &ev.RunID, &ev.Note, &at); err != nil {
			return ev, err
		}
		var err error
		ev.At, err = parseTS(at)
		return ev, err
	})
	return out, ledger.Wrap(kind+" history", id, err)
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

func personEvent(kind, id string, action ledger.Action, a ledger.Actor, note string, at time.Time) ledger.HistoryEvent {
	return ledger.HistoryEvent{SubjectKind: kind, SubjectID: id, Action: action, Actor: actorName(a), Surface: a.Surface,
		Note: note, At: at}
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
		set = `acknowledged_at = ?2, acknowledged_by = ?4`
	case ledger.FindingResolved:
		set = `resolved_at = ?2, resolved_by = 'person', resolver = ?4`
	case ledger.FindingOpen:
		set = `resolved_at = NULL, resolved_by = '', resolver = ''`
	}
	// The statuses it may start from, bound as ?6, ?7, ...
	args := []any{u.ID, ts(u.Now), strings.TrimSpace(u.Note), actorName(u.Actor), string(t.To)}
	from := make([]string, len(t.From))
	for i, st := range t.FromText() {
		args = append(args, st)
		from[i] = "?" + strconv.Itoa(len(args))
	}
	note := strings.TrimSpace(u.Note)
	var f ledger.Finding
	err = e.inTx(ctx, func(x executor) error {
		var err error
		f, err = scanFinding(x.queryRow(ctx, `UPDATE findings SET status = ?5, `+set+`, note = CASE WHEN ?3 = '' THEN note ELSE ?3 END
			WHERE id = ?1 AND status IN (`+strings.Join(from, ", ")+`) RETURNING `+findingCols, args...))
		if errors.Is(err, sql.ErrNoRows) {
			cur, gerr := x.GetFinding(ctx, u.ID)
			if gerr != nil {
				return gerr
			}
			f = cur
			return ledger.Wrap("update finding", u.ID, fmt.Errorf("%w: finding is %s", ledger.ErrConflict, cur.Status))
		}
		if err != nil {
			return ledger.Wrap("update finding", u.ID, translate(err))
		}
		return ledger.Wrap("update finding", u.ID, x.addHistory(ctx, personEvent(ledger.SubjectFinding, u.ID, t.Action, u.Actor, note, u.Now)))
	})
	return f, err
}

func (e executor) NoteFinding(ctx context.Context, n ledger.FindingNote) (ledger.Finding, error) {
	note := strings.TrimSpace(n.Note)
	if note == "" {
		return ledger.Finding{}, ledger.Wrap("note finding", n.ID, &ledger.FieldError{Field: "note", Err: errors.New("is empty")})
	}
	var f ledger.Finding
	err := e.inTx(ctx, func(x executor) error {
		var err error
		f, err = scanFinding(x.queryRow(ctx, `UPDATE findings SET note = ?2 WHERE id = ?1 RETURNING `+findingCols, n.ID, note))
		if err != nil {
			return ledger.Wrap("note finding", n.ID, translate(err))
		}
		return ledger.Wrap("note finding", n.ID, x.addHistory(ctx, personEvent(ledger.SubjectFinding, n.ID, ledger.ActionNoted, n.Actor, note, n.Now)))
	})
	return f, err
}

const quarantineCols = `id, source, origin, line, field, reason, raw, received_at, status`

func scanQuarantine(r scanner) (ledger.QuarantineItem, error) {
	var (
		q  ledger.QuarantineItem
		at string
	)
	if err := r.Scan(&q.ID, &q.Source, &q.Origin, &q.Line, &q.Field, &q.Reason, &q.Raw, &at, &q.Status); err != nil {
		return q, err
	}
	var err error
	q.At, err = parseTS(at)
	return q, err
}

func (e executor) GetQuarantine(ctx context.Context, id int64) (ledger.QuarantineItem, error) {
	q, err := scanQuarantine(e.queryRow(ctx, `SELECT `+quarantineCols+` FROM quarantine WHERE id = ?`, id))
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
	var q ledger.QuarantineItem
	err := e.inTx(ctx, func(x executor) error {
		var err error
		q, err = scanQuarantine(x.queryRow(ctx, `UPDATE quarantine SET status = ?2 WHERE id = ?1 AND status = 'kept' RETURNING `+quarantineCols,
			u.ID, string(u.To)))
		if errors.Is(err, sql.ErrNoRows) {
			cur, gerr := x.GetQuarantine(ctx, u.ID)
			if gerr != nil {
				return gerr
			}
			q = cur
			return ledger.Wrap("update quarantine", key, fmt.Errorf("%w: item is %s", ledger.ErrConflict, cur.Status))
		}
		if err != nil {
			return ledger.Wrap("update quarantine", key, translate(err))
		}
		return ledger.Wrap("update quarantine", key, x.addHistory(ctx,
			personEvent(ledger.SubjectQuarantine, key, action, u.Actor, strings.TrimSpace(u.Note), u.Now)))
	})
	return q, err
}

// resolverOf names the run that resolved a finding.
func resolverOf(runID int64) string {
	if runID == 0 {
		return ledger.ActorRun
	}
	return fmt.Sprintf("run %d", runID)
}
