package alerts

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/report"
)

// Slack's Block Kit limits, in characters.
const (
	maxHeader       = 150
	maxSectionText  = 3000
	maxFieldText    = 2000
	maxContextText  = 2000
	maxFallbackText = 3000
	maxBlocks       = 50
	maxFields       = 10
	maxReceipts     = 6
)

var (
	urlPattern    = regexp.MustCompile(`(?i)(?:[a-z][a-z0-9+.\-]*)?://[^\s<>|]*`)
	wwwPattern    = regexp.MustCompile(`(?i)\bwww\.[^\s<>|]+`)
	secretPattern = regexp.MustCompile(`(?i)(?:xox[a-z]|xapp)-[a-z0-9\-]+|(?:sk|rk|pk)_(?:live|test)_[a-z0-9]+|whsec_[a-z0-9]+|bearer\s+[a-z0-9._~+/=\-]+`)
	emailPattern  = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`)
	// Phone numbers written with spaces or dashes: international with a
	// plus, or national with a leading zero (0712 345 678).
	spacedPhonePattern = regexp.MustCompile(`\+\d{1,3}(?:[ \-]\d{2,4}){2,4}|\b0\d{2,3}[ \-]\d{3}[ \-]\d{3,4}\b`)
)

// scrub removes what must never reach Slack from free text: URLs (webhook
// URLs carry their secret in the path), tokens and API keys, e-mail
// addresses and phone numbers (masked as ledger.MaskCustomer does).
func scrub(s string) string { return scrubText(s, false) }

// scrubActor is scrub for the name of a person who acted: an operator's
// e-mail address names them and stays; URLs, tokens and phone numbers go.
func scrubActor(s string) string { return scrubText(s, true) }

func scrubText(s string, keepEmails bool) string {
	if s == "" {
		return ""
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = urlPattern.ReplaceAllString(s, "[link removed]")
	s = wwwPattern.ReplaceAllString(s, "[link removed]")
	s = secretPattern.ReplaceAllString(s, "[redacted]")
	if !keepEmails {
		s = emailPattern.ReplaceAllStringFunc(s, ledger.MaskCustomer)
	}
	s = maskSpacedPhones(s)
	return maskDigitRuns(s)
}

// scrubID keeps an identifier (provider receipt, finding id) as it is unless
// it carries a URL or a secret.
func scrubID(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if urlPattern.MatchString(s) || secretPattern.MatchString(s) {
		return "[redacted]"
	}
	return s
}

// maskSpacedPhones masks phone numbers written in groups. A match right
// after a masked number (or inside a word) is left alone, so masking twice
// changes nothing.
func maskSpacedPhones(s string) string {
	locs := spacedPhonePattern.FindAllStringIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		if loc[0] > 0 && (s[loc[0]-1] == '*' || isWordByte(s[loc[0]-1])) {
			continue
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(ledger.MaskCustomer(s[loc[0]:loc[1]]))
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// maskDigitRuns masks every run of nine or more digits (an optional plus in
// front) that stands alone, i.e. is not part of an identifier such as
// txn_1234567890abc. Shorter runs (amounts, dates, references) are kept.
func maskDigitRuns(s string) string {
	var b strings.Builder
	i := 0
	for i < len(s) {
		c := s[i]
		if !isDigit(c) && !(c == '+' && i+1 < len(s) && isDigit(s[i+1])) {
			b.WriteByte(c)
			i++
			continue
		}
		j := i
		if c == '+' {
			j++
		}
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		run := s[i:j]
		digits := len(strings.TrimPrefix(run, "+"))
		standalone := (i == 0 || !isWordByte(s[i-1])) && (j == len(s) || !isWordByte(s[j]))
		if digits >= 9 && standalone {
			b.WriteString(ledger.MaskCustomer(run))
		} else {
			b.WriteString(run)
		}
		i = j
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordByte(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// maskCounterparty shows a counterparty as finance ops may see it: phone
// numbers, e-mail addresses and identifiers masked, and of a name only the
// first word ("254712340845 - JANE WANJIKU DOE" -> "2547****0845 JANE").
// Counterparties are masked in the ledger already; this masks again in case
// a provider adapter did not.
func maskCounterparty(s string) string {
	s = maskSpacedPhones(strings.ToValidUTF8(s, ""))
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || r == '-' || r == '/' || r == ',' || r == '|' || r == ';' || r == '(' || r == ')'
	})
	var out []string
	named := false
	for _, f := range fields {
		switch {
		case isName(f):
			if !named {
				out = append(out, f)
				named = true
			}
		case strings.Trim(f, ".") == "":
		default:
			// MaskCustomer keeps an e-mail domain as it is: mask long digit
			// runs in what it leaves.
			out = append(out, longDigits.ReplaceAllString(ledger.MaskCustomer(f), "****"))
		}
	}
	return strings.Join(out, " ")
}

var longDigits = regexp.MustCompile(`\d{7,}`)

// isName reports whether f is a word of a person's name: letters only
// (apostrophes and dots allowed inside), at least two of them.
func isName(f string) bool {
	letters := 0
	for _, r := range f {
		switch {
		case unicode.IsLetter(r):
			letters++
		case r == '\'' || r == '.':
		default:
			return false
		}
	}
	return letters >= 2
}

// escape makes text safe inside mrkdwn: no links, mentions (<!channel>) or
// entities can be injected.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// code renders s as inline code in mrkdwn.
func code(s string) string {
	s = strings.NewReplacer("`", "'", "\n", " ").Replace(s)
	if s == "" {
		return "-"
	}
	return "`" + escape(s) + "`"
}

// truncate cuts s to at most n runes, ending in an ellipsis when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// amountText renders an amount as "KES 1,500.00"; no amount is "-".
func amountText(a money.Amount) string { return a.Display() }

var providerNames = map[string]string{
	"mpesa":  "M-Pesa",
	"stripe": "Stripe",
}

// accountName is the name finance ops know one account of a provider by:
// the provider's name, and the account's id (a paybill number) beside it
// when it is not the provider's default account.
func accountName(provider, account string) string {
	if account == "" {
		return providerName(provider)
	}
	return providerName(provider) + " " + scrubID(account)
}

// providerName is the name finance ops know a provider by.
func providerName(p string) string {
	if ledger.IsBankProvider(p) {
		return bankProviderName(p)
	}
	if n, ok := providerNames[p]; ok {
		return n
	}
	return scrubID(p)
}

var kindTitles = map[ledger.Kind]string{
	ledger.KindDuplicateCharge:   "Duplicate charge",
	ledger.KindMissingAtProvider: "Missing at provider",
	ledger.KindUnknownCharge:     "Unknown charge",
	ledger.KindAmountMismatch:    "Amount mismatch",
	ledger.KindCurrencyMismatch:  "Currency mismatch",
	ledger.KindStatusMismatch:    "Status mismatch",
	ledger.KindStuckIntent:       "Stuck intent",
	ledger.KindDisputedCharge:    "Disputed charge",
	ledger.KindUnrecordedRefund:  "Unrecorded refund",
	ledger.KindDuplicateRefund:   "Duplicate refund",
	ledger.KindUnderpaid:         "Underpaid",
	ledger.KindOverpaid:          "Overpaid",
	ledger.KindPartiallyPaid:     "Partially paid",
}

func kindTitle(k ledger.Kind) string {
	if t, ok := kindTitles[k]; ok {
		return t
	}
	return scrubID(string(k))
}

// kindCount renders "2 unknown charges" / "1 duplicate charge".
func kindCount(k ledger.Kind, n int) string {
	t := strings.ToLower(kindTitle(k))
	if p, ok := bankKindPlurals[k]; ok && n != 1 {
		return strconv.Itoa(n) + " " + p
	}
	if n != 1 {
		switch {
		case strings.HasSuffix(t, "mismatch"):
			t += "es"
		case strings.HasSuffix(t, "charge"), strings.HasSuffix(t, "intent"), strings.HasSuffix(t, "refund"):
			t += "s"
		}
	}
	return strconv.Itoa(n) + " " + t
}

func severityTitle(s ledger.Severity) string {
	switch s {
	case ledger.SeverityHigh:
		return "High"
	case ledger.SeverityMedium:
		return "Medium"
	case ledger.SeverityLow:
		return "Low"
	}
	return scrubID(string(s))
}

// timeText renders t in loc with the zone's offset, e.g. "2024-05-01 12:12
// EAT (+03:00)"; zero is "-".
func timeText(t time.Time, loc *time.Location) string { return report.LocalTime(t, loc) }

// windowText renders a window as "2024-05-01 00:00 → 2024-05-02 00:00 EAT
// (+03:00)"; both ends carry their zone when the offset changes inside.
func windowText(from, to time.Time, loc *time.Location) string {
	return report.LocalWindow(from, to, loc)
}

// findingsCommand is the CLI command that lists the provider's findings.
func findingsCommand(cfg Config, provider string) string {
	return strings.ReplaceAll(cfg.FindingsCommand, "{provider}", safeProvider(provider))
}

// findingsLink is a mrkdwn link to the findings page, or "" without one.
func findingsLink(cfg Config, provider string) string {
	if cfg.FindingsURL == "" {
		return ""
	}
	u := cfg.FindingsURL + "?provider=" + safeProvider(provider) + "&status=open"
	return "<" + escape(u) + "|Open findings>"
}

// safeProvider keeps a provider id to the characters a CLI argument or
// query value needs no quoting for.
func safeProvider(p string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == ':' {
			return r
		}
		return -1
	}, strings.ToLower(p))
}

// countText renders n with thousands separators: 1204 -> "1,204".
func countText(n int) string { return money.Group(strconv.Itoa(n)) }
