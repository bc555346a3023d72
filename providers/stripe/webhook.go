package stripe

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
)

// ChannelWebhook is the source channel of sightings from webhook events.
// Each sighting's ref is the event id (evt_...): Stripe re-delivers an event
// with a changed pending_webhooks count, so the body differs but the
// sighting is the same.
const ChannelWebhook = "webhook"

// EventParser interprets Stripe event bodies whose signature was already
// verified (by WebhookHandler) or that come from a trusted file. It
// implements providers.CallbackParser.
//
// charge.* events give a sighting of the charge (and of the refunds embedded
// in it); refund events and charge.refund.updated give a sighting of the
// refund; payment_intent.succeeded, payment_intent.payment_failed and
// payment_intent.canceled give an AttemptOutcome for the PaymentIntent.
// Other event types (charge.dispute.* among them) are recognised
// (Evidence.Kind is the event type) and add nothing.
type EventParser struct {
	// MetadataKey is the metadata key that carries the intent key; default
	// MetadataIntentKey.
	MetadataKey string
	// Accounts are the accounts reconciled apart from the platform's own:
	// an event of one of them (its account field) is that account's
	// evidence, and an event of a connected account not listed is refused.
	// Without accounts every event is the default account's. An event
	// verified with the signing secret of an account's own endpoint comes
	// with the account's kind instead (ParseCallbackKind).
	Accounts []string
}

var (
	_ providers.CallbackParser = EventParser{}
	_ intake.KindParser        = EventParser{}
)

type eventObject struct {
	ID      string `json:"id"`
	Account string `json:"account"`
	Object  string `json:"object"`
	Type    string `json:"type"`
	Created *int64 `json:"created"`
	Data    *struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// ParseCallback parses one event body. ref names the stored delivery and
// goes into errors, which are *ledger.ParseError naming the field.
func (p EventParser) ParseCallback(body []byte, ref string, receivedAt time.Time) (providers.Evidence, error) {
	return p.parse(body, ref, receivedAt, "")
}

// ParseCallbackKind is ParseCallback for a body stored with kind. The kind
// of an account (intake.AccountKind: the event's signature was verified with
// the signing secret of that account's own endpoint) makes the event that
// account's; an event that also names another account in its account
// field, or an account that is not one of Accounts, is refused, naming the
// account field. Any other kind changes nothing.
func (p EventParser) ParseCallbackKind(kind string, body []byte, ref string, receivedAt time.Time) (providers.Evidence, error) {
	signer, _ := intake.KindAccount(kind)
	return p.parse(body, ref, receivedAt, signer)
}

// parse parses one event body, of the account signer when it is set.
func (p EventParser) parse(body []byte, ref string, receivedAt time.Time, signer string) (providers.Evidence, error) {
	ev, err := parseEvent(body, receivedAt, p.MetadataKey, p.Accounts, signer)
	if err != nil {
		perr := &ledger.ParseError{File: ref, Err: err}
		var fe *ledger.FieldError
		if errors.As(err, &fe) {
			perr.Field, perr.Err = fe.Field, fe.Err
		}
		return providers.Evidence{}, perr
	}
	return ev, nil
}

func parseEvent(body []byte, receivedAt time.Time, key string, accounts []string, signer string) (providers.Evidence, error) {
	if !utf8.Valid(body) {
		// encoding/json would turn the bad bytes into U+FFFD silently.
		return providers.Evidence{}, fieldErr("", "body", errors.New("is not valid UTF-8"))
	}
	var e eventObject
	if err := decodeObject(body, "", &e); err != nil {
		return providers.Evidence{}, err
	}
	if err := needID("", e.ID, e.Object, "event"); err != nil {
		return providers.Evidence{}, err
	}
	if e.Object == "" {
		return providers.Evidence{}, fieldErr("", "object", errors.New("is missing"))
	}
	if strings.TrimSpace(e.Type) == "" {
		return providers.Evidence{}, fieldErr("", "type", errors.New("is missing"))
	}
	at, err := needTime("", "created", e.Created)
	if err != nil {
		return providers.Evidence{}, err
	}
	account, err := eventAccount(e.Account, signer, accounts)
	if err != nil {
		return providers.Evidence{}, err
	}
	ev, err := eventEvidence(e, at, receivedAt, key)
	for i := range ev.Sightings {
		ev.Sightings[i].Txn.Account = account
	}
	return ev, err
}

// eventAccount is the account an event of connected account acct (empty:
// the platform's own) belongs to, among accounts; signer, when set, is the
// account whose own signing secret verified the event, which the event
// then belongs to.
func eventAccount(acct, signer string, accounts []string) (string, error) {
	switch {
	case signer != "" && !slices.Contains(accounts, signer):
		return "", fieldErr("", "account", fmt.Errorf("the event was signed for account %s, which is not one of the configured accounts (%s)",
			ledger.Clip(signer), strings.Join(accounts, ", ")))
	case signer != "" && acct != "" && acct != signer:
		return "", fieldErr("", "account", fmt.Errorf("%s contradicts the account whose signing secret verified the event, %s",
			ledger.Clip(acct), signer))
	case signer != "":
		return signer, nil
	case len(accounts) == 0 || acct == "":
		return "", nil
	case slices.Contains(accounts, acct):
		return acct, nil
	}
	return "", fieldErr("", "account", fmt.Errorf("%s is not one of the configured accounts (%s)", ledger.Clip(acct),
		strings.Join(accounts, ", ")))
}

// eventEvidence is what event e, created at at, says.
func eventEvidence(e eventObject, at, receivedAt time.Time, key string) (providers.Evidence, error) {
	ev := providers.Evidence{Kind: e.Type}
	family, _, _ := strings.Cut(e.Type, ".")
	isRefund := family == "refund" || e.Type == "charge.refund.updated"
	isDispute := strings.HasPrefix(e.Type, "charge.dispute.") && !strings.HasPrefix(e.Type, "charge.dispute.funds_")
	if family != "charge" && family != "payment_intent" && !isRefund || strings.HasPrefix(e.Type, "charge.dispute.funds_") {
		// The funds events repeat what the dispute object says.
		return ev, nil
	}
	if e.Data == nil || len(e.Data.Object) == 0 || string(e.Data.Object) == "null" {
		return providers.Evidence{}, fieldErr("", "data.object", errors.New("is missing"))
	}
	obj := []byte(e.Data.Object)
	s := sighter{channel: ChannelWebhook, ref: func(string) string { return e.ID }, receivedAt: receivedAt.UTC(), key: key}
	const prefix = "data.object."
	switch {
	case isDispute:
		ss, err := disputeSightings(obj, prefix, s)
		if err != nil {
			return providers.Evidence{}, err
		}
		ev.Sightings = ss
	case isRefund:
		one, err := refundSighting(obj, prefix, s, chargeObject{})
		if err != nil {
			return providers.Evidence{}, err
		}
		ev.Sightings = []providers.Sighting{one}
	case family == "charge":
		ss, err := chargeSightings(obj, prefix, s)
		if err != nil {
			return providers.Evidence{}, err
		}
		ev.Sightings = ss
	default:
		var pi paymentIntentObject
		if err := decodeObject(obj, prefix, &pi); err != nil {
			return providers.Evidence{}, err
		}
		o, err := intentOutcome(pi, at)
		if err != nil {
			return providers.Evidence{}, err
		}
		switch e.Type {
		case "payment_intent.succeeded", "payment_intent.payment_failed", "payment_intent.canceled":
			ev.Outcomes = []providers.AttemptOutcome{o}
		}
	}
	return ev, nil
}

func intentOutcome(pi paymentIntentObject, at time.Time) (providers.AttemptOutcome, error) {
	const prefix = "data.object."
	if err := needID(prefix, pi.ID, pi.Object, "payment_intent"); err != nil {
		return providers.AttemptOutcome{}, err
	}
	switch pi.Status {
	case "":
		return providers.AttemptOutcome{}, fieldErr(prefix, "status", errors.New("is missing"))
	case "succeeded", "processing", "requires_capture", "requires_action", "requires_payment_method",
		"requires_confirmation", "canceled":
	default:
		return providers.AttemptOutcome{}, fieldErr(prefix, "status", fmt.Errorf("unknown PaymentIntent status %q", pi.Status))
	}
	if pi.Amount == nil {
		return providers.AttemptOutcome{}, fieldErr(prefix, "amount", errors.New("is missing"))
	}
	if pi.Currency == "" {
		return providers.AttemptOutcome{}, fieldErr(prefix, "currency", errors.New("is missing"))
	}
	res, err := intentResultOf(pi, prefix)
	if err != nil {
		return providers.AttemptOutcome{}, err
	}
	return providers.AttemptOutcome{ProviderRef: pi.ID, Status: res.Status, TxnID: res.TxnID, Amount: res.Amount,
		Code: res.Code, Reason: res.Reason, At: at}, nil
}
