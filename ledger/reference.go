package ledger

import (
	"unicode"
	"unicode/utf8"
)

// Customers type references by hand (an M-Pesa paybill's account number
// is typed on the payer's phone), so the same reference arrives as
// "INV1001", " inv 1001 ", "INV-1001" or "inv.1001". Linking by echoed
// reference compares the normal form of both sides: letters and digits
// only, upper-cased (full-width forms read as ASCII); spaces, dashes, dots,
// slashes, underscores and every other separator or symbol removed. The raw
// reference stays on the provider transaction as evidence.
//
// The books store the normal form of every intent's and every provider
// transaction's reference beside it (ref_norm), so that a reconcile can look
// up, among all the intents and transactions of other windows, those that
// name the same reference: the normal form is computed here, in Go, by every
// writer, and never by the database.

// NormalReference returns the normal form of a reference: its letters and
// digits, upper-cased, everything else removed. "" when none is left.
func NormalReference(s string) string { return string(AppendNormalReference(nil, s)) }

// AppendNormalReference appends the normal form of s to dst. ASCII takes a
// fast path without decoding.
func AppendNormalReference(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 'a' && c <= 'z':
				dst = append(dst, c-('a'-'A'))
			case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r >= 0xFF01 && r <= 0xFF5E { // full-width ASCII, as some phone keyboards type it
			dst = AppendNormalReference(dst, string(rune(r-0xFEE0)))
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			dst = utf8.AppendRune(dst, unicode.ToUpper(r))
		}
	}
	return dst
}
