package providers

import (
	"context"
	"io"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// Sighting is one provider transaction seen through one channel.
type Sighting struct {
	Txn    ledger.ProviderTxn
	Source ledger.Source
	// Category is what the line counts as in an import summary (a Stripe
	// reporting category), when the parser says; "" otherwise.
	Category string
	// Warnings are things worth a look that did not stop the line from
	// being read; an import shows each distinct one once.
	Warnings []string
	// Bank is the entry's details, for a line of a bank statement; nil
	// otherwise.
	Bank *ledger.BankEntry
	// Payout is what the line says of a payout to a bank account (when it
	// arrives, its trace), for the payout's own line or a line that names
	// the payout it was paid out in; nil otherwise.
	Payout *ledger.Payout
	// PayoutItems are the transactions the line says a payout carries
	// (the line's own, paid out in Stripe's automatic_payout_id; the rows
	// an M-Pesa settlement swept).
	PayoutItems []ledger.PayoutItem
}

// AttemptOutcome is a provider's verdict on one of our attempts, found by
// the reference the attempt recorded (an STK callback names its
// CheckoutRequestID).
type AttemptOutcome struct {
	ProviderRef string
	Status      ChargeStatus
	TxnID       string
	Amount      money.Amount
	Code        string
	Reason      string
	At          time.Time
}

// Evidence is what one callback body says.
type Evidence struct {
	// Kind names the callback type (stk_callback, c2b_confirmation,
	// b2c_result, reversal_result, transaction_status_result, ...).
	Kind      string
	Sightings []Sighting
	Outcomes  []AttemptOutcome
	// Ack is the body to answer the provider with, when it expects one.
	Ack []byte
}

// CallbackParser turns a callback body into evidence. ref identifies the
// delivery (the stored callback) and goes into each sighting's source.
type CallbackParser interface {
	ParseCallback(body []byte, ref string, receivedAt time.Time) (Evidence, error)
}

// OutcomeApplier applies a provider's verdict on an attempt to its intent,
// inside the caller's transaction. It is implemented by the charge package.
type OutcomeApplier interface {
	ApplyOutcome(ctx context.Context, tx ledger.Tx, provider string, o AttemptOutcome) error
}

// Puller fetches a provider's evidence for a window (Stripe's API, M-Pesa's
// Pull Transactions API). It calls emit for every sighting; emitting the same
// sighting twice must be harmless.
type Puller interface {
	Pull(ctx context.Context, from, to time.Time, emit func(Sighting) error) error
}

// PullRegistrar is implemented by pullers whose provider serves a pull only
// for what was registered for pulling first (M-Pesa's Pull Transactions
// API, once per short code).
type PullRegistrar interface {
	// EnsureRegistered registers unless book records the registration
	// already (force registers again), and records it in book. asked says
	// whether the provider was asked; by says who or what registers.
	EnsureRegistered(ctx context.Context, book ledger.PullRegistrationStore, by string, force bool) (reg ledger.PullRegistration, asked bool, err error)
	// PullShortCode names what is registered: the short code pulled for.
	PullShortCode() string
}

// StatementParser reads a statement file. It calls emit for each good line and
// reject for each bad one (with the raw line), and keeps reading after a bad
// line so that every problem in a file is reported at once. It returns an
// error only when the file as a whole cannot be read (no header, not CSV).
type StatementParser interface {
	ParseStatement(r io.Reader, file string, emit func(Sighting) error, reject func(perr *ledger.ParseError, raw []byte) error) error
}
