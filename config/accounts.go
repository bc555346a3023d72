package config

import (
	"cmp"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/viper"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/stripe"
)

// MpesaAccount is one more paybill or till of the M-Pesa provider, beside
// the default one (providers.mpesa.short_code). Its intents, statements,
// callbacks, pulls, runs and findings are its own: they name the account by
// its short code.
//
// An account charges and pulls with the provider's credentials unless the
// environment gives it its own, named after its short code:
// RECONCILE_PROVIDERS_MPESA_ACCOUNTS_<SHORT_CODE>_CONSUMER_KEY, _CONSUMER_SECRET,
// _PASS_KEY and _PULL_NOMINATED_NUMBER.
type MpesaAccount struct {
	// ShortCode is the paybill or till number; it names the account.
	ShortCode string `mapstructure:"short_code"`
	// Name is a label for people (a branch, a shop); optional.
	Name string `mapstructure:"name"`
	// The account's own secrets, read from the environment by Load.
	ConsumerKey     string `mapstructure:"-"`
	ConsumerSecret  string `mapstructure:"-"`
	PassKey         string `mapstructure:"-"`
	NominatedNumber string `mapstructure:"-"`
}

// accountEnv is the environment variable of one secret of a provider's
// account (an M-Pesa short code, a Stripe account id).
func accountEnv(provider, id, secret string) string {
	return EnvName("providers." + provider + ".accounts." + strings.TrimSpace(id) + "." + secret)
}

// loadAccountSecrets reads each account's own secrets from the
// environment.
func (m *MpesaConfig) loadAccountSecrets() {
	for i := range m.Accounts {
		a := &m.Accounts[i]
		a.ConsumerKey = os.Getenv(accountEnv("mpesa", a.ShortCode, "consumer_key"))
		a.ConsumerSecret = os.Getenv(accountEnv("mpesa", a.ShortCode, "consumer_secret"))
		a.PassKey = os.Getenv(accountEnv("mpesa", a.ShortCode, "pass_key"))
		a.NominatedNumber = os.Getenv(accountEnv("mpesa", a.ShortCode, "pull_nominated_number"))
	}
}

// accountSecrets lists the accounts' secrets, for scrubbing.
func (m MpesaConfig) accountSecrets() []string {
	var out []string
	for _, a := range m.Accounts {
		out = append(out, a.ConsumerKey, a.ConsumerSecret, a.PassKey, a.NominatedNumber)
	}
	return out
}

// AccountSet is the accounts of the M-Pesa provider, as its callback
// parser tells them apart.
func (m MpesaConfig) AccountSet() *mpesa.Accounts {
	a := &mpesa.Accounts{Default: strings.TrimSpace(m.ShortCode)}
	for _, o := range m.Accounts {
		a.Others = append(a.Others, strings.TrimSpace(o.ShortCode))
	}
	return a
}

// AccountIDs lists the accounts beyond the default one, by short code.
func (m MpesaConfig) AccountIDs() []string {
	return m.AccountSet().Others
}

// shortCodeForm is what a paybill or till number looks like.
var shortCodeForm = regexp.MustCompile(`^[0-9]{5,8}$`)

// validateAccounts checks the M-Pesa accounts: each a short code of its
// own, and the default account's short code set beside them.
func (m MpesaConfig) validateAccounts(bad func(key, format string, args ...any)) {
	if len(m.Accounts) > 0 && strings.TrimSpace(m.ShortCode) == "" {
		bad("providers.mpesa.short_code", "is required when accounts are listed: it names the default account")
	}
	validateAccountIDs(bad, "providers.mpesa.accounts[%d].short_code", m.AccountIDs(), shortCodeForm,
		"a paybill or till number (5 to 8 digits)", strings.TrimSpace(m.ShortCode))
}

// validateAccountIDs checks the ids of a provider's accounts, whose keys
// are key with their position: each of the form form (described as what),
// none listed twice nor the default account's id (taken, when not empty).
func validateAccountIDs(bad func(key, format string, args ...any), key string, ids []string, form *regexp.Regexp, what, taken string) {
	seen := map[string]bool{}
	if taken != "" {
		seen[taken] = true
	}
	for i, id := range ids {
		switch {
		case !form.MatchString(id):
			bad(fmt.Sprintf(key, i), "%q is not %s", id, what)
		case seen[id]:
			bad(fmt.Sprintf(key, i), "%q is listed twice (or is the default account)", id)
		}
		seen[id] = true
	}
}

// accountClient is base, the default account's Daraja client
// configuration, for account a: its short code, and its own credentials
// where the environment gives them.
func accountClient(base mpesa.Config, a MpesaAccount) mpesa.Config {
	cfg := base
	cfg.ShortCode, cfg.PartyB = strings.TrimSpace(a.ShortCode), ""
	cfg.ConsumerKey, cfg.ConsumerSecret = cmp.Or(a.ConsumerKey, base.ConsumerKey), cmp.Or(a.ConsumerSecret, base.ConsumerSecret)
	cfg.PassKey = cmp.Or(a.PassKey, base.PassKey)
	return cfg
}

// buildAccountChargers builds a charger for each account (STK pushes to
// its short code; its results come back to the same callback URLs and
// are told apart by the attempt that asked).
func (m MpesaConfig) buildAccountChargers(base mpesa.Config) (map[string]providers.Charger, error) {
	out := map[string]providers.Charger{}
	for i, a := range m.Accounts {
		c, err := mpesa.NewCharger(accountClient(base, a))
		if err != nil {
			return nil, fmt.Errorf("config providers.mpesa.accounts[%d]: %w", i, err)
		}
		out[strings.TrimSpace(a.ShortCode)] = c
	}
	return out, nil
}

// buildAccountPullers builds a puller for each account, with the account's
// short code and its own credentials where the environment gives them
// (base, the default account's client configuration, otherwise).
func (m MpesaConfig) buildAccountPullers(mp *Provider, base mpesa.Config, hcfg mpesa.HandlerConfig, clock func() time.Time,
	quarantine Quarantiner) error {
	mp.AccountPullers = map[string]providers.Puller{}
	mp.AccountRegistrars = map[string]providers.PullRegistrar{}
	for i, a := range m.Accounts {
		cfg := accountClient(base, a)
		p, err := mpesa.NewPuller(cfg, mpesa.PullConfig{ShortCode: cfg.ShortCode,
			NominatedNumber: cmp.Or(a.NominatedNumber, m.Pull.NominatedNumber),
			CallbackURL:     hcfg.CallbackURL(m.Callbacks.PublicURL, "c2b/confirmation"), CallbackSecret: m.Callbacks.PathToken,
			MaxPages: m.Pull.MaxPages, OnReject: quarantine("mpesa_pull")})
		if err != nil {
			return fmt.Errorf("config providers.mpesa.accounts[%d]: %w", i, err)
		}
		mp.AccountPullers[cfg.ShortCode], mp.AccountRegistrars[cfg.ShortCode] = mpesa.RecentOnly(p, clock), p
	}
	return nil
}

// ParseAccount reads an account of the provider set up as setup, as a
// person names it (ledger.ParseAccount).
func ParseAccount(setup Provider, name string) (string, error) {
	return ledger.ParseAccount(name, setup.Accounts)
}

// AccountsOf lists, by provider, the accounts beyond the default one of
// each provider that has some.
func AccountsOf(providers map[string]Provider) map[string][]string {
	out := map[string][]string{}
	for name, p := range providers {
		if len(p.Accounts) > 0 {
			out[name] = p.Accounts
		}
	}
	return out
}

// AttemptAccounts names the providers with several accounts, whose
// results of a request take the account of the intent that made it
// (intake.Processor.AttemptAccounts).
func AttemptAccounts(providers map[string]Provider) map[string]bool {
	out := map[string]bool{}
	for name := range AccountsOf(providers) {
		out[name] = true
	}
	return out
}

// StripeAccount is a Stripe account reconciled apart from the default one
// (providers.stripe.api_key's): its charges, refunds, pulls, payouts and
// webhook events are its own.
//
// By default it is a connected account of a Connect platform, reached with
// the platform's API key on its behalf (the Stripe-Account header), and its
// webhook events come to the platform's endpoint naming it in their account
// field. A separate Stripe account (one per region, say) has its own API
// key and its own webhook endpoint, which the environment gives, named
// after its id (upper-cased): RECONCILE_PROVIDERS_STRIPE_ACCOUNTS_<ID>_API_KEY
// (then its requests are made with that key and no Stripe-Account header)
// and RECONCILE_PROVIDERS_STRIPE_ACCOUNTS_<ID>_WEBHOOK_SECRETS,
// comma-separated (then an event those secrets verify is the account's,
// and one that names another account in its account field is kept in
// quarantine). Either may be given without the other.
type StripeAccount struct {
	// ID is the account's id, acct_...; it names the account.
	ID string `mapstructure:"id"`
	// Name is a label for people (a region, a brand); optional.
	Name string `mapstructure:"name"`
	// The account's own secrets, read from the environment by Load.
	APIKey         string   `mapstructure:"-"`
	WebhookSecrets []string `mapstructure:"-"`
}

// loadAccountSecrets reads each account's own secrets from the
// environment.
func (s *StripeConfig) loadAccountSecrets() {
	for i := range s.Accounts {
		a := &s.Accounts[i]
		a.APIKey = os.Getenv(accountEnv("stripe", a.ID, "api_key"))
		a.WebhookSecrets = nil
		for w := range strings.SplitSeq(os.Getenv(accountEnv("stripe", a.ID, "webhook_secrets")), ",") {
			if w = strings.TrimSpace(w); w != "" {
				a.WebhookSecrets = append(a.WebhookSecrets, w)
			}
		}
	}
}

// accountSecrets lists the accounts' secrets, for scrubbing.
func (s StripeConfig) accountSecrets() []string {
	var out []string
	for _, a := range s.Accounts {
		out = append(append(out, a.APIKey), a.WebhookSecrets...)
	}
	return out
}

// AccountIDs lists the accounts by id.
func (s StripeConfig) AccountIDs() []string {
	var out []string
	for _, a := range s.Accounts {
		out = append(out, strings.TrimSpace(a.ID))
	}
	return out
}

// EventParser is the parser of Stripe's webhook events: the intent
// metadata key, and the accounts events are placed in.
func (s StripeConfig) EventParser() stripe.EventParser {
	return stripe.EventParser{MetadataKey: s.IntentMetadataKey, Accounts: s.AccountIDs()}
}

// WebhookAccounts lists the accounts whose own webhook endpoints sign with
// secrets of their own, with those secrets.
func (s StripeConfig) WebhookAccounts() []stripe.WebhookAccount {
	var out []stripe.WebhookAccount
	for _, a := range s.Accounts {
		if len(a.WebhookSecrets) > 0 {
			out = append(out, stripe.WebhookAccount{Account: strings.TrimSpace(a.ID), Secrets: a.WebhookSecrets})
		}
	}
	return out
}

// ServesWebhook reports whether the webhook endpoint is served: the
// platform or an account has signing secrets.
func (s StripeConfig) ServesWebhook() bool {
	return len(s.WebhookSecrets) > 0 || len(s.WebhookAccounts()) > 0
}

// stripeAccountForm is what a Stripe account's id looks like.
var stripeAccountForm = regexp.MustCompile(`^acct_[A-Za-z0-9]{1,64}$`)

// stripeKeyForm is what a secret or restricted API key looks like.
var stripeKeyForm = regexp.MustCompile(`^(sk|rk)_(live|test)_[A-Za-z0-9]+$`)

// validateAccounts checks the accounts: each an acct_ id of its own (also
// upper-cased, as their environment variables name them), and their own
// secrets: an API key that is a secret or restricted key, given with the
// default account's, and webhook signing secrets that no other account,
// nor the platform, has.
func (s StripeConfig) validateAccounts(bad func(key, format string, args ...any)) {
	ids := s.AccountIDs()
	validateAccountIDs(bad, "providers.stripe.accounts[%d].id", ids, stripeAccountForm, "a Stripe account id (acct_...)", "")
	platform := EnvName("providers.stripe.webhook_secrets")
	holder, upper := map[string]string{}, map[string]int{}
	for _, w := range s.WebhookSecrets {
		holder[w] = platform
	}
	for i, a := range s.Accounts {
		id := ids[i]
		if j, ok := upper[strings.ToUpper(id)]; ok && ids[j] != id {
			bad(fmt.Sprintf("providers.stripe.accounts[%d].id", i), "%q differs from accounts[%d] only in case, so both "+
				"would read the same environment variables", id, j)
		}
		upper[strings.ToUpper(id)] = i
		keyEnv := accountEnv("stripe", id, "api_key")
		switch k := a.APIKey; {
		case k == "":
		case strings.HasPrefix(k, "pk_"):
			bad(keyEnv, "is a publishable key (pk_...): set the account's secret key (sk_...) or a restricted key (rk_...)")
		case !stripeKeyForm.MatchString(k):
			bad(keyEnv, "is not a Stripe secret key (sk_live_..., sk_test_...) or restricted key (rk_...)")
		case s.APIKey == "":
			bad(keyEnv, "needs %s, the default account's key, as well: a run of stripe pulls every account",
				EnvName("providers.stripe.api_key"))
		}
		secretsEnv := accountEnv("stripe", id, "webhook_secrets")
		for _, w := range a.WebhookSecrets {
			switch h := holder[w]; {
			case !strings.HasPrefix(w, "whsec_"):
				bad(secretsEnv, "holds a value that is not a webhook signing secret (whsec_...)")
			case h != "" && h != secretsEnv:
				bad(secretsEnv, "holds a signing secret that %s holds too: the events it verifies could not be placed", h)
			}
			holder[w] = secretsEnv
		}
	}
}

// buildAccounts builds, for each account, its client: with its own API key
// when it has one, otherwise with base's (the platform's) on its behalf;
// and from the client its charger, puller and payout puller.
func (s StripeConfig) buildAccounts(sp *Provider, base stripe.Config) error {
	sp.AccountChargers, sp.AccountPullers = map[string]providers.Charger{}, map[string]providers.Puller{}
	sp.AccountPayoutPullers = map[string]providers.PayoutPuller{}
	for i, a := range s.Accounts {
		id := strings.TrimSpace(a.ID)
		cfg := base
		if a.APIKey != "" {
			cfg.APIKey = a.APIKey
		} else {
			cfg.Account = id
		}
		cl, err := stripe.New(cfg)
		if err != nil {
			return fmt.Errorf("config providers.stripe.accounts[%d]: %w", i, err)
		}
		sp.AccountChargers[id], sp.AccountPullers[id], sp.AccountPayoutPullers[id] = cl, cl, cl
	}
	return nil
}

// accountSecretsInFile refuses an account's secret written in the config
// file: like the other secrets, it is read only from the environment, from
// a variable named after the account.
func accountSecretsInFile(v *viper.Viper) error {
	for _, list := range []struct {
		provider, id string
		secrets      []string
	}{
		{"mpesa", "short_code", []string{"consumer_key", "consumer_secret", "pass_key", "pull_nominated_number"}},
		{"stripe", "id", []string{"api_key", "webhook_secrets"}},
	} {
		key := "providers." + list.provider + ".accounts"
		if !v.InConfig(key) {
			continue
		}
		items, _ := v.Get(key).([]any)
		for i, item := range items {
			fields, _ := item.(map[string]any)
			id := "<" + strings.ToUpper(list.id) + ">"
			for k, val := range fields {
				if strings.EqualFold(k, list.id) && fmt.Sprint(val) != "" {
					id = fmt.Sprint(val)
				}
			}
			for _, secret := range list.secrets {
				for k := range fields {
					if strings.EqualFold(k, secret) {
						return fmt.Errorf("config %s: %s[%d].%s is a secret and is read only from the environment (%s)",
							v.ConfigFileUsed(), key, i, secret, accountEnv(list.provider, id, secret))
					}
				}
			}
		}
	}
	return nil
}
