package mpesa

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/reconcilehq/reconcile/ledger"
)

// counterparty renders a payer or payee for the books: the masked MSISDN (or
// hash) and the first name only, "2547****0845 - PETER". id may be a plain,
// masked or hashed MSISDN; the full number never leaves this function.
func counterparty(id, name string) string {
	id = strings.TrimSpace(id)
	first := firstField(name)
	masked := ""
	if isMasked(id) {
		masked = id // as ledger.MaskCustomer would write it, without building it again
	} else if id != "" {
		masked = ledger.MaskCustomer(id)
	}
	switch {
	case masked != "" && first != "":
		return maskDigitRuns(masked + " - " + first)
	case masked != "":
		return maskDigitRuns(masked)
	}
	return maskDigitRuns(first)
}

// isMasked says whether s is a number masked as ledger.MaskCustomer masks
// one, "2547****0845": four digits, four stars, four digits. MaskCustomer
// returns such a string unchanged.
func isMasked(s string) bool {
	if len(s) != 12 {
		return false
	}
	for i := 0; i < 12; i++ {
		c := s[i]
		if i >= 4 && i < 8 {
			if c != '*' {
				return false
			}
		} else if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// firstField is strings.Fields(s)[0], or "" when s has no field, without
// splitting the rest.
func firstField(s string) string {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return s[:i]
	}
	return s
}

var digitRun = regexp.MustCompile(`\d{9,}`)

// maskDigitRuns masks any run of nine or more digits left in a name: a
// phone number written into a name field is masked like any other.
func maskDigitRuns(s string) string {
	if !hasDigitRun(s, 9) {
		return s // the common case, without the regexp
	}
	return digitRun.ReplaceAllStringFunc(s, ledger.MaskCustomer)
}

// hasDigitRun says whether s holds n ASCII digits in a row (what \d matches).
func hasDigitRun(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			if run++; run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// splitParty splits "254705912645 - NICHOLAS JOHN SONGOK" (or "0712****678 -
// JOHN DOE", "600310 - Safaricom333") into the identifier and the name.
func splitParty(s string) (id, name string) {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, " - "); i >= 0 {
		return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+3:])
	}
	if i := strings.IndexByte(s, '-'); i > 0 && looksLikePhone(strings.TrimSpace(s[:i])) {
		return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
	}
	if looksLikePhone(s) {
		return s, ""
	}
	return "", s
}

// looksLikePhone reports whether s is a customer MSISDN (plain, masked with
// stars and spaces, or a 64-hex-digit hash) rather than a business shortcode.
func looksLikePhone(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) == 64 && strings.Trim(strings.ToLower(s), "0123456789abcdef") == "" {
		return true
	}
	n := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9' || r == '*':
			n++
		case r == ' ' || r == '+':
		default:
			return false
		}
	}
	return n >= 9
}

// partyCounterparty renders a "<id> - <name>" party of a result callback or
// statement.
func partyCounterparty(s string) string {
	id, name := splitParty(s)
	if id == "" || !looksLikePhone(id) {
		// A business (shortcode and name) is not personal data, but keep the
		// books uniform: the name's first word only.
		if id != "" {
			return counterparty("", id+" "+name)
		}
		return counterparty("", name)
	}
	return counterparty(id, name)
}

var phoneDigits = regexp.MustCompile(`^(?:\+?254|0)?([17]\d{8})$`)

// normalizePhone turns 0712345678, +254712345678, 254712345678 or 712345678
// into 254712345678, the form STK push wants.
func normalizePhone(s string) (string, error) {
	c := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	m := phoneDigits.FindStringSubmatch(c)
	if m == nil {
		return "", fmt.Errorf("%s is not a Kenyan mobile number (want 2547XXXXXXXX or 2541XXXXXXXX)", ledger.MaskCustomer(s))
	}
	return "254" + m[1], nil
}
