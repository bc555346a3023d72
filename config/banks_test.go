package config

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/providers/bankaccount"
)

// TestBanksValidated: every mistake of every bank account is reported,
// each naming its key.
func TestBanksValidated(t *testing.T) {
	t.Parallel()
	_, err := parse(writeConfig(t, `banks:
  - name: Equity KES
    currency: KSH
    zone: Mars/Base
    format: pdf
    arrival_days: -1
    horizon: -1h
  - name: chase
    account: "4401234567"
    currency: USD
    format: bai2
    from:
      - provider: paypal
      - provider: stripe
      - provider: stripe
        descriptor: "STRIPE("
        shortcode: "600638"
        payout_days: 40
  - name: chase
    account: "1"
    currency: USD
    format: mt940
    from:
      - provider: stripe
        descriptor: STRIPE
      - provider: mpesa
        narrative: MPESA
        payout_days: 1
schedules:
  "bank:chase":
    cron: "@daily"
  "bank:nope":
    cron: "@daily"
`))
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		`banks[0].name: "Equity KES": want lower-case letters`,
		"banks[0].account: is empty",
		`banks[0].currency: "KSH" is not an ISO 4217 currency`,
		"banks[0].zone: unknown time zone Mars/Base",
		`banks[0].format: "pdf": want camt053, mt940, bai2`,
		"banks[0].arrival_days: -1",
		"banks[0].horizon: must be between 0",
		"banks[0].from: is empty",
		`banks[1].from[0].provider: "paypal": want stripe or mpesa`,
		"banks[1].from[1]: set descriptor, narrative or shortcode",
		"banks[1].from[2].provider: stripe is listed twice",
		`banks[1].from[2].descriptor: "STRIPE(" is not a regular expression`,
		"banks[1].from[2].shortcode: is for mpesa",
		"banks[1].from[2].payout_days: 40",
		`banks[2].name: "chase" names two accounts`,
		"banks[2].from[0].provider: stripe already pays its USD into bank:chase",
		"banks[2].from[1].payout_days: is for stripe",
		`schedules.bank:nope: no provider "bank:nope" is configured`,
	} {
		if !strings.Contains(err.Error(), "config "+want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "schedules.bank:chase") {
		t.Errorf("the schedule of a configured bank is refused:\n%v", err)
	}
}

// TestBanksAreProviders: a bank account is the provider bank:<name>, in its
// zone, reading its format, or a CSV layout of statements.
func TestBanksAreProviders(t *testing.T) {
	t.Parallel()
	cfg, err := parse(writeConfig(t, `statements:
  - provider: acme-csv
    id: Ref
    time: Date
    time_format: "2006-01-02"
    zone: Africa/Nairobi
    amount: Amount
    fixed_currency: KES
banks:
  - name: equity-kes
    account: "0100012345678"
    currency: kes
    zone: Africa/Nairobi
    format: mt940
    from:
      - provider: mpesa
        shortcode: "600638"
        narrative: "MPESA|M-PESA"
  - name: acme
    account: "1"
    currency: KES
    format: acme-csv
    arrival_days: 5
    from:
      - provider: stripe
        descriptor: stripe
`))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := cfg.DescribeProviders(time.Now)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := ps["bank:equity-kes"]
	if !ok || p.Bank == nil || p.Statement != p.Bank || p.Zone.String() != "Africa/Nairobi" || p.Bank.Currency != "KES" ||
		p.Bank.Format != bankaccount.FormatMT940 || p.Bank.Arrival() != 3 || p.Bank.Layout != nil {
		t.Fatalf("bank:equity-kes = %+v", p)
	}
	if prov, refs := p.Bank.Recognise("Funds Transfer from m-pesa 600638 SCF1AB2CD3"); prov != "mpesa" || len(refs) != 1 {
		t.Errorf("recognise: %q %q", prov, refs)
	}
	a := ps["bank:acme"].Bank
	if a == nil || a.Layout == nil || a.Arrival() != 5 || a.Sources[0].PayoutDays != bankaccount.DefaultPayoutDays {
		t.Fatalf("bank:acme = %+v", a)
	}
	if prov, _ := a.Recognise("STRIPE PAYOUT"); prov != "stripe" {
		t.Errorf("descriptor case: %q", prov)
	}
}

// TestBankOfAnAccount: a bank account names which account of a provider
// pays into it; another account of the same provider may pay the same
// currency into another bank account, and an account that is not
// configured is refused by its key.
func TestBankOfAnAccount(t *testing.T) {
	t.Parallel()
	banks := `banks:
  - name: platform
    account: "1"
    currency: USD
    format: bai2
    from:
      - provider: stripe
        descriptor: STRIPE
  - name: connected
    account: "2"
    currency: USD
    format: bai2
    from:
      - provider: stripe
        account: %s
        descriptor: STRIPE
`
	stripeCfg := `providers:
  stripe:
    accounts:
      - id: acct_1Connected
`
	cfg, err := parse(writeConfig(t, stripeCfg+fmt.Sprintf(banks, "acct_1Connected")))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := cfg.DescribeProviders(time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if got := ps["bank:connected"].Bank.Sources[0].Account; got != "acct_1Connected" || ps["bank:platform"].Bank.Sources[0].Account != "" {
		t.Errorf("sources' accounts: %q, %q", got, ps["bank:platform"].Bank.Sources[0].Account)
	}
	_, err = parse(writeConfig(t, stripeCfg+fmt.Sprintf(banks, "acct_2Unknown")))
	if err == nil || !strings.Contains(err.Error(), "config banks[1].from[0].account:") || !strings.Contains(err.Error(), "acct_2Unknown") {
		t.Errorf("an account not configured: %v", err)
	}
	_, err = parse(writeConfig(t, stripeCfg+fmt.Sprintf(banks, "default")))
	if err == nil || !strings.Contains(err.Error(), "config banks[1].from[0].provider: stripe already pays its USD into bank:platform") {
		t.Errorf("the default account into two bank accounts: %v", err)
	}
}
