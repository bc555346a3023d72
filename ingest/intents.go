package ingest

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
	"github.com/reconcilehq/reconcile/report"
)

// Charges queues the charges and refunds of imported pending intents; the
// charge service is one.
type Charges interface {
	// CanCharge reports whether a charger is configured for provider.
	CanCharge(provider string) bool
	// CanRefund reports whether provider can send refunds as configured.
	CanRefund(provider string) bool
	// EnqueueChargesTx queues, in tx, the charge of every intent of keys
	// not queued yet, and returns how many it queued.
	EnqueueChargesTx(ctx context.Context, tx ledger.Tx, keys []string) (int, error)
	// EnqueueRefundsTx is EnqueueChargesTx for refund intents.
	EnqueueRefundsTx(ctx context.Context, tx ledger.Tx, keys []string) (int, error)
}

// Intents imports intents files into the books.
type Intents struct {
	Store ledger.Store
	// Kinds are the configured providers, each with the kind of a row that
	// names neither a kind nor a provider reference. A row of any other
	// provider is refused, as the intents API refuses it.
	Kinds intentcsv.Kinds
	// Accounts lists, by provider, its accounts beyond the default one: a
	// row's account must be one of them.
	Accounts map[string][]string
	// Charges, when set, queues the charge of every pending intent of the
	// file and the refund of every pending refund, in the import's
	// transaction (the command line's --charge); a pending row its
	// provider cannot send stops the import. Nil charges nothing.
	Charges Charges
	// ChargerSetting and RefunderSetting name what a provider's
	// configuration lacks to charge or to refund, for that refusal.
	ChargerSetting, RefunderSetting func(provider string) string
	// Clock stamps the import; time.Now when nil.
	Clock func() time.Time
	// Progress, when it is a terminal, shows the lines read, lines/s and
	// the share of the file read; nil shows nothing.
	Progress *os.File
}

// IntentsResult is what an intents import did.
type IntentsResult struct {
	intentcsv.Result
	// File is the file's name.
	File string
	// Charged is true when the import queued charges (Intents.Charges).
	Charged bool
	// Enqueued and EnqueuedRefunds count the charge and refund jobs it
	// queued; the rest of Pending and PendingRefunds were queued before.
	Enqueued, EnqueuedRefunds int
}

// Import imports the intents file at path in one transaction, or nothing
// of it (intentcsv.Import).
func (im *Intents) Import(ctx context.Context, path string) (IntentsResult, error) {
	res := IntentsResult{File: path, Charged: im.Charges != nil}
	f, err := os.Open(path)
	if err != nil {
		return res, err
	}
	defer f.Close()
	in := &report.CountingFile{File: f}
	opt := &intentcsv.Options{Kinds: im.Kinds, Check: im.check(path)}
	progressDone := func() {}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && im.Progress != nil {
		progress := report.NewProgress(im.Progress, im.Clock)
		progressDone = progress.Done
		opt.Progress = func(rows int) {
			progress.Update(fmt.Sprintf("import %d%%", in.N.Load()*100/max(st.Size(), 1)), rows)
		}
	}
	if im.Charges != nil {
		opt.Pending = func(ctx context.Context, tx ledger.Tx, keys []string) error {
			n, err := im.Charges.EnqueueChargesTx(ctx, tx, keys)
			res.Enqueued += n
			return err
		}
		opt.PendingRefunds = func(ctx context.Context, tx ledger.Tx, keys []string) error {
			n, err := im.Charges.EnqueueRefundsTx(ctx, tx, keys)
			res.EnqueuedRefunds += n
			return err
		}
	}
	clock := im.Clock
	if clock == nil {
		clock = time.Now
	}
	res.Result, err = intentcsv.Import(ctx, im.Store, path, in, clock(), opt)
	progressDone()
	return res, err
}

// check vets a row before it is written: its provider is configured and,
// when the import charges, a pending row's provider can send it.
func (im *Intents) check(file string) func(intentcsv.Row) error {
	return func(r intentcsv.Row) error {
		if err := CheckProvider(im.Kinds, r.Intent.Provider); err != nil {
			return err
		}
		if _, err := ledger.ParseAccount(r.Intent.Account, im.Accounts[r.Intent.Provider]); err != nil {
			return &ledger.FieldError{Field: "account", Err: err}
		}
		if im.Charges == nil || r.Intent.State != ledger.StatePending {
			return nil
		}
		if r.Intent.Kind == ledger.IntentRefund {
			if im.Charges.CanRefund(r.Intent.Provider) {
				return nil
			}
			return fmt.Errorf("%s line %d: --charge: provider %q cannot send refunds as configured: %s",
				file, r.Line, r.Intent.Provider, setting(im.RefunderSetting, r.Intent.Provider))
		}
		if im.Charges.CanCharge(r.Intent.Provider) {
			return nil
		}
		return fmt.Errorf("%s line %d: --charge: no charger is configured for provider %q: %s",
			file, r.Line, r.Intent.Provider, setting(im.ChargerSetting, r.Intent.Provider))
	}
}

func setting(of func(string) string, provider string) string {
	if of == nil {
		return "see the configuration"
	}
	return of(provider)
}

// CheckProvider refuses, as a bad value of the field provider, a provider
// that is not one of the configured ones (the keys of kinds).
func CheckProvider(kinds intentcsv.Kinds, provider string) error {
	if _, ok := kinds[strings.ToLower(strings.TrimSpace(provider))]; ok {
		return nil
	}
	return &ledger.FieldError{Field: "provider", Err: fmt.Errorf("%s is not a configured provider (configured: %s)",
		ledger.Clip(provider), strings.Join(slices.Sorted(maps.Keys(kinds)), ", "))}
}

// WriteText says what the import did: the rows, the intents created and
// present already, and what became of the pending charges and refunds.
func (r IntentsResult) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d row(s), %d intent(s) created, %d already present\n", r.File, r.Rows, r.Created, r.Existing)
	switch {
	case r.Charged:
		fmt.Fprintf(&b, "%d pending intent(s): %d charge job(s) enqueued, %d already queued\n",
			r.Pending, r.Enqueued, r.Pending-r.Enqueued)
	case r.Pending > 0:
		fmt.Fprintf(&b, "%d pending intent(s) imported and not charged: no charge jobs were enqueued. "+
			"To charge them, import the file again with --charge.\n", r.Pending)
	}
	switch {
	case r.Charged && r.PendingRefunds > 0:
		fmt.Fprintf(&b, "%d pending refund(s): %d refund job(s) enqueued, %d already queued\n",
			r.PendingRefunds, r.EnqueuedRefunds, r.PendingRefunds-r.EnqueuedRefunds)
	case r.PendingRefunds > 0:
		fmt.Fprintf(&b, "%d pending refund(s) imported and not sent: no refund jobs were enqueued. "+
			"To send them, import the file again with --charge.\n", r.PendingRefunds)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// DryRun reads the intents file at path as Import would, checks its rows
// against books and writes what importing it would do to w; it writes
// nothing to the books.
func (im *Intents) DryRun(ctx context.Context, w io.Writer, books ledger.Reader, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := report.CheckIntents(ctx, books, f, path, im.Kinds, func(provider string) error { return CheckProvider(im.Kinds, provider) })
	if err != nil {
		return err
	}
	return report.WriteFileCheck(w, c)
}
