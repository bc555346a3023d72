package bankaccount

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// Statement formats an account's statements come in. A CSV layout is named
// by its provider name instead.
const (
	FormatCamt053 = "camt053"
	FormatMT940   = "mt940"
	FormatBAI2    = "bai2"
)

// Formats lists the statement formats read by providers/bank.
var Formats = []string{FormatCamt053, FormatMT940, FormatBAI2}

// Defaults of an account.
const (
	// DefaultArrivalDays is how many business days after its expected
	// arrival a payout may reach the bank before it is missing.
	DefaultArrivalDays = 3
	// DefaultPayoutDays is how many business days after a Stripe charge
	// its payout is made (Stripe's standard schedule).
	DefaultPayoutDays = 2
	// DefaultHorizon is how far each way from its window a bank run looks
	// for a payout or a credit that arrived in another window.
	DefaultHorizon = 35 * 24 * time.Hour
)

// DefaultReferences are the patterns that find a payout's reference in a
// credit's text, by provider: a Stripe payout id, an M-Pesa receipt (ten
// capitals and digits, with a digit).
var DefaultReferences = map[string]string{
	"stripe": `\bpo_[A-Za-z0-9]{4,}\b`,
	"mpesa":  `\b[A-Z][A-Z0-9]{9}\b`,
}

// Source is a provider that pays into the account (Stripe's payouts, M-Pesa
// settlements) and how its credits are recognised: a credit is the source's
// when every pattern set matches its text (the end-to-end id, the
// references, the counterparty, the remittance text and information, joined
// by spaces), case aside.
type Source struct {
	Provider string
	// Account is the provider account whose payouts these are (a Stripe
	// connected account, an M-Pesa paybill); empty is the default one.
	Account string
	// Descriptor matches the text of the source's credits (Stripe's
	// statement descriptor: "STRIPE").
	Descriptor *regexp.Regexp
	// ShortCode is the paybill or till the text of an M-Pesa settlement
	// names.
	ShortCode string
	// Narrative matches the text of an M-Pesa settlement ("MPESA|M-PESA").
	Narrative *regexp.Regexp
	// Reference finds the payout's reference in the text (a Stripe payout
	// id, an M-Pesa receipt); DefaultReferences when nil.
	Reference *regexp.Regexp
	// PayoutDays is how many business days after a charge its payout is
	// made (Stripe); 0 for a source whose charges are not paid out one by
	// one.
	PayoutDays int
}

// Recognises reports whether a credit's text names the source.
func (s Source) Recognises(text string) bool {
	if s.Descriptor == nil && s.Narrative == nil && s.ShortCode == "" {
		return false
	}
	if s.Descriptor != nil && !s.Descriptor.MatchString(text) {
		return false
	}
	if s.Narrative != nil && !s.Narrative.MatchString(text) {
		return false
	}
	return s.ShortCode == "" || strings.Contains(text, s.ShortCode)
}

// References returns the payout references the text carries, in order,
// once each. A reference must hold a digit (an M-Pesa receipt is no word).
func (s Source) References(text string) []string {
	re := s.Reference
	if re == nil {
		re = defaultReference(s.Provider)
	}
	if re == nil {
		return nil
	}
	var out []string
	for _, m := range re.FindAllString(text, -1) {
		if strings.ContainsAny(m, "0123456789") && !contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

var defaultRefs = func() map[string]*regexp.Regexp {
	m := map[string]*regexp.Regexp{}
	for p, re := range DefaultReferences {
		m[p] = regexp.MustCompile(re)
	}
	return m
}()

func defaultReference(provider string) *regexp.Regexp { return defaultRefs[provider] }

// Account is one bank account, read as the provider bank:<Name>: its
// statements, the account and currency they must be of, the zone its days
// are cut in, and the providers that pay into it.
type Account struct {
	// Name is the account's name; its provider is bank:<Name>.
	Name string
	// Number is the IBAN or account number statements must be of, compared
	// without spaces, case aside.
	Number string
	// Currency is the account's currency: a statement in another is
	// refused.
	Currency string
	// Zone is the bank's zone: its days start at midnight there.
	Zone *time.Location
	// Format is FormatCamt053 (camt.053 and camt.054), FormatMT940,
	// FormatBAI2, or the name of a CSV layout (then Layout reads it).
	Format string
	// Layout reads statements of a CSV layout; nil for the bank formats.
	Layout providers.StatementParser
	// ArrivalDays is how many business days after its expected arrival a
	// payout may reach the account (DefaultArrivalDays when 0).
	ArrivalDays int
	// Horizon is how far each way from its window a bank run looks for the
	// other half of a payout or a credit (DefaultHorizon when 0).
	Horizon time.Duration
	// Sources are the providers that pay into the account.
	Sources []Source
	// Clock stamps what statements are read at; time.Now when nil.
	Clock func() time.Time
}

// Provider is the account's provider name, bank:<Name>.
func (a *Account) Provider() string { return ledger.BankProvider(a.Name) }

// Arrival is ArrivalDays, or its default.
func (a *Account) Arrival() int {
	if a.ArrivalDays > 0 {
		return a.ArrivalDays
	}
	return DefaultArrivalDays
}

// HorizonOrDefault is Horizon, or its default.
func (a *Account) HorizonOrDefault() time.Duration {
	if a.Horizon > 0 {
		return a.Horizon
	}
	return DefaultHorizon
}

// Location is Zone, or UTC.
func (a *Account) Location() *time.Location {
	if a.Zone == nil {
		return time.UTC
	}
	return a.Zone
}

// Source returns the account's source of provider, if it has one.
func (a *Account) Source(provider string) (Source, bool) {
	for _, s := range a.Sources {
		if s.Provider == provider {
			return s, true
		}
	}
	return Source{}, false
}

// Recognise says which source a credit's text names ("" when none) and the
// payout references it carries: those of the source it names, else those
// any source's pattern finds.
func (a *Account) Recognise(text string) (provider string, refs []string) {
	for _, s := range a.Sources {
		if s.Recognises(text) {
			return s.Provider, s.References(text)
		}
	}
	for _, s := range a.Sources {
		for _, r := range s.References(text) {
			if !contains(refs, r) {
				refs = append(refs, r)
			}
		}
	}
	return "", refs
}

// SameAccount reports whether an account named in a statement (an IBAN or a
// number, as the bank writes it) is the account: compared without spaces,
// case aside, and a number that ends in the configured one (the bank's code
// before a slash) is the same.
func (a *Account) SameAccount(ids ...string) bool {
	want := normAccount(a.Number)
	for _, id := range ids {
		got := normAccount(id)
		if got == "" {
			continue
		}
		if got == want || strings.HasSuffix(got, "/"+want) {
			return true
		}
	}
	return false
}

func normAccount(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// Validate checks what an account needs before it reads a statement.
func (a *Account) Validate() error {
	switch {
	case a.Name == "":
		return fmt.Errorf("bank account: name is empty")
	case a.Number == "":
		return fmt.Errorf("bank account %s: account is empty", a.Name)
	case a.Currency == "":
		return fmt.Errorf("bank account %s: currency is empty", a.Name)
	case a.Format == "":
		return fmt.Errorf("bank account %s: format is empty", a.Name)
	}
	if a.Layout == nil && !contains(Formats, a.Format) {
		return fmt.Errorf("bank account %s: format %q is not one of %s and no CSV layout reads it", a.Name, a.Format,
			strings.Join(Formats, ", "))
	}
	return nil
}
