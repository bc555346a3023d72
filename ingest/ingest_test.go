package ingest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/ingest"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
	"github.com/reconcilehq/reconcile/providers/intake"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/stripe"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC)

func clock() time.Time { return t0 }

// kinds are the configured providers of the tests.
var kinds = intentcsv.Kinds{"stripe": ledger.IntentCharge, "mpesa": ledger.IntentExpected}

const intentsCSV = `key,provider,amount,currency,status,created_at,kind,refund_of
charge:order-1,stripe,19.99,USD,pending,2026-11-02T06:30:00Z,,
charge:order-2,stripe,5.00,USD,pending,2026-11-02T06:31:00Z,,
charge:order-3,stripe,7.00,USD,succeeded,2026-11-02T06:32:00Z,,
refund:order-3,stripe,2.00,USD,pending,2026-11-02T07:00:00Z,refund,charge:order-3
`

// file writes content to a file named name in a directory of the test's.
func file(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// text renders what w writes, with path shown as its base name.
func text(t *testing.T, path string, write func(*strings.Builder) error) string {
	t.Helper()
	var b strings.Builder
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(b.String(), path, filepath.Base(path))
}

// eachEngine runs fn, in parallel, on fresh books of each engine.
func eachEngine(t *testing.T, fn func(t *testing.T, store ledger.Store)) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, e.New(t))
		})
	}
}

// charges queues nothing and counts the keys it was asked to queue; a
// provider in refuse can neither charge nor refund.
type charges struct {
	refuse           string
	charged, refunds []string
}

func (c *charges) CanCharge(p string) bool { return p != c.refuse }
func (c *charges) CanRefund(p string) bool { return p != c.refuse }
func (c *charges) EnqueueChargesTx(_ context.Context, _ ledger.Tx, keys []string) (int, error) {
	c.charged = append(c.charged, keys...)
	return len(keys), nil
}
func (c *charges) EnqueueRefundsTx(_ context.Context, _ ledger.Tx, keys []string) (int, error) {
	c.refunds = append(c.refunds, keys...)
	return len(keys), nil
}

// Without charges an import queues nothing and says how to charge; with
// them, the pending charges and refunds of the file are queued, and a
// second import queues nothing again.
func TestIntentsImport(t *testing.T) {
	eachEngine(t, func(t *testing.T, store ledger.Store) {
		ctx := t.Context()
		path := file(t, "intents.csv", intentsCSV)
		im := &ingest.Intents{Store: store, Kinds: kinds, Clock: clock}
		res, err := im.Import(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, "testdata/intents.uncharged.golden", text(t, path, func(b *strings.Builder) error { return res.WriteText(b) }))

		c := &charges{}
		im.Charges = c
		res, err = im.Import(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, "testdata/intents.charged.golden", text(t, path, func(b *strings.Builder) error { return res.WriteText(b) }))
		if strings.Join(c.charged, " ") != "charge:order-1 charge:order-2" || strings.Join(c.refunds, " ") != "refund:order-3" {
			t.Fatalf("queued charges %q, refunds %q", c.charged, c.refunds)
		}
	})
}

// A pending intent whose provider cannot send it stops a charging import
// with the setting to change; nothing is imported.
func TestIntentsImportChargeRefused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store := dbtest.SQLite(t)
	path := file(t, "intents.csv", intentsCSV)
	im := &ingest.Intents{Store: store, Kinds: kinds, Clock: clock, Charges: &charges{refuse: "stripe"},
		ChargerSetting: func(p string) string { return "set providers." + p + ".charger" }}
	_, err := im.Import(ctx, path)
	if err == nil || !strings.Contains(err.Error(), `line 2: --charge: no charger is configured for provider "stripe": set providers.stripe.charger`) {
		t.Fatalf("import: got %v, want the charger refusal of line 2", err)
	}
	if _, err := store.GetIntent(ctx, "charge:order-1"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("charge:order-1 after a refused import: %v, want not found", err)
	}
}

// A row of a provider the configuration does not know is refused with its
// line and field and quarantined, as the API refuses it.
func TestIntentsImportUnknownProvider(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store := dbtest.SQLite(t)
	path := file(t, "intents.csv", "key,provider,amount,currency,status,created_at\n"+
		"charge:order-9,paypal,1.00,USD,succeeded,2026-11-02T06:30:00Z\n")
	_, err := (&ingest.Intents{Store: store, Kinds: kinds, Clock: clock}).Import(ctx, path)
	var rf *ledger.RejectedFileError
	if !errors.As(err, &rf) || len(rf.Problems) != 1 || rf.Problems[0].Line != 2 || rf.Problems[0].Field != "provider" {
		t.Fatalf("import: got %v, want line 2 refused in field provider", err)
	}
	items, err := store.ListQuarantine(ctx, "intents_csv", 10)
	if err != nil || len(items) != 1 {
		t.Fatalf("quarantine: %d item(s), %v; want 1", len(items), err)
	}
}

func TestCheckProvider(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		provider string
		ok       bool
	}{{"stripe", true}, {" MPESA ", true}, {"paypal", false}, {"", false}} {
		err := ingest.CheckProvider(kinds, c.provider)
		if (err == nil) != c.ok {
			t.Errorf("CheckProvider(%q) = %v, want ok %v", c.provider, err, c.ok)
		}
		var fe *ledger.FieldError
		if err != nil && (!errors.As(err, &fe) || fe.Field != "provider" || !strings.Contains(err.Error(), "(configured: mpesa, stripe)")) {
			t.Errorf("CheckProvider(%q) = %v, want a provider field error listing the configured ones", c.provider, err)
		}
	}
}

// A dry run prints what the import would do and writes nothing.
func TestIntentsDryRun(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store := dbtest.SQLite(t)
	path := file(t, "intents.csv", intentsCSV)
	im := &ingest.Intents{Store: store, Kinds: kinds, Clock: clock}
	got := text(t, path, func(b *strings.Builder) error { return im.DryRun(ctx, b, store, path) })
	golden.Assert(t, "testdata/intents.dryrun.golden", got)
	if _, err := store.GetIntent(ctx, "charge:order-1"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("charge:order-1 after a dry run: %v, want not found", err)
	}
}

const stripeReport = "balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,charge_id,payment_metadata[intent_key]\n" +
	"txn_1,2026-11-02 14:05:06,usd,100.00,3.20,96.80,charge,ch_1,ch_1,charge:order-1\n" +
	"txn_2,2026-11-02 15:00:00,usd,-40.00,0.00,-40.00,refund,re_1,ch_1,charge:order-1\n"

// A statement is imported once: a second import adds only what it had not
// (nothing), and its dry run then finds every transaction in the books.
func TestStatementImport(t *testing.T) {
	eachEngine(t, func(t *testing.T, store ledger.Store) {
		ctx := t.Context()
		path := file(t, "report.csv", stripeReport)
		im := &ingest.Statement{Store: store, Provider: "stripe", Parser: stripe.ReportParser{Clock: clock}, Clock: clock}
		first, err := im.Import(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		again, err := im.Import(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if first.NewTxns != 3 || again.NewTxns != 0 || again.Duplicates != first.NewSources {
			t.Fatalf("first import %+v, second %+v: want 3 new transactions, then none", first, again)
		}
		got := text(t, path, func(b *strings.Builder) error { return im.DryRun(ctx, b, store, path) })
		golden.Assert(t, "testdata/statement.dryrun.golden", got)
	})
}

// A callbacks file is delivered through the intake; delivering it again
// adds nothing and says the lines were delivered before.
func TestCallbacksImport(t *testing.T) {
	eachEngine(t, func(t *testing.T, store ledger.Store) {
		ctx := t.Context()
		body, err := os.ReadFile("../providers/mpesa/testdata/callbacks/c2b_official.json")
		if err != nil {
			t.Fatal(err)
		}
		path := file(t, "callbacks.jsonl", strings.ReplaceAll(string(body), "\n", "")+"\n")
		im := &ingest.Callbacks{Processor: &intake.Processor{Store: store, Clock: clock}, Provider: "mpesa",
			Parser: mpesa.CallbackParser{}, Clock: clock}
		var out strings.Builder
		for range 2 {
			res, err := im.Import(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			out.WriteString(text(t, path, func(b *strings.Builder) error { return res.WriteText(b) }))
		}
		golden.Assert(t, "testdata/callbacks.golden", out.String())
	})
}
