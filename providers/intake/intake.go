package intake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// Processor stores and interprets callbacks.
type Processor struct {
	Store   Store
	Applier providers.OutcomeApplier
	// AttemptAccounts names the providers with several accounts whose
	// results of a request (an STK push's callback, a reversal's result)
	// name no account: such a sighting takes the account of the intent
	// whose attempt made the request (its provider reference).
	AttemptAccounts map[string]bool
	Clock           func() time.Time
	Logger          *slog.Logger
}

// Result says what happened to one delivery.
type Result struct {
	Callback ledger.Callback
	// Duplicate is true when the same body had been delivered before.
	Duplicate bool
	Kind      string
	// Rejected holds the parse or validation error of a body that was
	// quarantined instead of interpreted.
	Rejected error
	// NewTxns and NewSources count what the body added to the books.
	NewTxns, NewSources int
	// Ack is the answer the provider expects.
	Ack []byte
}

// DedupeKey identifies a body by its content.
func DedupeKey(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Delivery is one callback body as it arrived.
type Delivery struct {
	Provider string
	Parser   providers.CallbackParser
	Body     []byte
	// RemoteAddr is the sender (a client IP, or the file a body was
	// imported from).
	RemoteAddr string
	// Kind is what the endpoint the body arrived at says it is, empty when
	// nothing says (a file import). It is stored with the callback and
	// handed to parsers that implement KindParser, also when the callback
	// is reprocessed.
	Kind string
	// Scope separates deduplication: the same body delivered in two scopes
	// is two deliveries (an M-Pesa C2B validation and the confirmation that
	// follows can be byte for byte the same). Empty is the provider-wide
	// scope.
	Scope string
	// Origin and Line say where a rejected body came from (a file and its
	// line) in the quarantine; by default the stored callback's reference.
	Origin string
	Line   int
}

// KindParser is implemented by parsers that can use the kind the endpoint
// gave (Delivery.Kind) when the body alone cannot tell.
type KindParser interface {
	ParseCallbackKind(kind string, body []byte, ref string, receivedAt time.Time) (providers.Evidence, error)
}

// accountKindPrefix starts the kinds AccountKind makes.
const accountKindPrefix = "account:"

// AccountKind is the kind (Delivery.Kind) of a body that belongs to account
// of its provider because of how it arrived, not because of what it says: a
// Stripe event whose signature the signing secret of that account's own
// endpoint verified. Like any kind it is stored with the callback, so
// reprocessing places the body alike; a body of such a kind that is refused
// is quarantined under the account's scope (source
// <provider>@<account>_callback), so that replaying it does too.
func AccountKind(account string) string { return accountKindPrefix + account }

// KindAccount is the account of a kind made by AccountKind, and whether kind
// is one.
func KindAccount(kind string) (string, bool) {
	a, ok := strings.CutPrefix(kind, accountKindPrefix)
	return a, ok && a != ""
}

// Deliver stores the body, then interprets it in one transaction together
// with marking it processed. When storing fails it returns an error and a
// zero Result.Callback: the caller must then not acknowledge. When the body
// was stored (Result.Callback.ID != 0) it is safe to acknowledge even if
// interpreting it failed with an error: the stored callback stays
// unprocessed and Reprocess takes it up again. A body that does not parse
// is quarantined and reported in Result.Rejected.
func (p *Processor) Deliver(ctx context.Context, d Delivery) (Result, error) {
	now := p.now()
	key := DedupeKey(d.Body)
	if d.Scope != "" {
		key = d.Scope + ":" + key
	}
	cb, dup, err := p.Store.StoreCallback(ctx, ledger.Callback{Provider: d.Provider, Kind: d.Kind, DedupeKey: key,
		Body: d.Body, RemoteAddr: d.RemoteAddr, ReceivedAt: now})
	if err != nil {
		return Result{}, fmt.Errorf("intake: store %s callback: %w", d.Provider, err)
	}
	res := Result{Callback: cb, Duplicate: dup}
	if dup && !cb.ProcessedAt.IsZero() {
		if _, ok := KindAccount(cb.Kind); !ok {
			// An account's kind is where the body came from, not what it is.
			res.Kind = cb.Kind
		}
		if ev, perr := parse(d.Parser, cb); perr == nil {
			res.Ack = ev.Ack
		}
		return res, nil
	}
	return p.process(ctx, d.Parser, cb, res, origin{d.Origin, d.Line})
}

func (p *Processor) now() time.Time {
	if p.Clock == nil {
		return time.Now().UTC()
	}
	return p.Clock().UTC()
}

// parse interprets a stored callback, with the kind it was stored under when
// the parser can use it.
func parse(parser providers.CallbackParser, cb ledger.Callback) (providers.Evidence, error) {
	return parseRef(parser, cb, callbackRef(cb))
}

// parseRef is parse with the body named ref in errors.
func parseRef(parser providers.CallbackParser, cb ledger.Callback, ref string) (providers.Evidence, error) {
	if kp, ok := parser.(KindParser); ok && cb.Kind != "" {
		return kp.ParseCallbackKind(cb.Kind, cb.Body, ref, cb.ReceivedAt)
	}
	return parser.ParseCallback(cb.Body, ref, cb.ReceivedAt)
}

// origin names where a body came from, for the quarantine.
type origin struct {
	name string
	line int
}

// Reprocess interprets callbacks that were stored but never processed (the
// process died in between, or interpreting failed). A callback that fails
// again does not hold up the others: Reprocess goes on with the rest of the
// batch and then returns the failures, to be tried on the next call.
func (p *Processor) Reprocess(ctx context.Context, provider string, parser providers.CallbackParser) (int, error) {
	n := 0
	for {
		cbs, err := p.Store.ListUnprocessedCallbacks(ctx, provider, 100)
		if err != nil {
			return n, err
		}
		if len(cbs) == 0 {
			return n, nil
		}
		var errs []error
		for _, cb := range cbs {
			if _, err := p.process(ctx, parser, cb, Result{Callback: cb}, origin{}); err != nil {
				errs = append(errs, err)
				continue
			}
			n++
		}
		if len(errs) > 0 {
			return n, errors.Join(errs...)
		}
	}
}

func callbackRef(cb ledger.Callback) string { return fmt.Sprintf("callback:%d", cb.ID) }

func (p *Processor) process(ctx context.Context, parser providers.CallbackParser, cb ledger.Callback, res Result, from origin) (Result, error) {
	now := p.now()
	ev, perr := parse(parser, cb)
	res.Kind, res.Ack = ev.Kind, ev.Ack
	err := p.Store.InTx(ctx, func(tx ledger.Tx) error {
		res.NewTxns, res.NewSources = 0, 0
		if perr != nil {
			return p.reject(ctx, tx, cb, perr, now, from)
		}
		ss := sightings(ev.Sightings)
		if err := p.accountsOfAttempts(ctx, tx, cb.Provider, ss); err != nil {
			return err
		}
		u, err := tx.UpsertProviderTxns(ctx, ss)
		if err != nil {
			var fe *ledger.FieldError
			if errors.As(err, &fe) {
				return errRejected{err}
			}
			return err
		}
		res.NewTxns, res.NewSources = u.NewTxns, u.NewSources
		for _, o := range ev.Outcomes {
			if p.Applier == nil {
				break
			}
			if err := p.Applier.ApplyOutcome(ctx, tx, cb.Provider, o); err != nil {
				return err
			}
		}
		return tx.MarkCallbackProcessed(ctx, cb.ID, ev.Kind, "", now)
	})
	if err != nil {
		// Nothing of the transaction was kept.
		res.NewTxns, res.NewSources = 0, 0
	}
	var rej errRejected
	if errors.As(err, &rej) {
		// The transaction rolled back; quarantine in a fresh one.
		perr = rej.err
		err = p.Store.InTx(ctx, func(tx ledger.Tx) error { return p.reject(ctx, tx, cb, perr, now, from) })
	}
	if err != nil {
		return res, fmt.Errorf("intake: process %s callback %d: %w", cb.Provider, cb.ID, err)
	}
	if perr != nil {
		res.Rejected = perr
		if p.Logger != nil {
			p.Logger.Warn("callback quarantined", "provider", cb.Provider, "callback_id", cb.ID, "error", perr.Error())
		}
	}
	return res, nil
}

type errRejected struct{ err error }

func (e errRejected) Error() string { return e.err.Error() }

func (p *Processor) reject(ctx context.Context, tx ledger.Tx, cb ledger.Callback, perr error, now time.Time, from origin) error {
	field := ""
	var pe *ledger.ParseError
	var fe *ledger.FieldError
	switch {
	case errors.As(perr, &pe):
		field = pe.Field
	case errors.As(perr, &fe):
		field = fe.Field
	}
	if from.name == "" {
		from = origin{name: callbackRef(cb)}
	}
	scope := cb.Provider
	if account, ok := KindAccount(cb.Kind); ok {
		scope = ledger.Scope(cb.Provider, account)
	}
	if _, err := tx.AddQuarantine(ctx, ledger.QuarantineItem{Source: scope + "_callback", Origin: from.name,
		Line: from.line, Field: field, Reason: perr.Error(), Raw: cb.Body, At: now}); err != nil {
		return err
	}
	return tx.MarkCallbackProcessed(ctx, cb.ID, "", perr.Error(), now)
}

// sightings converts a provider's sightings to the ledger's.
// accountsOfAttempts gives each sighting of ss that answers a request of
// provider (its provider reference) and names no account the account of
// the intent whose attempt made the request, when provider has several
// accounts (AttemptAccounts).
func (p *Processor) accountsOfAttempts(ctx context.Context, tx ledger.Tx, provider string, ss []ledger.Sighting) error {
	if !p.AttemptAccounts[provider] {
		return nil
	}
	for i := range ss {
		t := &ss[i].Txn
		if t.Account != "" || t.ProviderRef == "" {
			continue
		}
		a, err := tx.FindAttempt(ctx, provider, t.ProviderRef)
		if errors.Is(err, ledger.ErrNotFound) {
			continue // no request of ours: the default account's
		}
		if err != nil {
			return err
		}
		in, err := tx.GetIntent(ctx, a.IntentKey)
		if err != nil {
			return err
		}
		t.Account = in.Account
	}
	return nil
}

func sightings(ss []providers.Sighting) []ledger.Sighting {
	out := make([]ledger.Sighting, len(ss))
	for i, s := range ss {
		out[i] = ledger.Sighting{Txn: s.Txn, Source: s.Source}
	}
	return out
}
