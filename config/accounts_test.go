package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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
		`providers.stripe.accounts[1].id: "acc_nope" is not a connected account id`,
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
