package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers/bankaccount"
	"github.com/reconcilehq/reconcile/providers/csvfile"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/stripe"
)

// BankConfig is one bank account, a provider of its own named bank:<name>:
// its statements are imported with `reconcile import statement --provider
// bank:<name>` and its runs match the payouts of the providers that pay
// into it to its credits.
type BankConfig struct {
	// Name is the account's name: lower-case letters, digits and dashes.
	Name string `mapstructure:"name"`
	// Account is the IBAN or account number statements must be of.
	Account string `mapstructure:"account"`
	// Currency is the account's ISO 4217 currency.
	Currency string `mapstructure:"currency"`
	// Zone is the bank's IANA zone: its days, and the windows of its runs,
	// start at midnight there. Default UTC.
	Zone string `mapstructure:"zone"`
	// Format is camt053, mt940, bai2, or the provider name of a CSV layout
	// under statements.
	Format string `mapstructure:"format"`
	// ArrivalDays is how many business days after its expected arrival a
	// payout may reach the account before it is missing; default 3.
	ArrivalDays int `mapstructure:"arrival_days"`
	// Horizon is how far each way from its window a run looks for a payout
	// or credit of another window; default 840h (35 days).
	Horizon time.Duration `mapstructure:"horizon"`
	// From lists the providers that pay into the account.
	From []BankSourceConfig `mapstructure:"from"`
}

// BankSourceConfig is a provider that pays into a bank account and the
// patterns (regular expressions, case aside) its credits are recognised by.
type BankSourceConfig struct {
	// Provider is stripe or mpesa.
	Provider string `mapstructure:"provider"`
	// Account is the provider account whose payouts reach this bank
	// account (and are pulled through that account's client before a run):
	// a Stripe account (providers.stripe.accounts) or an M-Pesa paybill
	// (providers.mpesa.accounts); default the provider's own.
	Account string `mapstructure:"account"`
	// Descriptor matches the text of its credits, e.g. "STRIPE".
	Descriptor string `mapstructure:"descriptor"`
	// ShortCode is the paybill an M-Pesa settlement's text names.
	ShortCode string `mapstructure:"shortcode"`
	// Narrative matches the text of an M-Pesa settlement, e.g. "MPESA|M-PESA".
	Narrative string `mapstructure:"narrative"`
	// Reference finds the payout's reference in a credit's text; default a
	// Stripe payout id (po_...) or an M-Pesa receipt.
	Reference string `mapstructure:"reference"`
	// PayoutDays is how many business days after a Stripe charge it is paid
	// out; default 2.
	PayoutDays int `mapstructure:"payout_days"`
}

// bankName is what a bank's name may be: it is part of a provider name,
// of schedule keys and of URLs.
var bankName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,40}$`)

// validateBanks checks every bank account and names each mistake by its
// key: banks[i].field.
func (c Config) validateBanks() []error {
	var k checker
	names := map[string]bool{}
	layouts := map[string]bool{}
	for _, m := range c.Statements {
		layouts[statementName(m)] = true
	}
	// A provider account pays into one bank account per currency: its
	// payouts in that currency go there.
	payee := map[string]string{}
	accounts := map[string][]string{stripe.Provider: c.Providers.Stripe.AccountIDs(), mpesa.Provider: c.Providers.Mpesa.AccountIDs()}
	for i, b := range c.Banks {
		key := fmt.Sprintf("banks[%d]", i)
		cur, err := k.bankAccount(key, b, names, layouts)
		k.bankSources(key, b, cur, err == nil, payee, accounts)
	}
	return k.errs
}

// bankAccount checks one account's own fields (name, account, currency,
// zone, format, arrival days, horizon) and records its name in names. It
// returns the account's currency normalised, and the error of a bad one.
func (k *checker) bankAccount(key string, b BankConfig, names, layouts map[string]bool) (string, error) {
	switch {
	case !bankName.MatchString(b.Name):
		k.bad(key+".name", "%q: want lower-case letters, digits and dashes (the provider is bank:<name>)", b.Name)
	case names[b.Name]:
		k.bad(key+".name", "%q names two accounts", b.Name)
	}
	names[b.Name] = true
	if strings.TrimSpace(b.Account) == "" {
		k.bad(key+".account", "is empty: the IBAN or number statements must be of")
	}
	cur, err := money.NormalizeCurrency(b.Currency)
	if err != nil || b.Currency == "" {
		k.bad(key+".currency", "%q is not an ISO 4217 currency", b.Currency)
	}
	if _, err := LoadZone(b.Zone); err != nil {
		k.bad(key+".zone", "%v", err)
	}
	if !slices.Contains(bankaccount.Formats, b.Format) && !layouts[strings.ToLower(b.Format)] {
		k.bad(key+".format", "%q: want %s, or the provider of a layout under statements", b.Format,
			strings.Join(bankaccount.Formats, ", "))
	}
	if b.ArrivalDays < 0 || b.ArrivalDays > 30 {
		k.bad(key+".arrival_days", "%d: want 0 (the default, 3) to 30 business days", b.ArrivalDays)
	}
	if b.Horizon < 0 || b.Horizon > MaxHorizon {
		k.bad(key+".horizon", "must be between 0 (the default) and %s", formatDuration(MaxHorizon))
	}
	return cur, err
}

// bankSources checks the providers that pay into one account: each known
// and listed once, paying a currency into one account only (payee, when
// the account's currency is valid), with patterns that compile and the
// fields of its provider.
func (k *checker) bankSources(key string, b BankConfig, cur string, curOK bool, payee map[string]string, accounts map[string][]string) {
	if len(b.From) == 0 {
		k.bad(key+".from", "is empty: name the providers that pay into the account (stripe, mpesa)")
	}
	seen := map[string]bool{}
	for j, s := range b.From {
		sk := fmt.Sprintf("%s.from[%d]", key, j)
		switch s.Provider {
		case stripe.Provider, mpesa.Provider:
		default:
			k.bad(sk+".provider", "%q: want stripe or mpesa", s.Provider)
			continue
		}
		account, err := ledger.ParseAccount(s.Account, accounts[s.Provider])
		if err != nil {
			k.bad(sk+".account", "%v", err)
		}
		scope := ledger.Scope(s.Provider, account)
		if seen[s.Provider] {
			k.bad(sk+".provider", "%s is listed twice: a bank account is paid by one account of a provider", s.Provider)
		}
		seen[s.Provider] = true
		if other, ok := payee[scope+" "+cur]; ok && curOK {
			k.bad(sk+".provider", "%s already pays its %s into bank:%s", scope, cur, other)
		} else if curOK {
			payee[scope+" "+cur] = b.Name
		}
		for _, p := range []struct{ name, re string }{{"descriptor", s.Descriptor}, {"narrative", s.Narrative}, {"reference", s.Reference}} {
			if _, err := regexp.Compile(p.re); p.re != "" && err != nil {
				k.bad(sk+"."+p.name, "%q is not a regular expression: %v", p.re, err)
			}
		}
		if s.Descriptor == "" && s.Narrative == "" && s.ShortCode == "" {
			k.bad(sk, "set descriptor, narrative or shortcode: how the account's statement shows %s's credits", s.Provider)
		}
		if s.ShortCode != "" && s.Provider != mpesa.Provider {
			k.bad(sk+".shortcode", "is for mpesa")
		}
		if s.PayoutDays < 0 || s.PayoutDays > 30 {
			k.bad(sk+".payout_days", "%d: want 0 (the default, 2 for stripe) to 30 business days", s.PayoutDays)
		}
		if s.PayoutDays != 0 && s.Provider != stripe.Provider {
			k.bad(sk+".payout_days", "is for stripe, whose charges are paid out one by one")
		}
	}
}

// compilePattern compiles a configured pattern case-insensitively; nil for
// an empty one.
func compilePattern(re string) *regexp.Regexp {
	if re == "" {
		return nil
	}
	return regexp.MustCompile("(?i)" + re) // validated
}

// Account is the bank account b as package bankaccount takes it, reading a
// CSV layout through layout when its format names one.
func (b BankConfig) account(layout *csvfile.Parser, clock func() time.Time) *bankaccount.Account {
	z, _ := LoadZone(b.Zone)
	cur, _ := money.NormalizeCurrency(b.Currency)
	a := &bankaccount.Account{Name: b.Name, Number: b.Account, Currency: cur, Zone: z, Format: b.Format,
		ArrivalDays: b.ArrivalDays, Horizon: b.Horizon, Clock: clock}
	if layout != nil {
		a.Layout = layout
	}
	for _, s := range b.From {
		account, _ := ledger.ParseAccount(s.Account, []string{s.Account}) // validated
		src := bankaccount.Source{Provider: s.Provider, Account: account, Descriptor: compilePattern(s.Descriptor), ShortCode: s.ShortCode,
			Narrative: compilePattern(s.Narrative), PayoutDays: s.PayoutDays}
		if s.Reference != "" {
			src.Reference = regexp.MustCompile(s.Reference) // validated; references keep their case
		}
		if s.Provider == stripe.Provider && src.PayoutDays == 0 {
			src.PayoutDays = bankaccount.DefaultPayoutDays
		}
		a.Sources = append(a.Sources, src)
	}
	return a
}

// describeBanks adds the bank accounts to the providers, by provider name
// (bank:<name>).
func (c Config) describeBanks(out map[string]Provider, clock func() time.Time) error {
	for i, b := range c.Banks {
		var layout *csvfile.Parser
		if !slices.Contains(bankaccount.Formats, b.Format) {
			for _, m := range c.Statements {
				if statementName(m) == strings.ToLower(b.Format) {
					p, err := csvfile.NewParser(m, clock)
					if err != nil {
						return fmt.Errorf("config banks[%d].format: %w", i, err)
					}
					layout = p
				}
			}
		}
		a := b.account(layout, clock)
		_, fromStripe := a.Source(stripe.Provider)
		out[a.Provider()] = Provider{Zone: a.Location(), Grace: 0, Horizon: a.HorizonOrDefault(), IntentKind: ledger.IntentCharge,
			Statement: a, Bank: a, Pulled: fromStripe && c.Providers.Stripe.APIKey != ""}
	}
	return nil
}
