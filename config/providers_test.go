package config

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
)

// TestMpesaRefundWiring: with an initiator and its credential configured,
// the M-Pesa charger refunds by reversal with result URLs under the callback
// path token; an initiator without a credential (or the reverse) is a
// configuration error.
func TestMpesaRefundWiring(t *testing.T) {
	t.Parallel()
	fake := mpesafake.New(mpesafake.Config{Seed: 5})
	base := fake.Start()
	defer fake.Close()
	short, pass, key, secret := fake.Credentials()
	initiator, credential := fake.InitiatorCredentials()
	token := strings.Repeat("a", 32)
	cfg := Default()
	cfg.Providers.Mpesa = MpesaConfig{Zone: "Africa/Nairobi", BaseURL: base, ShortCode: short, ConsumerKey: key,
		ConsumerSecret: secret, PassKey: pass, HTTPTimeout: 5 * time.Second, Initiator: initiator, SecurityCredential: credential,
		Callbacks: MpesaCallbacksConfig{PublicURL: "https://pay.example.com", PathToken: token, Prefix: "/daraja"}}
	setups, err := cfg.BuildProviders(time.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := setups["mpesa"].Charger.(providers.Refunder)
	if !ok {
		t.Fatal("the M-Pesa charger cannot refund")
	}
	if _, ok := setups["mpesa"].Charger.(providers.RefundStatusQuerier); !ok {
		t.Fatal("the M-Pesa charger cannot ask about a refund")
	}
	ctx := context.Background()
	pay, _, err := fake.AddC2B(ctx, mpesafake.C2BPayment{Amount: "10.00", BillRef: "INV-1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	amt, _ := money.Parse("10", "KES")
	res, err := r.Refund(ctx, providers.RefundRequest{RefundKey: "refund:inv-1:1", ChargeTxnID: pay.TransID, Amount: amt, Attempt: 1})
	if err != nil || res.Status != providers.StatusPending {
		t.Fatalf("refund = %+v, %v", res, err)
	}
	revs := fake.Reversals()
	if len(revs) != 1 || revs[0].ResultURL != "https://pay.example.com/daraja/"+token+"/reversal/result" ||
		revs[0].TimeoutURL != "https://pay.example.com/daraja/"+token+"/reversal/timeout" || !revs[0].CredentialOK {
		t.Errorf("reversal = %+v", revs)
	}

	cfg.Providers.Mpesa.SecurityCredential = ""
	if _, err := cfg.BuildProviders(time.Now, nil); err == nil || !strings.Contains(err.Error(), "RECONCILE_PROVIDERS_MPESA_SECURITY_CREDENTIAL") {
		t.Errorf("initiator without credential: %v", err)
	}
}

// QuarantineTo keeps what a pull refused once, under its source, with the
// file, line, field and reason of the refusal.
func TestQuarantineToKeepsOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store := dbtest.SQLite(t)
	at := time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC)
	keep := QuarantineTo(store, func() time.Time { return at })("mpesa_pull")
	perr := &ledger.ParseError{File: "pull 2026-11-02", Line: 3, Field: "amount", Err: errors.New("not a number")}
	for range 2 {
		if err := keep(ctx, perr, []byte(`{"amount":"x"}`)); err != nil {
			t.Fatal(err)
		}
	}
	items, err := store.ListQuarantine(ctx, "mpesa_pull", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 {
		t.Fatalf("kept %d item(s), want 1", len(items))
	}
	q := items[0]
	if q.Origin != perr.File || q.Line != 3 || q.Field != "amount" || q.Reason != "not a number" || !q.At.Equal(at) {
		t.Fatalf("kept %+v", q)
	}
}

// Registering for pulling is refused, with the setting to change, for a
// provider that is not pulled, needs no registration or lacks a setting.
func TestRegisterForPullingRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		p    Provider
		want string
	}{
		{"mpesa", Provider{}, "set providers.mpesa.pull.enabled"},
		{"stripe", Provider{}, "stripe needs no registration for pulling"},
		{"mpesa", Provider{Registrar: noRegistrar{}, RegistrarSetting: "providers.mpesa.callbacks.public_url"},
			"registering for pulling needs providers.mpesa.callbacks.public_url"},
	} {
		_, _, err := c.p.RegisterForPulling(t.Context(), c.name, "", nil, "cli:ops", false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// noRegistrar must never be asked.
type noRegistrar struct{ providers.PullRegistrar }

// Chargers and CallbackParsers list only the providers that have one.
func TestChargersAndCallbackParsers(t *testing.T) {
	t.Parallel()
	cfg := Default()
	setups, err := cfg.DescribeProviders(time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if got := Chargers(setups); len(got) != 0 {
		t.Errorf("chargers described without credentials: %v", got)
	}
	parsers := CallbackParsers(setups)
	for name, p := range setups {
		if _, ok := parsers[name]; ok != (p.Callbacks != nil) {
			t.Errorf("%s: listed %v, has callbacks %v", name, ok, p.Callbacks != nil)
		}
	}
	if _, ok := parsers["mpesa"]; !ok {
		t.Errorf("mpesa's callback parser is not listed: %v", parsers)
	}
}

// TestCheckPull: a run that must pull evidence it cannot pull is refused,
// naming the setting; one that only matches what is stored is not.
func TestCheckPull(t *testing.T) {
	t.Parallel()
	unset := Provider{PullSetting: "RECONCILE_PROVIDERS_STRIPE_API_KEY"}
	err := unset.CheckPull("stripe", false)
	if err == nil || !strings.Contains(err.Error(), "run --provider stripe: its evidence cannot be pulled: set RECONCILE_PROVIDERS_STRIPE_API_KEY") {
		t.Errorf("a pull without its key: %v", err)
	}
	if err := unset.CheckPull("stripe", true); err != nil {
		t.Errorf("matching what is stored: %v", err)
	}
	if err := (Provider{Pulled: true, PullSetting: "X"}).CheckPull("stripe", false); err != nil {
		t.Errorf("a pull that can be made: %v", err)
	}
	if err := (Provider{}).CheckPull("mpesa", false); err != nil {
		t.Errorf("a provider that needs no pull: %v", err)
	}
}
