package matcher

import (
	"errors"
	"time"
)

// DefaultTolerance is the boundary tolerance on each side of a window.
const DefaultTolerance = 2 * time.Hour

// maxSpan bounds the tolerance and the grace.
const maxSpan = 100 * 365 * 24 * time.Hour

// Options configure one matching of a provider and window.
type Options struct {
	Provider string
	// Account is the provider account matched; its findings name it.
	Account string
	// From and To bound the window [From, To) that owns the findings.
	From, To time.Time
	// Now is the time the evidence is judged at: the settlement grace and
	// leases are measured against it.
	Now time.Time
	// Tolerance widens the window on both sides for linking (default 2h);
	// it also bounds how far apart an intent and a fuzzy-linked charge may be.
	Tolerance time.Duration
	// Grace is how long after an intent succeeded locally (or its lease
	// expired) the provider has to show the charge before its absence is a
	// finding. Zero means no grace.
	Grace time.Duration
	// Fuzzy enables the last-resort link by amount, currency and customer.
	Fuzzy bool
	// NoMissing suppresses missing_at_provider findings, for runs whose
	// provider evidence is known to be incomplete (a failed pull).
	NoMissing bool
	// OnlyDisputes judges disputes only, of every intent given whatever
	// its window: the second pass a run makes over the disputes of its
	// window whose charges are older than the window (and so were not in
	// the first).
	OnlyDisputes bool
	// ExactReferences compares echoed references as given (trimmed,
	// upper-cased) instead of in their normal form (NormalReference:
	// letters and digits only, upper-cased), which is the default.
	ExactReferences bool
	// ReversalsAreRefunds says that the provider's reversals return a
	// customer's money (M-Pesa), and are judged as refunds, rather than
	// release an uncaptured or failed charge (Stripe), which a charge is
	// compared net of.
	ReversalsAreRefunds bool
	// KeepLinks makes Result list every link, for tests and debugging; it
	// costs memory proportional to the input.
	KeepLinks bool
	// Zone is where the times that findings' details and explanations
	// name are shown (the provider's zone); UTC when nil.
	Zone *time.Location
}

func (o Options) validate() (Options, error) {
	switch {
	case o.Provider == "":
		return o, errors.New("matcher: provider is empty")
	case o.From.IsZero() || o.To.IsZero():
		return o, errors.New("matcher: window bounds are empty")
	case !o.From.Before(o.To):
		return o, errors.New("matcher: window is empty: from is not before to")
	case o.Now.IsZero():
		return o, errors.New("matcher: now is empty")
	case o.Tolerance < 0 || o.Grace < 0:
		return o, errors.New("matcher: negative tolerance or grace")
	case o.Tolerance > maxSpan || o.Grace > maxSpan:
		// Times are added in Unix nanoseconds: a span of centuries would
		// wrap around int64.
		return o, errors.New("matcher: tolerance or grace beyond 100 years")
	}
	if o.Tolerance == 0 {
		o.Tolerance = DefaultTolerance
	}
	return o, nil
}

// Span returns the window widened by the tolerance on both sides: what the
// caller should load.
func (o Options) Span() (from, to time.Time) {
	tol := o.Tolerance
	if tol == 0 {
		tol = DefaultTolerance
	}
	return o.From.Add(-tol), o.To.Add(tol)
}
