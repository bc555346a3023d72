package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Action is what happened to a finding or a quarantined item.
type Action string

// Actions on findings.
const (
	ActionOpened       Action = "opened"
	ActionEscalated    Action = "escalated"
	ActionAcknowledged Action = "acknowledged"
	ActionNoted        Action = "noted"
	ActionResolved     Action = "resolved"
	ActionReopened     Action = "reopened"
	// ActionAutoResolved is a run no longer seeing a finding.
	ActionAutoResolved Action = "auto_resolved"
)

// Actions on quarantined items.
const (
	ActionDismissed Action = "dismissed"
	ActionReplayed  Action = "replayed"
)

// Surface names where a decision was taken.
type Surface string

// Surfaces.
const (
	SurfaceCLI   Surface = "cli"
	SurfaceWeb   Surface = "web"
	SurfaceSlack Surface = "slack"
	SurfaceRun   Surface = "run"
	SurfaceAPI   Surface = "api"
)

// ParseSurface validates s as a Surface.
func ParseSurface(s string) (Surface, bool) {
	switch v := Surface(s); v {
	case SurfaceCLI, SurfaceWeb, SurfaceSlack, SurfaceRun, SurfaceAPI:
		return v, true
	}
	return "", false
}

// Subject kinds of a history event.
const (
	SubjectFinding    = "finding"
	SubjectQuarantine = "quarantine"
)

// ActorRun is the actor of what a reconcile run did; the event's RunID names
// the run.
const ActorRun = "run"

// HistoryEvent is one entry of the append-only history of a finding or a
// quarantined item. Events are never updated or deleted.
type HistoryEvent struct {
	ID int64
	// SubjectKind is SubjectFinding or SubjectQuarantine; SubjectID the
	// finding id or the quarantine item's id in decimal.
	SubjectKind string
	SubjectID   string
	Action      Action
	// Actor is the person (a user name, an e-mail address, a Slack user) or
	// ActorRun.
	Actor   string
	Surface Surface
	// RunID is the run that acted, or that saw the finding; 0 for people.
	RunID int64
	Note  string
	At    time.Time
}

// Who renders the actor: "run 12" for a run, the name otherwise.
func (e HistoryEvent) Who() string {
	if e.Actor == ActorRun && e.RunID != 0 {
		return fmt.Sprintf("run %d", e.RunID)
	}
	return e.Actor
}

// HistoryStore keeps the history of decisions. Every state change of a
// finding or a quarantined item writes its event in the same transaction.
type HistoryStore interface {
	// FindingHistory returns the events of a finding, oldest first.
	FindingHistory(ctx context.Context, id string) ([]HistoryEvent, error)
	// NoteFinding appends a note to a finding's history without changing its
	// status; ErrNotFound when there is no such finding.
	NoteFinding(ctx context.Context, n FindingNote) (Finding, error)
	// GetQuarantine returns one quarantined item.
	GetQuarantine(ctx context.Context, id int64) (QuarantineItem, error)
	// UpdateQuarantine dismisses or marks replayed an item that is still
	// kept, compare-and-set (ErrConflict otherwise), with its event.
	UpdateQuarantine(ctx context.Context, u QuarantineUpdate) (QuarantineItem, error)
	// QuarantineHistory returns the events of a quarantined item, oldest first.
	QuarantineHistory(ctx context.Context, id int64) ([]HistoryEvent, error)
}

// Actor is who acts and through which surface.
type Actor struct {
	Name    string
	Surface Surface
}

// Validate checks that a person's actor names someone through a known
// surface. Runs act through their own paths, not through this.
func (a Actor) Validate() error {
	name := strings.TrimSpace(a.Name)
	switch {
	case name == "":
		return &FieldError{Field: "actor", Err: errors.New("is empty: say who acts")}
	case len(name) > 200:
		return &FieldError{Field: "actor", Err: errors.New("longer than 200 characters")}
	case strings.ContainsAny(name, "\r\n\t"):
		return &FieldError{Field: "actor", Err: errors.New("contains control characters")}
	case name == ActorRun:
		return &FieldError{Field: "actor", Err: errors.New(`"run" is reserved for reconcile runs`)}
	}
	if _, ok := ParseSurface(string(a.Surface)); !ok || a.Surface == SurfaceRun {
		return &FieldError{Field: "surface", Err: fmt.Errorf("%q: want cli, web, slack or api", a.Surface)}
	}
	return nil
}

// FindingNote is a note a person adds to a finding.
type FindingNote struct {
	ID    string
	Actor Actor
	Note  string
	Now   time.Time
}

// QuarantineStatus is where a quarantined item is in its lifecycle.
type QuarantineStatus string

// Quarantine statuses: kept until someone dismisses it or replays it.
const (
	QuarantineKept      QuarantineStatus = "kept"
	QuarantineDismissed QuarantineStatus = "dismissed"
	QuarantineReplayed  QuarantineStatus = "replayed"
)

// QuarantineUpdate dismisses a kept item or records its replay.
type QuarantineUpdate struct {
	ID    int64
	To    QuarantineStatus
	Actor Actor
	Note  string
	Now   time.Time
}

// FindingEvents are the history events a run's upsert of findings implies:
// opened for a new finding, reopened for one seen again after it was
// resolved, escalated for one whose severity or amount at risk grew. Seen
// again unchanged writes nothing.
func FindingEvents(changes []FindingChange, runID int64, now time.Time) []HistoryEvent {
	var out []HistoryEvent
	ev := func(id string, a Action, note string) {
		out = append(out, HistoryEvent{SubjectKind: SubjectFinding, SubjectID: id, Action: a, Actor: ActorRun,
			Surface: SurfaceRun, RunID: runID, Note: note, At: now})
	}
	for _, c := range changes {
		id := c.Finding.ID
		switch {
		case c.New:
			ev(id, ActionOpened, "")
			continue
		case c.Reopened:
			ev(id, ActionReopened, "seen again")
		}
		if c.Escalated {
			ev(id, ActionEscalated, EscalationNote(c.Previous, c.Finding))
		}
	}
	return out
}

// EscalationNote says how a finding got worse.
func EscalationNote(prev, cur Finding) string {
	var parts []string
	if cur.Severity.Rank() > prev.Severity.Rank() {
		parts = append(parts, fmt.Sprintf("severity %s (was %s)", cur.Severity, prev.Severity))
	}
	if !cur.AtRisk.IsZero() && cur.AtRisk.Currency == prev.AtRisk.Currency && cur.AtRisk.Value.GreaterThan(prev.AtRisk.Value) {
		parts = append(parts, fmt.Sprintf("at risk %s %s (was %s)", cur.AtRisk.Currency, cur.AtRisk.Text(), prev.AtRisk.Text()))
	}
	return strings.Join(parts, "; ")
}
