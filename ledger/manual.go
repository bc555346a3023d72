package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Actions on findings that a manual match takes.
const (
	// ActionMatched: a person linked the finding's provider transaction
	// to an intent (on both findings of the pair).
	ActionMatched Action = "matched"
	// ActionUnmatched: a person undid that link.
	ActionUnmatched Action = "unmatched"
)

// ManualLink is a person's decision that a provider transaction belongs to
// an intent. The matcher treats it like a provider reference the intent
// recorded, first in the linking order, so every later run keeps it.
type ManualLink struct {
	Provider  string
	TxnID     string
	IntentKey string
	// Actor is the person who linked them.
	Actor string
	Note  string
	At    time.Time
}

// ManualLinkStore keeps manual links.
type ManualLinkStore interface {
	// AddManualLink records l; ErrConflict when its transaction already has
	// a manual link.
	AddManualLink(ctx context.Context, l ManualLink) error
	// DeleteManualLink removes the manual link of a transaction and returns
	// it; ErrNotFound when it has none.
	DeleteManualLink(ctx context.Context, provider, txnID string) (ManualLink, error)
	// GetManualLink returns the manual link of a transaction; ErrNotFound
	// when it has none.
	GetManualLink(ctx context.Context, provider, txnID string) (ManualLink, error)
	// ScanManualLinks streams the manual links of f.Provider whose
	// transactions are of f.Account and occurred in [f.From, f.To), by
	// transaction id.
	ScanManualLinks(ctx context.Context, f TxnFilter, fn func(ManualLink) error) error
	// AddFindingEvent appends ev to the history of finding ev.SubjectID
	// without changing the finding; ErrNotFound when there is no such
	// finding.
	AddFindingEvent(ctx context.Context, ev HistoryEvent) error
}

// MatchParams ask to link the provider transaction of an unknown_charge
// finding to an intent.
type MatchParams struct {
	// FindingID is the unknown_charge.
	FindingID string
	IntentKey string
	Actor     Actor
	Note      string
	Now       time.Time
	// OnResolved, when set, runs in the match's transaction for each
	// finding it resolves (the Slack follow-up of a resolution).
	OnResolved func(ctx context.Context, tx Tx, f Finding) error
}

// MatchOutcome is what a manual match or unmatch did: the link, and the
// findings it resolved or reopened (the unknown_charge first, then the
// intent's missing_at_provider when there is one).
type MatchOutcome struct {
	Link     ManualLink
	Findings []Finding
}

// MatchManually links the provider transaction of an unknown_charge to an
// intent, records who did it, and resolves the unknown_charge and the
// intent's missing_at_provider (each with a matched event), in one
// transaction. It is refused (a *FieldError, or ErrConflict) when the
// finding is not an unknown_charge, the intent is of another provider or
// currency, or the transaction is already linked, by a provider reference
// an attempt recorded or by another manual link.
func MatchManually(ctx context.Context, s Transactor, p MatchParams) (MatchOutcome, error) {
	var out MatchOutcome
	if err := p.check(); err != nil {
		return out, err
	}
	err := s.InTx(ctx, func(tx Tx) error {
		var err error
		out, err = MatchInTx(ctx, tx, p)
		return err
	})
	return out, err
}

func (p MatchParams) check() error {
	if err := p.Actor.Validate(); err != nil {
		return err
	}
	if strings.TrimSpace(p.IntentKey) == "" {
		return &FieldError{Field: "intent", Err: errors.New("is empty: name the intent to match")}
	}
	return nil
}

// MatchInTx is MatchManually inside the caller's transaction, for a caller
// that records something else with the match (the claim of a Slack
// interaction); the caller rolls back when it fails.
func MatchInTx(ctx context.Context, tx Tx, p MatchParams) (MatchOutcome, error) {
	var out MatchOutcome
	if err := p.check(); err != nil {
		return out, err
	}
	key := strings.TrimSpace(p.IntentKey)
	f, txn, err := unknownCharge(ctx, tx, p.FindingID, "match")
	if err != nil {
		return out, err
	}
	in, err := tx.GetIntent(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return out, &FieldError{Field: "intent", Err: fmt.Errorf("no intent %q in the books", key)}
	}
	if err != nil {
		return out, err
	}
	switch {
	case in.Kind == IntentRefund:
		return out, &FieldError{Field: "intent", Err: fmt.Errorf("intent %q is a refund: a charge pays only a charge intent", key)}
	case in.Provider != txn.Provider:
		return out, &FieldError{Field: "intent", Err: fmt.Errorf("intent %q is of provider %s, the transaction of %s", key, in.Provider, txn.Provider)}
	case in.Amount.Currency != txn.Amount.Currency:
		return out, &FieldError{Field: "intent", Err: fmt.Errorf("currencies differ: intent %q is in %s, provider txn %s in %s",
			key, in.Amount.Currency, txn.ID, txn.Amount.Currency)}
	}
	for _, ref := range []string{txn.ProviderRef, txn.ID} {
		if ref == "" {
			continue
		}
		a, err := tx.FindAttempt(ctx, txn.Provider, ref)
		if err == nil {
			return out, Wrap("match", f.ID, fmt.Errorf("%w: provider txn %s is already linked to intent %q by the provider reference %q its attempt recorded",
				ErrConflict, txn.ID, a.IntentKey, ref))
		}
		if !errors.Is(err, ErrNotFound) {
			return out, err
		}
	}
	if l, err := tx.GetManualLink(ctx, txn.Provider, txn.ID); err == nil {
		return out, Wrap("match", f.ID, fmt.Errorf("%w: provider txn %s is already matched by hand to intent %q (by %s)",
			ErrConflict, txn.ID, l.IntentKey, l.Actor))
	} else if !errors.Is(err, ErrNotFound) {
		return out, err
	}
	out.Link = ManualLink{Provider: txn.Provider, TxnID: txn.ID, IntentKey: key, Actor: strings.TrimSpace(p.Actor.Name),
		Note: strings.TrimSpace(p.Note), At: p.Now.UTC()}
	if err := tx.AddManualLink(ctx, out.Link); err != nil {
		return out, err
	}
	what := fmt.Sprintf("matched provider txn %s with intent %s", txn.ID, key)
	out.Findings, err = pairEvents(ctx, tx, p.Actor, p.Now, f, key, ActionMatched, FindingResolved, withNote(what, p.Note), p.OnResolved)
	return out, err
}

// UnmatchParams ask to undo the manual link of an unknown_charge's
// provider transaction.
type UnmatchParams struct {
	FindingID string
	Actor     Actor
	Note      string
	Now       time.Time
}

// UnmatchManually deletes the manual link of an unknown_charge's provider
// transaction and reopens the unknown_charge and the intent's
// missing_at_provider (each with an unmatched event), in one transaction.
// The next run judges them again.
func UnmatchManually(ctx context.Context, s Transactor, p UnmatchParams) (MatchOutcome, error) {
	var out MatchOutcome
	if err := p.Actor.Validate(); err != nil {
		return out, err
	}
	err := s.InTx(ctx, func(tx Tx) error {
		var err error
		out, err = UnmatchInTx(ctx, tx, p)
		return err
	})
	return out, err
}

// UnmatchInTx is UnmatchManually inside the caller's transaction; the
// caller rolls back when it fails.
func UnmatchInTx(ctx context.Context, tx Tx, p UnmatchParams) (MatchOutcome, error) {
	var out MatchOutcome
	if err := p.Actor.Validate(); err != nil {
		return out, err
	}
	f, txn, err := unknownCharge(ctx, tx, p.FindingID, "unmatch")
	if err != nil {
		return out, err
	}
	out.Link, err = tx.DeleteManualLink(ctx, txn.Provider, txn.ID)
	if errors.Is(err, ErrNotFound) {
		return out, Wrap("unmatch", f.ID, fmt.Errorf("%w: provider txn %s is not matched by hand", ErrConflict, txn.ID))
	}
	if err != nil {
		return out, err
	}
	what := fmt.Sprintf("unmatched provider txn %s from intent %s", txn.ID, out.Link.IntentKey)
	out.Findings, err = pairEvents(ctx, tx, p.Actor, p.Now, f, out.Link.IntentKey, ActionUnmatched, FindingOpen, withNote(what, p.Note), nil)
	return out, err
}

// unknownCharge reads the unknown_charge finding id and its transaction.
func unknownCharge(ctx context.Context, tx Tx, id, verb string) (Finding, ProviderTxn, error) {
	f, err := tx.GetFinding(ctx, id)
	if err != nil {
		return f, ProviderTxn{}, err
	}
	if f.Kind != KindUnknownCharge || len(f.ProviderTxnIDs) != 1 {
		return f, ProviderTxn{}, &FieldError{Field: "id", Err: fmt.Errorf("finding %s is a %s: only an unknown_charge (a provider charge that links to no intent) can be %sed",
			f.ID, f.Kind, verb)}
	}
	txn, err := tx.GetProviderTxn(ctx, f.Provider, f.ProviderTxnIDs[0])
	if err != nil {
		return f, txn, err
	}
	return f, txn, nil
}

// pairEvents writes action on the unknown_charge f and on the
// missing_at_provider of intent key (when there is one), and moves each to
// status to when its transition allows (a finding there already stays);
// onResolved, when set, runs for each finding it resolves.
func pairEvents(ctx context.Context, tx Tx, who Actor, now time.Time, f Finding, key string, action Action,
	to FindingStatus, note string, onResolved func(context.Context, Tx, Finding) error) ([]Finding, error) {
	t, err := TransitionTo(to)
	if err != nil {
		return nil, err
	}
	pair := []Finding{f}
	miss, err := tx.GetFinding(ctx, FindingID(KindMissingAtProvider, key, nil))
	switch {
	case err == nil:
		pair = append(pair, miss)
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	out := make([]Finding, 0, len(pair))
	for _, g := range pair {
		if err := tx.AddFindingEvent(ctx, HistoryEvent{SubjectKind: SubjectFinding, SubjectID: g.ID, Action: action,
			Actor: strings.TrimSpace(who.Name), Surface: who.Surface, Note: note, At: now.UTC()}); err != nil {
			return nil, err
		}
		if t.Allows(g.Status) && g.Status != to {
			if g, err = tx.UpdateFinding(ctx, FindingUpdate{ID: g.ID, To: to, Note: note, Now: now, Actor: who}); err != nil {
				return nil, err
			}
			if to == FindingResolved && onResolved != nil {
				if err := onResolved(ctx, tx, g); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, g)
	}
	return out, nil
}

func withNote(what, note string) string {
	if note = strings.TrimSpace(note); note != "" {
		return what + ": " + note
	}
	return what
}
