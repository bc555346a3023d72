package ledger

import (
	"regexp"
	"strings"
)

var (
	emailRE    = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	digitRunRE = regexp.MustCompile(`\+?\d{9,}`)
)

// MaskPayload hides what a raw provider payload says about people, for
// showing it: e-mail addresses and runs of nine or more digits (phone, card
// and account numbers) keep their ends only, as MaskCustomer does.
func MaskPayload(raw []byte) string {
	s := emailRE.ReplaceAllStringFunc(string(raw), MaskCustomer)
	return digitRunRE.ReplaceAllStringFunc(s, func(d string) string {
		d = strings.TrimPrefix(d, "+")
		return d[:4] + strings.Repeat("*", len(d)-8) + d[len(d)-4:]
	})
}
