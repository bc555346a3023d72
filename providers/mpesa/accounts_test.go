package mpesa

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// TestC2BByShortCode: a C2B confirmation is its BusinessShortCode's
// account; one to a short code that is no account is refused naming the
// field (so it is quarantined, and a validation of it rejected); without
// accounts every payment is the default account's.
func TestC2BByShortCode(t *testing.T) {
	raw, err := os.ReadFile("testdata/callbacks/c2b_official.json") // to 600638
	if err != nil {
		t.Fatal(err)
	}
	to := func(sc string) []byte { return bytes.Replace(raw, []byte(`"600638"`), []byte(`"`+sc+`"`), 1) }
	at := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
	p := CallbackParser{Accounts: &Accounts{Default: "600638", Others: []string{"600639"}}}
	for sc, want := range map[string]string{"600638": "", "600639": "600639"} {
		ev, err := p.ParseCallbackKind(KindC2BConfirmation, to(sc), "callback:1", at)
		if err != nil || len(ev.Sightings) != 1 || ev.Sightings[0].Txn.Account != want {
			t.Fatalf("a payment to %s: %+v, %v; want account %q", sc, ev.Sightings, err, want)
		}
	}
	for _, kind := range []string{KindC2BConfirmation, KindC2BValidation} {
		var perr *ledger.ParseError
		if _, err := p.ParseCallbackKind(kind, to("600640"), "callback:2", at); !errors.As(err, &perr) || perr.Field != "BusinessShortCode" {
			t.Fatalf("%s to a short code that is no account: %v, want a parse error of BusinessShortCode", kind, err)
		}
	}
	ev, err := CallbackParser{}.ParseCallbackKind(KindC2BConfirmation, to("600640"), "callback:3", at)
	if err != nil || ev.Sightings[0].Txn.Account != "" {
		t.Fatalf("without accounts: %+v, %v", ev.Sightings, err)
	}
}
