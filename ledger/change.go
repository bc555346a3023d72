package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/money"
)

// IntentChangeAction is what a correction did to an intent.
type IntentChangeAction string

// Corrections of intents.
const (
	// IntentAmended: its amount was corrected (an import in cents instead
	// of shillings).
	IntentAmended IntentChangeAction = "amended"
	// IntentVoided: it should never have been recorded; it is failed, and
	// runs call it neither missing nor stuck.
	IntentVoided IntentChangeAction = "voided"
)

// IntentChange is one correction of an intent by a person: its amount
// before and after, its state before and after, who, through which
// surface, when and why. Changes are kept, never updated.
type IntentChange struct {
	ID        int64
	IntentKey string
	Action    IntentChangeAction
	OldAmount money.Amount
	NewAmount money.Amount
	OldState  State
	NewState  State
	Actor     string
	Surface   Surface
	Note      string
	At        time.Time
}

// IntentChangeStore keeps the corrections of intents.
type IntentChangeStore interface {
	// ChangeIntent applies c to its intent compare-and-set: the intent must
	// still have c.OldAmount and c.OldState (ErrConflict otherwise); its
	// amount becomes c.NewAmount and its state c.NewState, and c is
	// recorded. It returns the intent as changed and c as stored.
	ChangeIntent(ctx context.Context, c IntentChange) (Intent, IntentChange, error)
	// IntentChanges returns the corrections of an intent, oldest first.
	IntentChanges(ctx context.Context, key string) ([]IntentChange, error)
	// VoidedIntents returns which of keys were voided, sorted.
	VoidedIntents(ctx context.Context, keys []string) ([]string, error)
}

// ChangeParams ask to amend or void an intent.
type ChangeParams struct {
	Key    string
	Action IntentChangeAction
	// Amount is the corrected amount of an amendment, in the intent's
	// currency.
	Amount money.Amount
	Actor  Actor
	Note   string
	Now    time.Time
}

// ErrNotCorrectable refuses the correction of an intent that money or a
// person's decision already depends on; it comes wrapped in a *FieldError
// on "intent" saying why.
var ErrNotCorrectable = errors.New("cannot be corrected")

// ChangeIntent amends or voids an imported intent in a transaction of its
// own (ChangeIntentInTx). amount, when not empty, is the amendment's amount
// as a person typed it, in major units: it is read in the intent's
// currency, and a bad one is a *FieldError on "amount".
func ChangeIntent(ctx context.Context, s Transactor, p ChangeParams, amount string) (Intent, IntentChange, error) {
	var (
		in Intent
		c  IntentChange
	)
	err := s.InTx(ctx, func(tx Tx) error {
		if amount != "" {
			cur, err := tx.GetIntent(ctx, p.Key)
			if err != nil {
				return err
			}
			if p.Amount, err = money.Parse(amount, cur.Amount.Currency); err != nil {
				return &FieldError{Field: "amount", Err: err}
			}
		}
		var err error
		in, c, err = ChangeIntentInTx(ctx, tx, p)
		return err
	})
	return in, c, err
}

// ChangeIntentInTx amends or voids an imported intent in the caller's
// transaction. Only an intent that nothing depends on yet is corrected: a
// charge or an expected payment (not a refund), never sent to its provider
// by reconcile (its only attempts are imported ones), not matched by hand
// to a transaction, and with no refund of it. Refusals are *FieldErrors.
func ChangeIntentInTx(ctx context.Context, tx Tx, p ChangeParams) (Intent, IntentChange, error) {
	if err := p.Actor.Validate(); err != nil {
		return Intent{}, IntentChange{}, err
	}
	p.Note = strings.TrimSpace(p.Note)
	if p.Note == "" {
		return Intent{}, IntentChange{}, &FieldError{Field: "note", Err: errors.New("is required: say what was wrong")}
	}
	in, err := tx.GetIntent(ctx, p.Key)
	if err != nil {
		return Intent{}, IntentChange{}, err
	}
	refuse := func(format string, args ...any) (Intent, IntentChange, error) {
		return in, IntentChange{}, Wrap("correct intent", p.Key, &FieldError{Field: "intent",
			Err: fmt.Errorf("%w: %s", ErrNotCorrectable, fmt.Sprintf(format, args...))})
	}
	if in.IsRefund() {
		return refuse("it is a refund of %s", in.RefundOf)
	}
	attempts, err := tx.ListAttempts(ctx, p.Key)
	if err != nil {
		return Intent{}, IntentChange{}, err
	}
	for _, a := range attempts {
		if a.Outcome != OutcomeImported {
			return refuse("reconcile sent it to %s (attempt %d is %s)", in.Provider, a.Number, a.Outcome)
		}
	}
	if in.State == StateProcessing {
		return refuse("a worker holds it")
	}
	links, err := tx.FindManualLinks(ctx, in.Provider, nil, []string{p.Key})
	if err != nil {
		return Intent{}, IntentChange{}, err
	}
	if len(links) > 0 {
		return refuse("a person matched transaction %s to it by hand", links[0].TxnID)
	}
	refunds, err := tx.FindIntents(ctx, IntentLookup{Provider: in.Provider, From: time.Unix(0, 0).UTC(),
		To: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), RefundOf: []string{p.Key}})
	if err != nil {
		return Intent{}, IntentChange{}, err
	}
	for _, r := range refunds {
		if r.RefundOf == p.Key {
			return refuse("refund %s gives money back for it", r.Key)
		}
	}
	c := IntentChange{IntentKey: p.Key, Action: p.Action, OldAmount: in.Amount, NewAmount: in.Amount, OldState: in.State,
		NewState: in.State, Actor: p.Actor.Name, Surface: p.Actor.Surface, Note: p.Note, At: p.Now.UTC()}
	switch p.Action {
	case IntentAmended:
		a := p.Amount
		switch {
		case a.Currency != in.Amount.Currency:
			return in, IntentChange{}, &FieldError{Field: "amount", Err: fmt.Errorf("%s is not in the intent's currency %s", a, in.Amount.Currency)}
		case !a.Value.IsPositive():
			return in, IntentChange{}, &FieldError{Field: "amount", Err: fmt.Errorf("%s is not positive", a.Text())}
		case a.Value.Equal(in.Amount.Value):
			return in, IntentChange{}, &FieldError{Field: "amount", Err: fmt.Errorf("the intent is %s already", ShowAmount(a))}
		case !in.Tolerance.IsZero() && !in.Tolerance.Value.LessThan(a.Value):
			return in, IntentChange{}, &FieldError{Field: "amount", Err: fmt.Errorf("%s is not more than its tolerance %s", a.Text(), in.Tolerance.Text())}
		}
		if err := CheckAmount(a); err != nil {
			return in, IntentChange{}, &FieldError{Field: "amount", Err: err}
		}
		c.NewAmount = a
	case IntentVoided:
		if in.State == StateFailed {
			return refuse("it is failed already")
		}
		c.NewState = StateFailed
	default:
		return in, IntentChange{}, &FieldError{Field: "action", Err: fmt.Errorf("%q: want amended or voided", p.Action)}
	}
	return tx.ChangeIntent(ctx, c)
}
