package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/bankaccount"
)

// Defaults.
const (
	DefaultTolerance = matcher.DefaultTolerance
	DefaultLease     = 15 * time.Minute
	DefaultGrace     = 2 * time.Hour
)

// Settler settles an unknown intent that provider evidence proves paid,
// inside the run's transaction. The default moves it to succeeded; the
// charge package plugs in its own, which also records the outgoing event.
// It returns ledger.ErrConflict (wrapped) when the intent is no longer
// unknown, which the run counts as nothing to settle.
type Settler interface {
	Settle(ctx context.Context, tx ledger.Tx, in ledger.Intent, proof ledger.ProviderTxn, now time.Time) error
}

// SettlerFunc adapts a function to Settler.
type SettlerFunc func(ctx context.Context, tx ledger.Tx, in ledger.Intent, proof ledger.ProviderTxn, now time.Time) error

// Settle calls f.
func (f SettlerFunc) Settle(ctx context.Context, tx ledger.Tx, in ledger.Intent, proof ledger.ProviderTxn, now time.Time) error {
	return f(ctx, tx, in, proof, now)
}

// TransitionSettler is the default Settler: unknown -> succeeded,
// compare-and-set.
var TransitionSettler Settler = SettlerFunc(func(ctx context.Context, tx ledger.Tx, in ledger.Intent, _ ledger.ProviderTxn, now time.Time) error {
	_, err := tx.TransitionIntent(ctx, ledger.TransitionParams{Key: in.Key, From: []ledger.State{ledger.StateUnknown},
		To: ledger.StateSucceeded, Now: now})
	return err
})

// FindingsHook is called inside the run's transaction with what the run
// changed: one FindingChange per finding seen and the findings it resolved.
// Returning an error rolls the whole run back.
type FindingsHook func(ctx context.Context, tx ledger.Tx, run ledger.Run, changes []ledger.FindingChange, resolved []ledger.Finding) error

// Config is what a Reconciler needs for every run. Zero fields take the
// defaults noted.
type Config struct {
	// Clock returns the current time; default time.Now.
	Clock func() time.Time
	// Logger receives one summary line per run; default discards.
	Logger *slog.Logger
	// Owner identifies this process in run claims; default host:pid.
	Owner string
	// Lease is how long a run claim holds; default 15m.
	Lease time.Duration
	// Tolerance widens each window on both sides for linking; default 2h.
	Tolerance time.Duration
	// Grace is the settlement grace per provider; providers not listed get
	// DefaultGrace (2h). A zero entry means no grace.
	Grace map[string]time.Duration
	// Fuzzy enables the fuzzy link (amount + currency + customer).
	Fuzzy bool
	// Horizon is, per provider, how far each way from its window a run
	// looks up the intents and evidence of other windows that its leftovers
	// may belong to; providers not listed get DefaultHorizon (35 days).
	Horizon map[string]time.Duration
	// Zones is, per provider, the zone the notes of resolutions and the
	// details of findings show times in; UTC when not listed.
	Zones map[string]*time.Location
	// ExactReferences names the providers whose echoed references are
	// linked as given (upper-cased) rather than by their normal form.
	ExactReferences []string
	// Pullers fetch provider evidence before matching, by account scope
	// (ledger.Scope: the provider's name for its default account).
	Pullers map[string]providers.Puller
	// Banks are the bank accounts, by provider name (bank:<name>): a run
	// of one matches payouts to its statement (bank.go).
	Banks map[string]*bankaccount.Account
	// PayoutPullers fetch the payouts a provider made to bank accounts, by
	// account scope (ledger.Scope: the provider's name for its default
	// account), for the runs of the bank accounts they pay into.
	PayoutPullers map[string]providers.PayoutPuller
	// Settler settles unknown intents; default TransitionSettler.
	Settler Settler
	// OnFindings, when set, is called in the run's transaction.
	OnFindings FindingsHook
	// Replica, when set, is a read replica of the store: a run's matching
	// reads there when it holds everything the primary had written (the
	// run's pull included), and the store otherwise; a read on it that
	// fails makes the run read again from the store.
	Replica Replica
}

// Reconciler runs reconciles against one store.
type Reconciler struct {
	store Store
	cfg   Config
}

// New returns a Reconciler with cfg's defaults filled.
func New(store Store, cfg Config) *Reconciler {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Owner == "" {
		host, _ := os.Hostname()
		cfg.Owner = host + ":" + strconv.Itoa(os.Getpid())
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = DefaultTolerance
	}
	if cfg.Settler == nil {
		cfg.Settler = TransitionSettler
	}
	return &Reconciler{store: store, cfg: cfg}
}

// GraceFor returns the settlement grace of provider.
func (r *Reconciler) GraceFor(provider string) time.Duration {
	if g, ok := r.cfg.Grace[provider]; ok {
		return g
	}
	return DefaultGrace
}

// Params select one run.
type Params struct {
	Provider string
	// Account is the provider account reconciled; empty is the
	// provider's default account.
	Account string
	// From and To bound the window [From, To).
	From, To time.Time
	// DryRun matches and reports without claiming, pulling or writing.
	DryRun bool
	// NoPull matches only what is stored.
	NoPull bool
	// Progress, when set, is told how many rows were read so far.
	Progress func(stage string, rows int)
	// confirming marks the run of a window run again to confirm refunds:
	// it runs no other window again.
	confirming bool
}

// Outcome is what a run did.
type Outcome struct {
	// Run is the recorded run; on a dry run only Provider, From, To and
	// Counts are set.
	Run    ledger.Run
	DryRun bool
	// Summary is what the window holds (report's summary block).
	Summary matcher.Summary
	// Findings are the findings this run saw, in report order; after a
	// real run they carry their stored status and first/last seen times.
	Findings []ledger.Finding
	// Changes says, per finding, whether it was new, reopened or escalated.
	Changes []ledger.FindingChange
	// Resolved are the findings of the window this run no longer saw.
	Resolved []ledger.Finding
	// Settled lists the unknown intents this run settled.
	Settled []matcher.Settlement
	// Confirmed are the runs of other windows this run ran again because
	// refunds people asked for on their findings are now given back: their
	// Resolved say what they resolved.
	Confirmed []*Outcome
	// PullError says why pulling the provider's evidence failed, if it did;
	// missing_at_provider findings are then not raised.
	PullError string
	// PullCause is the pull's error itself, for errors.Is and errors.As.
	PullCause error
	// Fuzzy counts fuzzy links.
	Fuzzy int
	// Late is what the run looked up beyond its window.
	Late LateStats
	// Reads says where the run's matching read, when a replica is
	// configured: "replica", or "primary: " and why.
	Reads string
	// Bank is what a run of a bank account counted; nil for the others.
	Bank *BankStats
}

// LateStats counts what a run looked up beyond its window (its leftovers,
// and the intents and evidence of other windows found for them) and how
// long the look-ups took.
type LateStats struct {
	LeftTxns, LeftIntents int
	Intents, Txns         int
	Took                  time.Duration
}

// OpenFindings counts the findings of the run that are still open: what
// --fail-on-findings turns into exit code 3.
func (o *Outcome) OpenFindings() int {
	n := 0
	for _, f := range o.Findings {
		if f.Status == "" || f.Status == ledger.FindingOpen {
			n++
		}
	}
	return n
}

// ErrBusy reports that another process is running the same window.
var ErrBusy = ledger.ErrNotClaimable

// ErrLeaseLost reports that a run stopped because another process took its
// window over (the run could not renew its lease in time); nothing it found
// was written.
var ErrLeaseLost = errors.New("the run's lease was taken over by another process")

func (p Params) validate() error {
	switch {
	case p.Provider == "":
		return errors.New("reconcile: provider is empty")
	case p.From.IsZero() || p.To.IsZero():
		return errors.New("reconcile: --from and --to are required")
	case !p.From.Before(p.To):
		return fmt.Errorf("reconcile: window is empty: from %s is not before to %s",
			p.From.UTC().Format(time.RFC3339), p.To.UTC().Format(time.RFC3339))
	}
	return nil
}
