package config

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
)

// TestAccountsValidate: each mistake in the accounts is named by its key,
// and a good list passes.
func TestAccountsValidate(t *testing.T) {
	cfg := Default()
	cfg.Providers.Mpesa.Accounts = []MpesaAccount{{ShortCode: "600639"}, {ShortCode: "60x"}, {ShortCode: "600639"}}
	cfg.Providers.Stripe.Accounts = []StripeAccount{{ID: "acct_1Kenya"}, {ID: "acc_nope"}, {ID: "acct_1Kenya"}}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("bad accounts validated")
	}
	for _, want := range []string{
		"providers.mpesa.short_code: is required when accounts are listed",
		`providers.mpesa.accounts[1].short_code: "60x" is not a paybill or till number`,
		`providers.mpesa.accounts[2].short_code: "600639" is listed twice`,
		`providers.stripe.accounts[1].id: "acc_nope" is not a Stripe account id`,
		`providers.stripe.accounts[2].id: "acct_1Kenya" is listed twice`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	cfg.Providers.Mpesa.ShortCode = "600638"
	cfg.Providers.Mpesa.Accounts = []MpesaAccount{{ShortCode: "600639"}, {ShortCode: "600640"}}
	cfg.Providers.Stripe.Accounts = []StripeAccount{{ID: "acct_1Kenya"}}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("good accounts: %v", err)
	}
	setups, err := cfg.DescribeProviders(time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if got := setups["mpesa"].Accounts; !slices.Equal(got, []string{"600639", "600640"}) {
		t.Errorf("mpesa accounts %v", got)
	}
	for name, want := range map[string]string{"": "", "default": "", "600640": "600640"} {
		if got, err := ParseAccount(setups["mpesa"], name); err != nil || got != want {
			t.Errorf("ParseAccount(%q) = %q, %v", name, got, err)
		}
	}
	if _, err := ParseAccount(setups["mpesa"], "600641"); err == nil || !strings.Contains(err.Error(), "default, 600639, 600640") {
		t.Errorf("an unknown account: %v", err)
	}
	if got := setups["stripe"].Accounts; !slices.Equal(got, []string{"acct_1Kenya"}) {
		t.Errorf("stripe accounts %v", got)
	}
}

// TestAccountSecretsFromTheEnvironment: an account's own credentials come
// from variables named after its short code, never from the file, and are
// among the values scrubbed from errors.
func TestAccountSecretsFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte("providers:\n  mpesa:\n    short_code: \"600638\"\n    accounts:\n      - short_code: \"600639\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RECONCILE_PROVIDERS_MPESA_ACCOUNTS_600639_CONSUMER_KEY", "branch-key-123")
	t.Setenv("RECONCILE_PROVIDERS_MPESA_ACCOUNTS_600639_PASS_KEY", "branch-pass-456")
	cfg, err := Load(Source{File: file})
	if err != nil {
		t.Fatal(err)
	}
	accts := cfg.Providers.Mpesa.Accounts
	if len(accts) != 1 || accts[0].ShortCode != "600639" {
		t.Fatalf("accounts %+v", accts)
	}
	a := accts[0]
	if a.ConsumerKey != "branch-key-123" || a.PassKey != "branch-pass-456" || a.ConsumerSecret != "" {
		t.Fatalf("account %+v", a)
	}
	secrets := cfg.SecretValues()
	for _, s := range []string{"branch-key-123", "branch-pass-456"} {
		if !slices.Contains(secrets, s) {
			t.Errorf("%s is not scrubbed", s)
		}
	}
	if err := os.WriteFile(file, []byte("providers:\n  mpesa:\n    short_code: \"600638\"\n    accounts:\n      - short_code: \"600639\"\n        consumer_key: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(Source{File: file}); err == nil {
		t.Fatal("an account's secret in the file was accepted")
	}
}

// stripeAccountsFile lists two Stripe accounts, acct_1Ghana and
// acct_1Kenya, with fields (indented under the first) of its own.
func stripeAccountsFile(t *testing.T, fields string) string {
	t.Helper()
	return writeConfig(t, "providers:\n  stripe:\n    accounts:\n      - id: acct_1Ghana\n"+fields+"      - id: acct_1Kenya\n")
}

// TestStripeAccountSecretsFromTheEnvironment: a Stripe account's own API
// key and webhook secrets come from variables named after its id
// (upper-cased), never from the file, and are among the values scrubbed
// from errors; only an account with secrets of its own has its own
// webhook signer.
func TestStripeAccountSecretsFromTheEnvironment(t *testing.T) {
	t.Setenv("RECONCILE_PROVIDERS_STRIPE_API_KEY", "sk_test_platform0001")
	t.Setenv("RECONCILE_PROVIDERS_STRIPE_ACCOUNTS_ACCT_1GHANA_API_KEY", "sk_test_ghana0001")
	t.Setenv("RECONCILE_PROVIDERS_STRIPE_ACCOUNTS_ACCT_1GHANA_WEBHOOK_SECRETS", "whsec_ghana0001, whsec_ghana0002")
	cfg := load(t, stripeAccountsFile(t, ""))
	accts := cfg.Providers.Stripe.Accounts
	if len(accts) != 2 || accts[0].APIKey != "sk_test_ghana0001" ||
		!slices.Equal(accts[0].WebhookSecrets, []string{"whsec_ghana0001", "whsec_ghana0002"}) ||
		accts[1].APIKey != "" || accts[1].WebhookSecrets != nil {
		t.Fatalf("accounts %+v", accts)
	}
	msg := cfg.Redact("key sk_test_ghana0001, secrets whsec_ghana0001 and whsec_ghana0002")
	if strings.Contains(msg, "ghana") {
		t.Errorf("not scrubbed: %s", msg)
	}
	w := cfg.Providers.Stripe.WebhookAccounts()
	if len(w) != 1 || w[0].Account != "acct_1Ghana" || len(w[0].Secrets) != 2 || !cfg.Providers.Stripe.ServesWebhook() {
		t.Errorf("webhook accounts %+v", w)
	}
	if p := cfg.Providers.Stripe.EventParser(); !slices.Equal(p.Accounts, []string{"acct_1Ghana", "acct_1Kenya"}) ||
		p.MetadataKey != cfg.Providers.Stripe.IntentMetadataKey {
		t.Errorf("event parser %+v", p)
	}
	for field, env := range map[string]string{
		"        api_key: sk_test_infile0001\n":         "RECONCILE_PROVIDERS_STRIPE_ACCOUNTS_ACCT_1GHANA_API_KEY",
		"        webhook_secrets: [whsec_infile0001]\n": "RECONCILE_PROVIDERS_STRIPE_ACCOUNTS_ACCT_1GHANA_WEBHOOK_SECRETS",
	} {
		_, err := Load(Source{File: stripeAccountsFile(t, field)})
		if err == nil || !strings.Contains(err.Error(), "is a secret and is read only from the environment ("+env+")") ||
			strings.Contains(err.Error(), "infile") {
			t.Errorf("%q in the file: %v", strings.TrimSpace(field), err)
		}
	}
}

// TestStripeAccountSecretsValidated: each mistake in an account's own
// secrets is named by its environment variable, never showing the value;
// an account with webhook secrets and no key of its own is fine.
func TestStripeAccountSecretsValidated(t *testing.T) {
	t.Parallel()
	const keyEnv, secretsEnv = "RECONCILE_PROVIDERS_STRIPE_ACCOUNTS_ACCT_1GHANA_API_KEY",
		"RECONCILE_PROVIDERS_STRIPE_ACCOUNTS_ACCT_1GHANA_WEBHOOK_SECRETS"
	for _, c := range []struct {
		name     string
		platform string
		ghana    StripeAccount
		other    string // a second account's id
		want     string // "" when valid
	}{
		{"own key", "sk_test_platform01", StripeAccount{APIKey: "sk_live_ghana01"}, "", ""},
		{"restricted key", "sk_test_platform01", StripeAccount{APIKey: "rk_test_ghana01"}, "", ""},
		{"webhook secrets without a key", "", StripeAccount{WebhookSecrets: []string{"whsec_ghana01"}}, "", ""},
		{"publishable key", "sk_test_platform01", StripeAccount{APIKey: "pk_live_ghana01"}, "", keyEnv + ": is a publishable key"},
		{"malformed key", "sk_test_platform01", StripeAccount{APIKey: "ghana01 "}, "", keyEnv + ": is not a Stripe secret key"},
		{"own key without the platform's", "", StripeAccount{APIKey: "sk_test_ghana01"}, "",
			keyEnv + ": needs RECONCILE_PROVIDERS_STRIPE_API_KEY"},
		{"not a signing secret", "", StripeAccount{WebhookSecrets: []string{"sk_test_ghana01"}}, "",
			secretsEnv + ": holds a value that is not a webhook signing secret"},
		{"the platform's signing secret", "", StripeAccount{WebhookSecrets: []string{"whsec_platform01"}}, "",
			secretsEnv + ": holds a signing secret that RECONCILE_PROVIDERS_STRIPE_WEBHOOK_SECRETS holds too"},
		{"ids apart only by case", "", StripeAccount{}, "acct_1GHANA", "providers.stripe.accounts[1].id: \"acct_1GHANA\" differs from accounts[0] only in case"},
	} {
		cfg := Default()
		s := &cfg.Providers.Stripe
		s.APIKey, s.WebhookSecrets = c.platform, []string{"whsec_platform01"}
		c.ghana.ID = "acct_1Ghana"
		s.Accounts = []StripeAccount{c.ghana}
		if c.other != "" {
			s.Accounts = append(s.Accounts, StripeAccount{ID: c.other})
		}
		err := cfg.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), "config "+c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		case err != nil && strings.Contains(err.Error(), "ghana01"):
			t.Errorf("%s: the error shows the secret: %v", c.name, err)
		}
	}
}

// TestStripeAccountClients: against a fake Stripe, an account with a key
// of its own pulls, charges and pulls payouts with that key and no
// Stripe-Account header; a connected account with the platform's key on
// its behalf; the default account with the platform's key alone.
func TestStripeAccountClients(t *testing.T) {
	t.Parallel()
	fake := stripefake.New(nil)
	url := fake.Start()
	t.Cleanup(fake.Close)
	cfg := Default()
	s := &cfg.Providers.Stripe
	s.APIKey, s.BaseURL, s.PaymentMethod = "sk_test_platform01", url, stripefake.PaymentMethodVisa
	s.Accounts = []StripeAccount{{ID: "acct_1Ghana", APIKey: "sk_test_ghana01"}, {ID: "acct_1Kenya"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	setups, err := cfg.BuildProviders(time.Now, func(string) func(context.Context, *ledger.ParseError, []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	sp := setups["stripe"]
	ctx := context.Background()
	now := time.Now()
	usd, err := money.Parse("10.00", "USD")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		account, key, header string
		charger              providers.Charger
		puller               providers.Puller
		payouts              providers.PayoutPuller
	}{
		{"acct_1Ghana", "sk_test_ghana01", "", sp.AccountChargers["acct_1Ghana"], sp.AccountPullers["acct_1Ghana"],
			sp.AccountPayoutPullers["acct_1Ghana"]},
		{"acct_1Kenya", "sk_test_platform01", "acct_1Kenya", sp.AccountChargers["acct_1Kenya"], sp.AccountPullers["acct_1Kenya"],
			sp.AccountPayoutPullers["acct_1Kenya"]},
		{"", "sk_test_platform01", "", sp.Charger, sp.Puller, sp.PayoutPuller},
	} {
		if c.charger == nil || c.puller == nil || c.payouts == nil {
			t.Fatalf("account %q: clients missing", c.account)
		}
		before := len(fake.Requests())
		if _, err := c.charger.Charge(ctx, providers.ChargeRequest{IntentKey: "charge:" + c.account, Amount: usd, Attempt: 1}); err != nil {
			t.Fatal(err)
		}
		if err := c.puller.Pull(ctx, now.Add(-time.Hour), now.Add(time.Hour), func(providers.Sighting) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := c.payouts.PullPayouts(ctx, now.Add(-time.Hour), now.Add(time.Hour), func(providers.Sighting) error { return nil }); err != nil {
			t.Fatal(err)
		}
		reqs := fake.Requests()[before:]
		paths := map[string]bool{}
		for _, r := range reqs {
			paths[r.Path] = true
			if r.APIKey != c.key || r.Account != c.header {
				t.Errorf("account %q: %s %s made with key %q and Stripe-Account %q, want %q and %q", c.account, r.Method, r.Path,
					r.APIKey, r.Account, c.key, c.header)
			}
		}
		if !paths["/v1/payment_intents"] || !paths["/v1/charges"] || !paths["/v1/payouts"] {
			t.Errorf("account %q: requests %v", c.account, slices.Sorted(maps.Keys(paths)))
		}
	}
}
