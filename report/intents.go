package report

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// WriteIntentChange says what a correction did to an intent (in, as it now
// stands): the amount it was amended to, or that it was voided, with what
// it was before and what the next runs make of it.
func WriteIntentChange(w io.Writer, in ledger.Intent, c ledger.IntentChange) error {
	var err error
	switch c.Action {
	case ledger.IntentAmended:
		_, err = fmt.Fprintf(w, "intent %s amended: %s (was %s); the next run of its window judges it again\n",
			ledger.SafeLine(in.Key, 200), ledger.ShowAmount(in.Amount), ledger.ShowAmount(c.OldAmount))
	default:
		_, err = fmt.Fprintf(w, "intent %s voided: %s (was %s); runs no longer call it missing or stuck\n",
			ledger.SafeLine(in.Key, 200), in.State, c.OldState)
	}
	return err
}

// WriteIntent writes an intent and the corrections made to it, oldest
// first, for a person: times in UTC, every text from outside made safe for
// one line.
func WriteIntent(w io.Writer, in ledger.Intent, changes []ledger.IntentChange) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Intent   %s (%s)\n", ledger.SafeLine(in.Key, 200), in.Kind)
	fmt.Fprintf(&b, "Amount   %s\n", ledger.ShowAmount(in.Amount))
	fmt.Fprintf(&b, "State    %s\n", in.State)
	fmt.Fprintf(&b, "Provider %s, reference %s\n", in.Provider, ledger.SafeLine(in.Reference, 64))
	fmt.Fprintf(&b, "Created  %s, updated %s\n", in.CreatedAt.UTC().Format(time.RFC3339), in.UpdatedAt.UTC().Format(time.RFC3339))
	fmt.Fprintln(&b, "\nCorrections")
	if len(changes) == 0 {
		fmt.Fprintln(&b, "  none")
	}
	for _, c := range changes {
		what := fmt.Sprintf("amount %s -> %s", ledger.ShowAmount(c.OldAmount), ledger.ShowAmount(c.NewAmount))
		if c.Action == ledger.IntentVoided {
			what = fmt.Sprintf("state %s -> %s", c.OldState, c.NewState)
		}
		fmt.Fprintf(&b, "  %s  %s by %s via %s: %s: %s\n", c.At.UTC().Format(time.RFC3339), c.Action, ledger.SafeLine(c.Actor, 200),
			c.Surface, what, ledger.SafeLine(c.Note, 400))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// IntentReader reads an intent and the corrections made to it.
type IntentReader interface {
	GetIntent(ctx context.Context, key string) (ledger.Intent, error)
	IntentChanges(ctx context.Context, key string) ([]ledger.IntentChange, error)
}

// ShowIntent reads the intent key with its corrections from r and writes
// them (WriteIntent). An intent r does not hold is ledger.ErrNotFound.
func ShowIntent(ctx context.Context, w io.Writer, r IntentReader, key string) error {
	in, err := r.GetIntent(ctx, key)
	if err != nil {
		return err
	}
	changes, err := r.IntentChanges(ctx, in.Key)
	if err != nil {
		return err
	}
	return WriteIntent(w, in, changes)
}
