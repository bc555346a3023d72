package intake

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// Replay submits a quarantined item's raw input again through the path it
// came from, after what refused it was fixed, and says what it added. Only
// callback bodies stand alone: each is checked first with its provider's
// parser (parsers, by provider), so a body still refused is neither stored
// nor quarantined again, then delivered in a scope of its own. Rows of
// intents and statement files, conflicting sightings and pulled records get
// an error saying what to do instead. A body kept under an account's scope
// (AccountKind) is replayed with that account's kind.
func (p *Processor) Replay(ctx context.Context, q ledger.QuarantineItem, parsers map[string]providers.CallbackParser) (string, error) {
	scope, isCallback := strings.CutSuffix(q.Source, "_callback")
	provider, account, _ := strings.Cut(scope, "@")
	switch {
	case q.Source == "intents_csv":
		return "", fmt.Errorf("quarantine replay %d: a row of an intents file cannot be replayed alone (it is read with the file's header): "+
			"fix line %d of %s and run `reconcile import intents` on it again, then dismiss this item", q.ID, q.Line, q.Origin)
	case strings.HasSuffix(q.Source, "_statement"):
		return "", fmt.Errorf("quarantine replay %d: a statement row cannot be replayed alone (it is read with the file's header and zone): "+
			"fix line %d of %s and run `reconcile import statement` on it again, then dismiss this item", q.ID, q.Line, q.Origin)
	case strings.HasSuffix(q.Source, "_conflict"):
		return "", fmt.Errorf("quarantine replay %d: a sighting that conflicts with the stored transaction is evidence, not input to retry: "+
			"look into it and dismiss this item with a note", q.ID)
	case !isCallback:
		return "", fmt.Errorf("quarantine replay %d: input from %s has no replay path: pull the window again with `reconcile run`, then dismiss this item", q.ID, q.Source)
	case len(q.Raw) == 0:
		return "", fmt.Errorf("quarantine replay %d: no raw input was kept", q.ID)
	}
	parser, ok := parsers[provider]
	if !ok || parser == nil {
		return "", fmt.Errorf("quarantine replay %d: provider %s is not configured with callbacks", q.ID, provider)
	}
	// Checked first, as a callbacks import checks every line: a body still
	// refused is neither stored nor quarantined again.
	ref := fmt.Sprintf("quarantine:%d", q.ID)
	kind := ""
	if account != "" {
		kind = AccountKind(account)
	}
	cb := ledger.Callback{Provider: provider, Kind: kind, Body: q.Raw, ReceivedAt: p.now()}
	if _, ok := parser.(KindParser); kind != "" && !ok {
		return "", fmt.Errorf("quarantine replay %d: provider %s cannot place a body in account %s", q.ID, provider, account)
	}
	ev, err := parseRef(parser, cb, ref)
	if err == nil {
		for _, s := range ev.Sightings {
			if err = ledger.ValidateTxn(s.Txn); err != nil {
				break
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("quarantine replay %d: still refused: %w", q.ID, err)
	}
	// A scope of its own: the body was stored once already, refused.
	res, err := p.Deliver(ctx, Delivery{Provider: provider, Parser: parser, Body: q.Raw, Kind: kind,
		RemoteAddr: ref, Scope: ref, Origin: q.Origin, Line: q.Line})
	if err != nil {
		return "", fmt.Errorf("quarantine replay %d: %w", q.ID, err)
	}
	if res.Rejected != nil {
		return "", fmt.Errorf("quarantine replay %d: still refused: %w", q.ID, res.Rejected)
	}
	if res.Duplicate {
		return "already replayed before", nil
	}
	return fmt.Sprintf("%s, %d new transaction(s), %d new source(s)", cmp.Or(res.Kind, "-"), res.NewTxns, res.NewSources), nil
}

// QuarantineBooks is what ReplayKept needs of the books beside the
// Processor's Store; a ledger.Store has it.
type QuarantineBooks interface {
	GetQuarantine(ctx context.Context, id int64) (ledger.QuarantineItem, error)
	UpdateQuarantine(ctx context.Context, u ledger.QuarantineUpdate) (ledger.QuarantineItem, error)
}

// KeptReplay asks ReplayKept to replay a quarantined item.
type KeptReplay struct {
	ID    int64
	Actor ledger.Actor
	// Note says what was fixed; it may be empty.
	Note string
	// Parsers are the configured providers' callback parsers, by provider.
	Parsers map[string]providers.CallbackParser
}

// ReplayKept replays a quarantined item that is still kept (Replay) and
// records it replayed, by r.Actor, with r.Note and what the replay added
// in the note. It returns the item as recorded and what the replay added.
// An item that is not kept is refused; an item that does not exist is
// ledger.ErrNotFound, one another person dismissed or replayed meanwhile
// ledger.ErrConflict.
func (p *Processor) ReplayKept(ctx context.Context, books QuarantineBooks, r KeptReplay) (ledger.QuarantineItem, string, error) {
	q, err := books.GetQuarantine(ctx, r.ID)
	if err != nil {
		return q, "", fmt.Errorf("quarantine replay %d: %w", r.ID, err)
	}
	if q.Status != ledger.QuarantineKept {
		return q, "", fmt.Errorf("quarantine replay %d: item is %s, not kept", r.ID, q.Status)
	}
	res, err := p.Replay(ctx, q, r.Parsers)
	if err != nil {
		return q, "", err
	}
	msg := "replayed: " + res
	if note := strings.TrimSpace(r.Note); note != "" {
		msg = note + " (" + msg + ")"
	}
	q, err = books.UpdateQuarantine(ctx, ledger.QuarantineUpdate{ID: r.ID, To: ledger.QuarantineReplayed, Actor: r.Actor, Note: msg, Now: p.now()})
	if err != nil {
		return q, "", fmt.Errorf("quarantine replay %d: %w", r.ID, err)
	}
	return q, res, nil
}
