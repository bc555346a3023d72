package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/report"
)

func kesAmount(t *testing.T, s string) money.Amount {
	t.Helper()
	a, err := money.Parse(s, "KES")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// An intent's corrections and what each correction says, as a person
// reads them; a hostile key or note stays on its line.
func TestWriteIntent(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC)
	in := ledger.Intent{IntentParams: ledger.IntentParams{Key: "inv:cents\nforged line", Kind: ledger.IntentExpected, Provider: "mpesa",
		Amount: kesAmount(t, "1500"), Reference: "INV8"}, State: ledger.StateSucceeded, CreatedAt: at, UpdatedAt: at.Add(time.Hour)}
	amended := ledger.IntentChange{IntentKey: in.Key, Action: ledger.IntentAmended, OldAmount: kesAmount(t, "150000"),
		NewAmount: in.Amount, Actor: "ops@example.com", Surface: ledger.SurfaceCLI, Note: "imported in cents", At: at.Add(time.Hour)}
	voided := ledger.IntentChange{IntentKey: in.Key, Action: ledger.IntentVoided, OldState: ledger.StatePending,
		NewState: ledger.StateFailed, Actor: "ops@example.com", Surface: ledger.SurfaceWeb, Note: "duplicate\trow", At: at.Add(2 * time.Hour)}
	var b strings.Builder
	for _, write := range []func() error{
		func() error { return report.WriteIntent(&b, in, nil) },
		func() error { return report.WriteIntent(&b, in, []ledger.IntentChange{amended, voided}) },
		func() error { return report.WriteIntentChange(&b, in, amended) },
		func() error {
			v := in
			v.State = ledger.StateFailed
			return report.WriteIntentChange(&b, v, voided)
		},
	} {
		if err := write(); err != nil {
			t.Fatal(err)
		}
		b.WriteString("--\n")
	}
	golden.Assert(t, "testdata/intent.text.golden", b.String())
}

// What registering for pulling says: the provider's answer, or the
// registration the books hold, in the provider's zone.
func TestWriteRegistration(t *testing.T) {
	t.Parallel()
	nairobi, err := time.LoadLocation("Africa/Nairobi")
	if err != nil {
		t.Fatal(err)
	}
	reg := ledger.PullRegistration{Provider: "mpesa", ShortCode: "600000", RegisteredAt: time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC),
		By: "cli:ops", CallbackURL: "https://pay.example.com/daraja/xxxxx/pull", NominatedNumber: "2547****0000", ResponseRef: "ref-1",
		Status: "0", Description: "Success"}
	var b strings.Builder
	for _, asked := range []bool{true, false} {
		if err := report.WriteRegistration(&b, "mpesa", reg, asked, nairobi); err != nil {
			t.Fatal(err)
		}
	}
	golden.Assert(t, "testdata/registration.text.golden", b.String())
}
